"""`dialectbias tasks`: every option of every task, with its type, default and description, and the item format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dialectbias.cli._tasks import default_text, type_text
from dialectbias.tasks import get_task, task_names
from dialectbias.tasks.probes.association import AssociationOptions


def run_tasks(*args: str) -> subprocess.CompletedProcess[str]:
    """`dialectbias tasks …` through the real entry point (so the command's registration is tested too)."""
    return subprocess.run([sys.executable, "-c", "from dialectbias.cli import main; main()", "tasks", *args],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"},
                          timeout=60, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def listing() -> str:
    result = run_tasks()
    assert result.returncode == 0, result.stderr
    return result.stdout


def section(listing: str, name: str) -> str:
    """The part of the full listing about one task (tasks start at a line holding only their name)."""
    lines = listing.splitlines()
    start = lines.index(name)
    end = next((i for i in range(start + 1, len(lines)) if lines[i] in task_names()), len(lines))
    return "\n".join(lines[start:end])


@pytest.mark.parametrize("name", task_names())
def test_every_option_field_has_a_description(name: str) -> None:
    options = get_task(name).Options
    missing = [f for f, info in options.model_fields.items() if not (info.description or "").strip()]
    assert not missing, f"{name}: options without description=: {missing}"


@pytest.mark.parametrize("name", task_names())
def test_the_listing_shows_every_field_with_type_default_and_description(listing: str, name: str) -> None:
    options = get_task(name).Options
    assert options.model_fields
    listing = section(listing, name)
    # descriptions are wrapped: compare with whitespace collapsed
    flat = " ".join(listing.split())
    for field, info in options.model_fields.items():
        head = f"{field}: {type_text(info.annotation)}"
        assert f"\n    {head}" in listing, (name, field)
        assert default_text(info) in listing.split(f"\n    {head}", 1)[1].splitlines()[0], (name, field)
        assert " ".join((info.description or "").split()) in flat, (name, field)


@pytest.mark.parametrize("name", task_names())
def test_each_task_has_its_own_summary_and_item_format(listing: str, name: str) -> None:
    cls = get_task(name)
    assert cls.item_format.strip() and cls.__doc__ and "Task" not in cls.__doc__.split()[0]
    flat = " ".join(section(listing, name).split())
    assert " ".join(cls.item_format.split()) in flat


def test_one_task_by_name() -> None:
    result = run_tasks("qa_bias")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("qa_bias\n") and "judge_max_tokens: integer (≥ 1) = 1024" in result.stdout
    assert "association" not in result.stdout.splitlines()[0] and "setting:" not in result.stdout
    # the example item line is kept whole (valid JSON) even at 80 columns
    example = next(line for line in result.stdout.splitlines() if line.strip().startswith("{"))
    assert json.loads(example)["variants"]["standard"] == "…"


def test_an_unknown_task_is_one_clear_error() -> None:
    result = run_tasks("qa_bais")
    assert result.returncode == 1 and "unknown task 'qa_bais'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("field", "expected"), [
    ("setting", ('"naming" | "usage" | "both"', '"naming"')),
    ("languages", ("mapping string → list of string", '{"de": ["bavarian"]}')),
    ("traits", ("list of string | null", "null")),
    ("allow_neutral", ("true/false", "false")),
    ("temperature", ("number", "0.7")),
])
def test_types_and_defaults_read_like_yaml(field: str, expected: tuple[str, str]) -> None:
    info: Any = AssociationOptions.model_fields[field]
    assert (type_text(info.annotation), default_text(info)) == expected


# -- the rest of what a user needs, in --help and in the commands' own output ----------------------


def test_build_questions_says_the_items_need_dialect_variants(cli: Any, tmp_path: Path) -> None:
    help_text = " ".join(cli("build", "questions", "--help").stdout.split())
    assert "only the `standard` variant" in help_text and "dialectbias tasks qa_bias" in help_text
    result = cli("build", "questions", "--out", tmp_path / "items.jsonl", "--per-type", "1")
    assert result.exit_code == 0, result.output
    assert "standard-Bengali questions only: add dialect variants" in " ".join(result.stdout.split())


def test_server_help_documents_the_qa_responder_and_every_fault_field() -> None:
    from dialectbias.testing import FAULT_KINDS, FaultRule

    result = subprocess.run([sys.executable, "-m", "dialectbias.testing.server", "--help"], capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert "--responder dialectbias.testing:qa_responder" in result.stdout
    fields = result.stdout.split("fault spec (--faults)", 1)[1]
    for name in FaultRule.model_fields:
        assert f"\n  {name} " in fields, name
    for kind in FAULT_KINDS:
        assert kind in fields, kind


def test_quickstart_states_its_expected_duration_and_progress_interval(
        cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dialectbias.api
    import dialectbias.providers._hf_models
    import dialectbias.quickstart

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(dialectbias.providers._hf_models, "find_smollm2_gguf", lambda: (tmp_path, "model.gguf"))
    monkeypatch.setattr(dialectbias.api, "run_experiment", interrupted)
    monkeypatch.delenv("DIALECTBIAS_PROGRESS_INTERVAL", raising=False)
    result = cli("quickstart", "--out", tmp_path / "qs")
    text = " ".join(result.stdout.split())
    # 6 samples × 6 traits × 4 dialects = 144 prompts: 20 s + 144 / 1.1 per s = 2.5 min (free cores) …
    # 60 s + 144 / 0.2 per s = 13 min (shared CPU)
    assert "144 prompts" in text and "Expected duration: about 2–13 min" in text
    assert "a line every 10 s when the output is not a terminal" in text and "torch threads: " in text
    assert result.exit_code == 130
    # the --help text quotes the same range for the default sample
    help_text = " ".join(cli("quickstart", "--help").stdout.split())
    assert dialectbias.quickstart.duration_text().removeprefix("about ") in help_text
