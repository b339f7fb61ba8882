"""qa_bias end to end through the CLI against the test server: report, cache, faults, failures."""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
import types
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

import pytest

from store_sql import reorder_keys

DIALECTS = ["chittagong", "sylhet"]


def matrix(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def expected_matrix(judgments: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """model -> {dialect: mean score, avg} plus the dialect_avg row, from exported judgments."""
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    for j in judgments:
        if j["score"] is not None:
            cells[(j["model_id"], j["variant"])].append(j["score"])
    models = sorted({m for m, _ in cells})
    out = {m: {d: mean(cells[(m, d)]) for d in DIALECTS} for m in models}
    for row in out.values():
        row["avg"] = mean(row[d] for d in DIALECTS)
    out["dialect_avg"] = {c: mean(out[m][c] for m in models) for c in [*DIALECTS, "avg"]}
    return out


def assert_matrix_equals(text: str, expected: dict[str, dict[str, float]]) -> None:
    rows = matrix(text)
    models = [m for m in expected if m != "dialect_avg"]
    assert [r["model"] for r in rows] == [*sorted(models, key=lambda m: -expected[m]["avg"]), "dialect_avg"]
    for row in rows:
        for col in [*DIALECTS, "avg"]:
            want = expected[row["model"]][col]
            # the CSV keeps 6 significant digits
            assert float(row[col]) == pytest.approx(want, rel=1e-5), (row["model"], col)


def run(cli: Any, project: Any, expect: int = 0) -> Any:
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == expect, result.output
    return result


def report(cli: Any, project: Any, out: Path) -> str:
    result = cli("report", project.yaml_path, "--out", out)
    assert result.exit_code == 0, result.output
    return (out / "qa_bias_model_by_dialect.csv").read_text(encoding="utf-8")


def export_judgments(cli: Any, qa: Any, project: Any, out: Path) -> list[dict[str, Any]]:
    result = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    return qa.read_jsonl(out / "judgments.jsonl")


def scores(judgments: list[dict[str, Any]]) -> dict[tuple[str, str, str], Any]:
    return {(j["model_id"], j["item_id"], j["variant"]): (j["score"], j["confidence"]) for j in judgments}


def summary(qa: Any, result: Any) -> dict[tuple[str, str], dict[str, str]]:
    return {(row["stage"], row["model"]): row for row in qa.parse_table(result.stdout)}


def test_report_matrix_has_header_order_and_recomputed_means(clean_run: Any) -> None:
    text = clean_run.matrix_csv
    assert text.splitlines()[0] == "model,chittagong,sylhet,avg,dialects_scored"
    judgments = clean_run.judgments()
    assert len(judgments) == 2 * 6 * 2 and all(j["score"] is not None for j in judgments)
    assert_matrix_equals(text, expected_matrix(judgments))


def test_report_rows_are_sorted_by_avg_with_dialect_avg_last(clean_run: Any) -> None:
    rows = matrix(clean_run.matrix_csv)
    assert rows[-1]["model"] == "dialect_avg"
    assert sorted(r["model"] for r in rows[:-1]) == ["model-a", "model-b"]
    avgs = [float(r["avg"]) for r in rows[:-1]]
    assert avgs == sorted(avgs, reverse=True) and avgs[0] != avgs[1]


def test_cached_rerun_makes_no_http_calls(clean_run: Any, qa_server: Any, cli: Any, qa: Any,
                                          tmp_path: Path) -> None:
    counts = (clean_run.report_dir / "qa_bias_counts.csv").read_text(encoding="utf-8")
    qa_server.reset_stats()
    result = run(cli, clean_run.project)
    assert qa_server.stats()["requests_total"] == 0
    rows = summary(qa, result)
    assert {k: (r["requests"], r["already done"], r["calls"]) for k, r in rows.items()} == {
        ("generate", "model-a"): ("18", "18", "0"), ("generate", "model-b"): ("18", "18", "0"),
        ("judge", "judge-1"): ("24", "24", "0")}
    assert report(cli, clean_run.project, tmp_path / "report") == clean_run.matrix_csv
    assert (tmp_path / "report" / "qa_bias_counts.csv").read_text(encoding="utf-8") == counts


def test_transient_faults_are_retried_and_results_match_the_clean_run(
        clean_run: Any, qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    p = qa.PLACES
    qa_server.set_faults([
        {"kind": "slow", "delay_s": 0, "match": "Your answer could not be used"},  # re-asks pass untouched
        {"kind": "429", "per_prompt_first_n": 1, "retry_after": 0.05, "match": qa.gen_match(p[0])},
        {"kind": "500", "per_prompt_first_n": 1, "match": qa.gen_match(p[1])},
        {"kind": "timeout", "per_prompt_first_n": 1, "delay_s": 3.0, "match": qa.gen_match(p[2])},
        {"kind": "truncated_json", "per_prompt_first_n": 1, "match": qa.judge_match(p[3])},
        {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(p[4])},
        {"kind": "empty_content", "per_prompt_first_n": 1, "match": qa.judge_match(p[5])},
    ])
    project = qa_project(qa_server.base_url, model={"timeout_s": 1.0})
    rows = summary(qa, run(cli, project))
    faults = qa_server.stats()["faults"]
    # 6 generation prompts (3 variants x 2 models) per faulted item, 4 judge prompts (2 models x 2 dialects)
    assert faults == {"429": 6, "500": 6, "timeout": 6, "truncated_json": 4, "invalid_json": 4,
                      "empty_content": 4, "slow": 8}
    retried = {k: int(r["retried"]) for k, r in rows.items()}
    assert retried == {("generate", "model-a"): 9, ("generate", "model-b"): 9, ("judge", "judge-1"): 4}
    judge = rows[("judge", "judge-1")]
    assert (judge["failed"], judge["parse failed"], judge["repaired/re-asked"]) == ("0", "0", "0/8")
    assert report(cli, project, tmp_path / "report") == clean_run.matrix_csv
    judgments = export_judgments(cli, qa, project, tmp_path / "export")
    assert sorted(j["parse_status"] for j in judgments) == ["ok"] * 16 + ["reasked"] * 8
    assert scores(judgments) == scores(clean_run.judgments())


def test_retries_are_recorded_per_result(qa_server: Any, qa_project: Any, cli: Any, qa: Any) -> None:
    qa_server.set_faults([{"kind": "500", "per_prompt_first_n": 2, "match": qa.gen_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=2, judge={"max_retries": 0})
    run(cli, project)
    with sqlite3.connect(project.store_path) as db:
        retries = db.execute("SELECT r.item_id, s.retries, count(*) FROM results s JOIN requests r "
                             "USING (request_id) WHERE r.stage='generate' GROUP BY 1, 2").fetchall()
    assert sorted(retries) == [("q01", 2, 6), ("q02", 0, 6)]


def test_persistent_parse_failure_is_unscored_and_counted(
        clean_run: Any, qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "invalid_json", "per_prompt_first_n": 2,
                           "match": qa.judge_match(qa.PLACES[0])}])  # item q01: the original and its re-ask
    project = qa_project(qa_server.base_url)
    rows = summary(qa, run(cli, project))
    judge = rows[("judge", "judge-1")]
    assert (judge["failed"], judge["parse failed"], judge["repaired/re-asked"]) == ("0", "4", "0/4")
    judgments = export_judgments(cli, qa, project, tmp_path / "export")
    failed = [j for j in judgments if j["parse_status"] == "failed"]
    assert {j["item_id"] for j in failed} == {"q01"} and len(failed) == 4
    assert all(j["score"] is None and j["confidence"] is None for j in failed)  # never 0
    assert all("after re-ask" in j["reason"] and j["needs_review"] == 1 for j in failed)
    # the matrix leaves them out: it equals the clean run's matrix without item q01
    clean_without_q01 = [j for j in clean_run.judgments() if j["item_id"] != "q01"]
    assert_matrix_equals(report(cli, project, tmp_path / "report"), expected_matrix(clean_without_q01))
    counts = {r["model"]: r for r in csv.DictReader((tmp_path / "report" / "qa_bias_counts.csv").open())}
    assert {m: (r["scored"], r["unscored (parse failed)"]) for m, r in counts.items()} == {
        "model-a": ("10", "2"), "model-b": ("10", "2")}
    status = cli("status", project.yaml_path)
    assert "unscored (parse failed): 4" in status.stdout


def test_request_failing_after_retries_exits_3_and_resume_retries_only_it(
        clean_run: Any, qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    item = qa.qa_item(0)
    prompt = qa.answer_prompt(item["variants"]["chittagong"], "chittagong")
    qa_server.set_faults([{"kind": "500", "match": f"model-a\n{prompt}"}])  # every attempt, one request
    project = qa_project(qa_server.base_url, model={"max_retries": 1})
    result = run(cli, project, expect=3)
    assert "1 request(s) failed after retries" in result.stdout
    rows = summary(qa, result)
    assert rows[("generate", "model-a")]["failed"] == "1" and rows[("judge", "judge-1")]["skipped"] == "1"
    assert qa_server.stats()["faults"] == {"500": 2}  # the first attempt and its one retry
    with sqlite3.connect(project.store_path) as db:
        failed = db.execute("SELECT r.model_id, r.item_id, r.variant, s.retries, s.error FROM results s "
                            "JOIN requests r USING (request_id) WHERE s.status != 'ok'").fetchall()
        counts = db.execute("SELECT r.stage, count(*) FROM results s JOIN requests r USING (request_id) "
                            "WHERE s.status = 'ok' GROUP BY 1 ORDER BY 1").fetchall()
    ((model, item_id, variant, retries, error),) = failed
    assert (model, item_id, variant, retries) == ("model-a", "q01", "chittagong", 1)
    assert "HTTP 500" in error and "model-a" in error
    assert counts == [("generate", 35), ("judge", 23)]

    qa_server.set_faults(None)
    qa_server.reset_stats()
    run(cli, project)
    assert qa_server.stats()["chat_by_model"] == {"model-a": 1, "judge-model": 1}
    assert report(cli, project, tmp_path / "report") == clean_run.matrix_csv
    assert scores(export_judgments(cli, qa, project, tmp_path / "export")) == scores(clean_run.judgments())


def test_report_does_not_depend_on_the_order_judgments_were_stored(
        clean_run: Any, cli: Any, tmp_path: Path) -> None:
    """Judgments land in completion order; equal runs must still give byte-identical tables."""
    copy = tmp_path / "copy"
    shutil.copytree(clean_run.project.dir, copy)
    project = types.SimpleNamespace(yaml_path=copy / clean_run.project.yaml_path.name)
    texts = set()
    # these orders gave different last digits before the report sorted its rows
    for i, order in enumerate(["request_id", "request_id DESC", "item_id DESC"]):
        with sqlite3.connect(copy / clean_run.project.store_path.name) as db:  # the same rows, another order
            reorder_keys(db, order)
        texts.add(report(cli, project, tmp_path / f"report{i}"))
    assert len(texts) == 1
