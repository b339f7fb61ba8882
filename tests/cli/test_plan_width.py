"""`dialectbias plan` fits 80 columns: its notes on how each model's numbers were estimated wrap, indented
(issue 19.13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

from rich.console import Console
from typer.testing import CliRunner

from dialectbias.cli import _plan
from dialectbias.cli._app import app


def test_plan_notes_wrap_at_80_columns(qa: Any, qa_server: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    console = Console(width=80, record=True, color_system=None)
    with mock.patch.object(_plan, "console", console):
        result = CliRunner().invoke(app, ["plan", str(project.yaml_path)])
    assert result.exit_code == 0, result.output
    lines = console.export_text().splitlines()
    assert lines and [line for line in lines if len(line) > 80] == []
    notes = [i for i, line in enumerate(lines) if line.startswith("  model-a: tokens in by ")]
    assert len(notes) == 1
    note = lines[notes[0]]
    following = lines[notes[0] + 1]
    assert following.startswith("    ") and not following.startswith("     ")  # a hanging indent
    assert "seconds: assumed 50 tokens/s" in " ".join(" ".join(lines[notes[0]:notes[0] + 3]).split()), note
    stats = qa_server.stats()  # a plan sends nothing to the models: it only asks the server GET /v1/models
    assert stats["chat_requests"] == 0 and set(stats["by_path"]) == {"/v1/models"}
