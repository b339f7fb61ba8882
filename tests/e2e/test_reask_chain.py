"""A judge answer that fails validation is re-asked once; the re-ask is a request of its own and the
judgment points at the output it was parsed from, so `export` shows the whole chain (issue 6.7)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from dialectbias.judges import RlaifJudgment, parse_structured

REASK_TEXT = "Your answer could not be used"
PASS_REASKS = {"kind": "slow", "delay_s": 0, "match": REASK_TEXT}  # first matching rule: re-asks pass untouched


def run_and_export(cli: Any, qa: Any, project: Any, out: Path, expect: int = 0) -> dict[str, list[dict]]:
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == expect, result.output
    exported = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert exported.exit_code == 0, exported.output
    assert f"       4 reasks → {out / 'reasks.jsonl'}" in exported.stdout
    return {name: qa.read_jsonl(out / f"{name}.jsonl") for name in ("generations", "judgments", "reasks")}


def test_an_invalid_first_answer_and_its_reask_are_both_exported(qa_server: Any, qa_project: Any, cli: Any,
                                                                  qa: Any, tmp_path: Path) -> None:
    qa_server.set_faults([PASS_REASKS, {"kind": "invalid_json", "per_prompt_first_n": 1,
                                        "match": qa.judge_match(qa.PLACES[0])}])  # q01: 2 models × 2 dialects
    project = qa_project(qa_server.base_url, n_items=2)
    tables = run_and_export(cli, qa, project, tmp_path / "export")
    judgments = {j["request_id"]: j for j in tables["judgments"]}
    reasks = tables["reasks"]
    assert len(judgments) == 8 and len(reasks) == 4
    for reask in reasks:
        first = judgments[reask["reask_of"]]
        assert (reask["stage"], reask["model"], reask["item_id"], reask["variant"]) == \
            ("judge:reask", "judge-1", "q01", first["variant"])
        assert json.loads(reask["refs"]) == [first["request_id"]]
        assert json.loads(reask["meta"]) == {"model_id": first["model_id"], "reask_of": first["request_id"]}
        # the judgment was parsed from the re-ask's output, and says so
        assert first["parse_status"] == "reasked"
        assert first["source_request_id"] == reask["request_id"]
        assert first["raw_output"] == reask["output"] and reask["status"] == "ok"
        assert parse_structured(first["raw_output"], RlaifJudgment).status == "ok"
        # the failed first answer is kept: as the first request's result and inside the re-ask prompt
        assert parse_structured(reask["first_output"], RlaifJudgment).status == "failed"
        prompt = json.loads(reask["rendered_prompt"])
        assert prompt[-2] == {"role": "assistant", "content": reask["first_output"]}
        assert REASK_TEXT in prompt[-1]["content"]
    untouched = [j for j in judgments.values() if j["item_id"] == "q02"]
    assert all(j["parse_status"] == "ok" and j["source_request_id"] == j["request_id"] for j in untouched)


def test_reask_rows_are_written_with_the_first_result_and_never_pending_or_resent(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    qa_server.set_faults([PASS_REASKS, {"kind": "truncated_json", "per_prompt_first_n": 1,
                                        "match": qa.judge_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=2)
    first = cli("run", project.yaml_path, "--no-progress")
    assert first.exit_code == 0, first.output
    rows = {(r["stage"], r["model"]): r for r in qa.parse_table(first.stdout)}
    assert set(rows) == {("generate", "model-a"), ("generate", "model-b"), ("judge", "judge-1")}
    judge = rows[("judge", "judge-1")]
    assert (judge["requests"], judge["calls"]) == ("8", "12")  # the 4 re-asks are calls, not planned requests
    with sqlite3.connect(project.store_path) as db:
        chain = db.execute(
            "SELECT count(*), sum(s.status = 'ok'), sum(j.source_request_id = q.request_id) FROM requests q "
            "JOIN results s USING (request_id) JOIN judgments j ON j.request_id = json_extract(q.refs, '$[0]') "
            "WHERE q.stage = 'judge:reask'").fetchone()
    assert chain == (4, 4, 4)
    qa_server.reset_stats()
    again = cli("run", project.yaml_path, "--no-progress")
    assert again.exit_code == 0, again.output
    assert qa_server.stats()["requests_total"] == 0  # nothing pending, the re-asks are not sent again
    assert {(r["stage"], r["model"]): (r["requests"], r["already done"]) for r in qa.parse_table(again.stdout)} \
        == {k: (r["requests"], r["requests"]) for k, r in rows.items()}


def test_a_failed_reask_call_is_stored_and_the_judgment_keeps_the_first_answer(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "500", "match": REASK_TEXT},
                          {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=2, judge={"max_retries": 0})
    tables = run_and_export(cli, qa, project, tmp_path / "export")
    judgments = {j["request_id"]: j for j in tables["judgments"]}
    for reask in tables["reasks"]:
        first = judgments[reask["reask_of"]]
        assert reask["status"] == "failed" and "HTTP 500" in reask["error"]
        assert first["parse_status"] == "failed" and first["score"] is None
        assert "re-ask failed" in first["reason"]
        assert first["source_request_id"] == first["request_id"]  # parsed (and failed) from its own output
        assert first["raw_output"] == reask["first_output"]


def test_a_failed_reask_call_is_noted_in_the_run_summary(qa_server: Any, qa_project: Any, cli: Any,
                                                         qa: Any) -> None:
    qa_server.set_faults([{"kind": "500", "match": REASK_TEXT},
                          {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=2, judge={"max_retries": 0})
    result = cli("run", project.yaml_path, "--no-progress")
    assert "re-ask failed:" in result.stdout and "HTTP 500" in result.stdout
