"""Every departure a task or the training recipe declares (`PAPER` on its options class, issue 21 item 9) has
its row in docs/departures.md naming the option with the value that restores the paper: a departure added in
code without its documented row, or a row whose paper value drifted from the code, fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialectbias.config import declared_departures
from dialectbias.tasks import get_task, task_names
from dialectbias.train._config import TranslatorTrainConfig

DOC = Path(__file__).resolve().parents[2] / "docs" / "departures.md"


def _shown(value: object) -> str:
    """How the doc writes a paper value: YAML scalars (true/false, numbers, bare words)."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _declared() -> list[tuple[str, str, object]]:
    found = [(name, key, dep.paper) for name in task_names()
             for key, dep in declared_departures(get_task(name).Options).items()]
    found += [("train-translator", key, dep.paper) for key, dep in declared_departures(TranslatorTrainConfig).items()]
    return found


def test_some_departures_are_declared() -> None:
    tasks = {name for name, _, _ in _declared()}
    assert {"qa_bias", "association", "decision", "translate", "translation_quality", "caption", "csu",
            "train-translator"} <= tasks


@pytest.mark.parametrize(("owner", "key", "paper"), _declared(), ids=lambda v: str(v))
def test_each_declared_departure_has_its_row(owner: str, key: str, paper: object) -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert f"`{key}: {_shown(paper)}" in doc, f"{owner}: options.{key} (paper value {paper!r}) has no row"
