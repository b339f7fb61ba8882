""""parse failed" and "invalid values" counted apart (issue 24 item 6): a judge answer that is JSON of the
rubric's shape with values out of range (llama.cpp's grammar enforces keys and types, not ranges) is not a
parse failure. Hand-made case: 3 items × 2 dialects × 2 models = 12 judge requests; q01's 4 answer out of
range (first ask and re-ask), q02's 4 answer non-JSON, q03's 4 are fine."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from dialectbias.judges import RlaifJudgment, parse_structured


def test_parse_failed_and_invalid_values_are_counted_apart_everywhere(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "out_of_range", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])},
                          {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[1])}])
    project = qa_project(qa_server.base_url, n_items=3)
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 0, ran.output
    judge = {(r["stage"], r["model"]): r for r in qa.parse_table(ran.stdout)}[("judge", "judge-1")]
    assert (judge["parse failed"], judge["invalid values"], judge["repaired/re-asked"]) == ("4", "4", "0/8")
    assert "judge judge-1: 12 judgments · 8 unscored (4 parse failed, 4 invalid values) · " in ran.stdout
    assert ran.output.count("`out_of_range: clip` in the rubric clips numbers to their bounds") == 1  # what to do

    status = cli("status", project.yaml_path).stdout
    assert "unscored (parse failed): 4 · unscored (invalid values): 4 · " in status
    assert "unscored 8 · of them invalid values 4" in status

    out = tmp_path / "export"
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", out).exit_code == 0
    unscored = {j["item_id"]: j for j in qa.read_jsonl(out / "judgments.jsonl") if j["score"] is None}
    assert sorted(unscored) == ["q01", "q02"]
    invalid = [j for j in qa.read_jsonl(out / "judgments.jsonl") if j["item_id"] == "q01"]
    assert len(invalid) == 4 and all(j["parse_status"] == "failed" for j in invalid)  # unscored, as before
    assert all(j["reason"].startswith("invalid values: ") and "less than or equal" in j["reason"] for j in invalid)
    assert not unscored["q02"]["reason"].startswith("invalid values: ")

    report = cli("report", project.yaml_path, "--out", tmp_path / "report")
    assert report.exit_code == 0, report.output
    counts = {r["model"]: r for r in csv.DictReader((tmp_path / "report" / "qa_bias_counts.csv").open())}
    assert {m: (r["judgments"], r["scored"], r["unscored (parse failed)"], r["unscored (invalid values)"])
            for m, r in counts.items()} == {"model-a": ("6", "2", "2", "2"), "model-b": ("6", "2", "2", "2")}


def test_the_kind_of_failure_is_read_from_the_answer() -> None:
    good = ('{"chain_of_thought_reasoning": "fine", "script_valid": true, "refusal": false, '
            '"dialect_comprehension": 4, "factual_correctness": 4, "content_completeness": 4, '
            '"response_clarity": 4, "appropriate_length": 4, "confidence": 4}')
    assert parse_structured(good, RlaifJudgment).status == "ok"
    huge = good.replace('"dialect_comprehension": 4', '"dialect_comprehension": 1023984765')
    wrong_type = good.replace('"factual_correctness": 4', '"factual_correctness": "four"')
    missing = good.replace('"factual_correctness": 4, ', "")
    fenced = f"Here you go:\n```json\n{huge}\n```"
    cases = {huge: "values", wrong_type: "values", fenced: "values", missing: "parse", "not json": "parse",
             "[1, 2]": "parse", "": "parse", good[:40]: "parse"}
    for text, kind in cases.items():
        parsed = parse_structured(text, RlaifJudgment)
        assert (parsed.status, parsed.failure) == ("failed", kind), text
    assert parse_structured(huge, RlaifJudgment).error == \
        "dialect_comprehension: Input should be less than or equal to 5"


def test_answers_cut_at_max_tokens_are_told_to_raise_it(qa_server: Any, qa_project: Any, cli: Any, qa: Any) -> None:
    """A judge whose JSON never closed because the answer hit `max_tokens` (finish reason "length", e.g. a
    small judge rambling in JSON mode on vLLM, issue 24) gets one note saying which limit to raise."""
    qa_server.set_faults([{"kind": "length", "match": qa.judge_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=2)
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 0, ran.output
    judge = {(r["stage"], r["model"]): r for r in qa.parse_table(ran.stdout)}[("judge", "judge-1")]
    assert judge["parse failed"] == "4", ran.output
    assert ran.output.count("answers cut at max_tokens before their JSON closed") == 1, ran.output
    assert "`judge_max_tokens`" in ran.output
    qa_server.set_faults(None)
    clean = qa_project(qa_server.base_url, n_items=2)
    assert "cut at max_tokens" not in cli("run", clean.yaml_path, "--no-progress").output
