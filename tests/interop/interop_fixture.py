"""The experiment the fixture logs under tests/interop/fixtures/ were made on (make_fixture_logs.py): qa_bias on
conftest's first three items, models model-a and model-b, one primary judge. `qa` is the `qa` fixture
(tests/conftest.py's helpers: a module named conftest is never imported by name, since another folder's
conftest may hold that name in a full run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_experiment(qa: Any, directory: Path, base_url: str = "http://127.0.0.1:9/v1", **options: object) -> Path:
    """Write the experiment into `directory`; returns its YAML path."""
    return qa.make_project(directory, base_url, n_items=3, **options).yaml_path  # type: ignore[no-any-return]
