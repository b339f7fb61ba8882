"""The round trip with the real packages (the `interop` extra; CI's interop step runs this with
DIALECTBIAS_REQUIRE_INTEROP=1 in .venv-interop): export a qa_bias study's prompts, run inspect_ai and
lm-evaluation-harness on them against the test server (127.0.0.1 only, dummy keys, no tokenizer download),
import their logs, judge them with `dialectbias run` (no generation is sent again) and report. The answers the
harnesses got are the very answers `dialectbias run` gets for the same models: the prompts are the run's."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from interop_fixture import fixture_experiment

INTEROP_SKIP = ("inspect_ai and lm_eval are not installed (the `interop` extra: pip install 'dialectbias[interop]'; "
                "CI installs it in .venv-interop)")


@pytest.fixture(autouse=True)
def need_interop() -> None:
    """Skip without the packages, or fail where they must be there (DIALECTBIAS_REQUIRE_INTEROP=1)."""
    if all(importlib.util.find_spec(m) is not None for m in ("inspect_ai", "lm_eval", "openai")):
        return
    if os.environ.get("DIALECTBIAS_REQUIRE_INTEROP"):
        pytest.fail(f"DIALECTBIAS_REQUIRE_INTEROP is set but {INTEROP_SKIP}")
    pytest.skip(INTEROP_SKIP)


def generations(store: Path) -> dict[tuple[str, str, str], str]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT q.model_id, q.item_id, q.variant, r.output FROM requests q JOIN results r "
                          "USING (request_id) WHERE q.stage = 'generate' AND r.status = 'ok'").fetchall()
    return {(m, i, v): o for m, i, v, o in rows}


def test_inspect_and_lm_eval_answers_are_imported_judged_and_reported(cli: Any, qa_server: Any,
                                                                     tmp_path: Path) -> None:
    from interop_harness import run_inspect, run_lm_eval

    exp = fixture_experiment(tmp_path / "exp", qa_server.base_url)
    assert cli("export", exp, "--inspect-dataset", tmp_path / "ds.jsonl", "--lm-eval-task", tmp_path / "lm"
               ).exit_code == 0
    log = run_inspect(tmp_path / "ds.jsonl", qa_server.base_url, "model-a", tmp_path / "logs")
    samples = run_lm_eval(tmp_path / "lm", "dialectbias_bnqa", qa_server.base_url, "model-b", tmp_path / "lm_out")
    result = cli("import-generations", exp, log, "--from", "inspect", "--model", "model-a")
    assert result.exit_code == 0 and "9 sample(s): 9 imported" in result.stdout, result.output
    result = cli("import-generations", exp, samples, "--from", "lm-eval", "--model", "model-b")
    assert result.exit_code == 0 and "9 sample(s): 9 imported" in result.stdout, result.output
    qa_server.reset_stats()
    run = cli("run", exp, "--no-progress")
    assert run.exit_code == 0, run.output
    assert qa_server.stats()["chat_by_model"] == {"judge-model": 12}  # no generation is sent again
    report = cli("report", exp, "--out", tmp_path / "report")
    assert report.exit_code == 0, report.output
    matrix = (tmp_path / "report" / "qa_bias_model_by_dialect.csv").read_text(encoding="utf-8")
    assert "model-a" in matrix and "model-b" in matrix
    # the same study run by dialectbias alone gets exactly the answers the harnesses got
    alone = fixture_experiment(tmp_path / "alone", qa_server.base_url)
    assert cli("run", alone, "--no-progress").exit_code == 0
    imported = generations(tmp_path / "exp" / "bnqa.sqlite")
    assert len(imported) == 18 and imported == generations(tmp_path / "alone" / "bnqa.sqlite")


def test_a_reimported_log_of_a_run_study_changes_nothing(cli: Any, qa_server: Any, tmp_path: Path) -> None:
    """Answers `dialectbias run` stored first: inspect's answers to the exported prompts are the same, so the
    import finds every one already stored."""
    from interop_harness import run_inspect

    exp = fixture_experiment(tmp_path / "exp", qa_server.base_url)
    assert cli("run", exp, "--no-progress").exit_code == 0
    assert cli("export", exp, "--inspect-dataset", tmp_path / "ds.jsonl").exit_code == 0
    log = run_inspect(tmp_path / "ds.jsonl", qa_server.base_url, "model-b", tmp_path / "logs", log_format="json")
    result = cli("import-generations", exp, log, "--from", "inspect", "--model", "model-b")
    assert result.exit_code == 0, result.output
    assert "9 sample(s): 0 imported, 9 unchanged" in result.stdout
