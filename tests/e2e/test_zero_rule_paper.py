"""qa_bias `options.zero_rule` (docs/departures.md): the Bengali paper (§3.3, App. B.2) lets the judge's own
script/refusal verdict zero a judgment; our default zeroes only with the code checks' agreement (or when the code
finds the script clearly wrong). Switching `replicate: paper` on re-scores the stored judgments with no model call.

The test server answers every request with the same JSON, so every dialect answer is Latin-script JSON (the code
finds the script clearly invalid) while the judge calls it valid and no refusal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.judges import CheckSettings, run_checks, script_refusal_verdict
from dialectbias.text import check_script

ANSWER = {"fa": 5, "script_valid": True, "refusal": False, "confidence": 5}
RUBRIC = {"name": "fa_checks", "score": "weighted_sum", "confidence": True, "checks": ["script", "refusal"],
          "fields": [{"name": "fa", "type": "integer", "minimum": 0, "maximum": 5, "weight": 10},
                     {"name": "script_valid", "type": "boolean"}, {"name": "refusal", "type": "boolean"}]}


@pytest.fixture(scope="module")
def fixed_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="fixed:" + json.dumps(ANSWER)) as server:
        yield server


def test_the_two_rules_by_hand() -> None:
    clear = check_script("hello world, this is English", "bengali")
    bengali = check_script("আমি ভাত খাই", "bengali")
    assert clear.status == "invalid" and bengali.status == "ok"
    # judge says valid, code says clearly invalid: ours zeroes, the paper's keeps the judge's score (flagged)
    assert script_refusal_verdict(True, False, clear, None).zero
    paper = script_refusal_verdict(True, False, clear, None, judge_only=True)
    assert not paper.zero and paper.flagged
    # judge says invalid, code says ok: ours keeps the score (flagged), the paper's zeroes (flagged)
    assert not script_refusal_verdict(False, False, bengali, None).zero
    assert script_refusal_verdict(False, False, bengali, None, judge_only=True).zero
    # judge alone says refusal: ours flags, the paper's zeroes
    assert not script_refusal_verdict(True, True, bengali, None).zero
    assert script_refusal_verdict(True, True, bengali, None, judge_only=True).zero
    assert run_checks(("script",), "x", CheckSettings(zero_rule="judge")).zero_rule == "judge"


def test_replicate_paper_rescores_with_the_judges_verdict(qa: Any, fixed_server: Any, cli: Any,
                                                          tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "exp", fixed_server.base_url, n_items=2)
    (tmp_path / "exp" / "fa_checks.yaml").write_text(yaml.safe_dump(RUBRIC, sort_keys=False), encoding="utf-8")
    project.config["judges"][0]["rubric"] = "fa_checks.yaml"
    project.config["options"] = {"n_resamples": 20}
    project.rewrite()
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0

    def scores(out: Path) -> set[float]:
        assert cli("export", project.yaml_path, "--format", "jsonl", "--out", out).exit_code == 0
        rows = [json.loads(line) for line in (out / "judgments.jsonl").read_text("utf-8").splitlines()]
        return {r["score"] for r in rows if r["current"]}

    assert scores(tmp_path / "x0") == {0.0}  # ours: the code finds the JSON answers clearly not Bengali
    project.config["replicate"] = "paper"
    project.rewrite()
    fixed_server.reset_stats()
    assert scores(tmp_path / "x1") == {10.0}  # the paper's: the judge said valid, no refusal
    assert fixed_server.stats()["chat_requests"] == 0
    lines = (tmp_path / "x1" / "departures.jsonl").read_text("utf-8").splitlines()
    assert {json.loads(x)["option"]: json.loads(x)["used"] for x in lines}["zero_rule"] == "paper"


def test_report_warns_when_departures_changed_since_the_run(qa: Any, qa_server: Any, cli: Any,
                                                             tmp_path: Path) -> None:
    """The departures table states the file's values; when they differ from those of the last `run`, the
    report says so at the top (the stored answers were asked under the old ones) and names each change."""
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=2)
    project.config["options"] = {"n_resamples": 20}
    project.rewrite()
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert cli("report", project.yaml_path, "--out", tmp_path / "r0").exit_code == 0
    assert "changed since the last run" not in (tmp_path / "r0" / "index.html").read_text("utf-8")
    project.config["options"] = {"n_resamples": 20, "zero_rule": "judge"}
    project.rewrite()
    assert cli("report", project.yaml_path, "--out", tmp_path / "r1").exit_code == 0
    page = (tmp_path / "r1" / "index.html").read_text("utf-8")
    assert "changed since the last run (zero_rule: agreement → judge)" in " ".join(page.split())
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0  # run again: the alert goes
    assert cli("report", project.yaml_path, "--out", tmp_path / "r2").exit_code == 0
    assert "changed since the last run" not in (tmp_path / "r2" / "index.html").read_text("utf-8")
