"""The experiment the fixture logs under tests/interop/fixtures/ were made on (make_fixture_logs.py): qa_bias on
conftest's first three items, models model-a and model-b, one primary judge."""

from __future__ import annotations

from pathlib import Path

import conftest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_experiment(directory: Path, base_url: str = "http://127.0.0.1:9/v1", **options: object) -> Path:
    """Write the experiment into `directory`; returns its YAML path."""
    return conftest.make_project(directory, base_url, n_items=3, **options).yaml_path  # type: ignore[arg-type]
