"""The run summary and `status` read at 80 columns (issue 7.1): no label split over lines, no line wider
than the terminal, with realistic numbers (tokens in the millions, cost)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from rich.console import Console

from dialectbias.cli import _commands
from dialectbias.run import RunSummary
from dialectbias.run._summary import StageStats

SUMMARY_LABELS = ("requests", "already done", "calls", "failed", "cached", "retried", "skipped", "parse failed",
                  "invalid values", "repaired/re-asked", "tokens in", "tokens out", "cost")
STATUS_LABELS = ("requests", "done", "failed", "pending", "superseded", "cache hits", "tokens in", "tokens out",
                 "cost", "judgments:", "unscored (parse failed):", "unscored (invalid values):",
                 "needs review:", "reviewed:", "flagged:",
                 "superseded:")


def realistic_summary() -> RunSummary:
    busy = {"total": 114_000, "already_done": 38_000, "calls": 75_812, "cached": 188, "retries": 1_204,
            "failed": 3, "skipped": 0, "tokens_in": 12_345_678, "tokens_out": 48_765_432, "cost": 1_234.5678}
    return RunSummary(experiment="bn-qa-paper-scale", store="/data/studies/bn-qa-paper-scale.sqlite", seconds=5432.1,
                      stages=[StageStats(stage="generate", model_id="qwen3-8b-instruct", **busy),
                              StageStats(stage="generate", model_id="llama-3.1-8b", total=114_000,
                                         already_done=114_000),
                              StageStats(stage="judge", model_id="gemini-2.5-flash", total=205_200, calls=205_200,
                                         parse_failed=17, invalid_values=5, repaired=40, reasked=112, skipped=9,
                                         tokens_in=184_680_000, tokens_out=61_560_000, cost=92.34)])


def render(fn: Any, *args: Any, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    with mock.patch.object(_commands, "console", console):
        fn(*args)
    return console.export_text().splitlines()


def assert_folded(lines: list[str], labels: tuple[str, ...], width: int) -> None:
    assert lines and all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    # the stage blocks and the judgments line are label-value pairs; the per-judge lines after them are not
    end = next((i for i, line in enumerate(lines) if line.startswith("judge ")), len(lines))
    pairs = [p for line in lines[:end] if line.startswith(("  ", "judgments:")) for p in line.strip().split(" · ")]
    for pair in pairs:  # every pair is whole: a known label followed by its value
        label, _, value = pair.rpartition(" ")
        assert label in labels and value[0].isdigit(), pair


@pytest.mark.parametrize("width", [80, 120])
def test_run_summary_fits_the_width_with_whole_labels(width: int) -> None:
    lines = render(_commands.print_summary, realistic_summary(), width=width)
    assert_folded(lines, SUMMARY_LABELS, width)
    text = "\n".join(lines)
    assert "tokens out 48,765,432" in text and "cost 1,234.5678" in text and "repaired/re-asked 40/112" in text
    assert "parse failed 17 · invalid values 5" in " ".join(text.split())


def test_run_summary_drops_zero_only_counts() -> None:
    lines = render(_commands.print_summary, realistic_summary())
    i = lines.index("generate · llama-3.1-8b")
    assert lines[i + 1] == "  requests 114,000 · already done 114,000 · calls 0 · failed 0"


def test_status_fits_80_columns_with_millions_of_tokens(clean_run: Any, tmp_path: Path) -> None:
    store = tmp_path / "bnqa.sqlite"
    with sqlite3.connect(clean_run.project.store_path) as src, sqlite3.connect(store) as dst:
        src.backup(dst)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE results SET tokens_in = tokens_in * 100003, tokens_out = tokens_out * 100003")
    project = clean_run.project
    config = dict(project.config, models=[dict(m, price_in_per_mtok=2.5, price_out_per_mtok=10.0)
                                          for m in project.config["models"]])
    yaml_path = tmp_path / "bnqa.yaml"
    import yaml

    (tmp_path / "items.jsonl").write_bytes((project.dir / "items.jsonl").read_bytes())
    yaml_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    lines = render(_commands.status, yaml_path)
    assert_folded(lines, STATUS_LABELS, 80)
    assert any("tokens in" in line and "," in line.split("tokens in ")[1].split(" ")[0] for line in lines)
    assert any(line.startswith("  ") and "cost " in line for line in lines)
