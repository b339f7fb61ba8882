"""`dialectbias status` and `dialectbias export` on a finished qa_bias run."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

GENERATION_FIELDS = {"request_id", "current", "model", "item_id", "variant", "prompt_template", "prompt_hash",
                     "rendered_prompt",
                     "params", "status", "output", "finish_reason", "tokens_in", "tokens_out", "latency_s",
                     "cache_hit", "retries", "error", "completed_at"}
JUDGMENT_FIELDS = {"request_id", "judge_id", "model_id", "item_id", "variant", "rubric", "raw_output",
                   "parsed",
                   "score", "confidence", "checks", "flags", "clipped", "scoring",
                   "parse_status", "needs_review", "flagged", "reason", "source_request_id", "current",
                   "generation_ids", "prompt_template",
                   "prompt_hash", "tokens_in", "tokens_out", "latency_s", "cache_hit", "completed_at"}
ANNOTATION_FIELDS = {"annotation_id", "target_id", "annotator", "kind", "value", "comment", "created_at",
                     "scoring"}
FIELDS = {"generations": GENERATION_FIELDS, "judgments": JUDGMENT_FIELDS, "annotations": ANNOTATION_FIELDS}


def read(path: Path, fmt: str) -> tuple[set[str], list[dict[str, Any]]]:
    if fmt == "csv":
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            return set(reader.fieldnames or []), list(reader)
    if fmt == "jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return set().union(*(set(r) for r in rows)) if rows else set(), rows
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return set(table.column_names), table.to_pylist()


def test_status_shows_counts_per_stage_and_model(clean_run: Any, cli: Any, qa: Any) -> None:
    result = cli("status", clean_run.project.yaml_path)
    assert result.exit_code == 0, result.output
    rows = {(r["stage"], r["model"]): (r["requests"], r["done"], r["failed"], r["pending"], r["superseded"])
            for r in qa.parse_table(result.stdout)}
    assert rows == {("judge", "judge-1"): ("24", "24", "0", "0", "0"),
                    ("generate", "model-a"): ("18", "18", "0", "0", "0"),
                    ("generate", "model-b"): ("18", "18", "0", "0", "0")}
    assert "judgments: 24 · unscored (parse failed): 0 · needs review: " in result.stdout
    assert "not compiled" not in result.stdout and "outdated" not in result.stdout


def test_status_counts_failed_requests(qa_server: Any, qa_project: Any, cli: Any, qa: Any) -> None:
    item = qa.qa_item(1)
    prompt = qa.answer_prompt(item["variants"]["sylhet"], "sylhet")
    qa_server.set_faults([{"kind": "500", "match": f"model-b\n{prompt}"}])
    project = qa_project(qa_server.base_url, n_items=2, model={"max_retries": 0})
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 3
    rows = {(r["stage"], r["model"]): (r["requests"], r["done"], r["failed"], r["pending"])
            for r in qa.parse_table(cli("status", project.yaml_path).stdout)}
    assert rows == {("judge", "judge-1"): ("7", "7", "0", "0"), ("generate", "model-a"): ("6", "6", "0", "0"),
                    ("generate", "model-b"): ("6", "5", "1", "0")}


def test_status_before_any_run_is_a_clear_error(qa_project: Any, cli: Any) -> None:
    project = qa_project("http://127.0.0.1:1/v1")
    result = cli("status", project.yaml_path)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and "no run store yet" in result.stderr


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_writes_every_table_with_every_field(clean_run: Any, cli: Any, fmt: str,
                                                    tmp_path: Path) -> None:
    result = cli("export", clean_run.project.yaml_path, "--format", fmt, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    expected_rows = {"generations": 36, "judgments": 24, "annotations": 0}
    for name, fields in FIELDS.items():
        path = tmp_path / f"{name}.{fmt}"
        assert f"{expected_rows[name]:>8} {name} → {path}" in result.stdout
        columns, rows = read(path, fmt)
        assert len(rows) == expected_rows[name]
        if rows or fmt != "jsonl":
            assert columns == fields, name
    _, gens = read(tmp_path / f"generations.{fmt}", fmt)
    assert all(g["status"] == "ok" and str(g["output"]).startswith("উত্তর: ") for g in gens)
    assert {(g["model"], g["variant"]) for g in gens} == {(m, v) for m in ("model-a", "model-b")
                                                         for v in ("standard", "chittagong", "sylhet")}


def test_export_rows_match_the_store(clean_run: Any, cli: Any, tmp_path: Path) -> None:
    cli("export", clean_run.project.yaml_path, "--format", "jsonl", "--out", tmp_path)
    _, judgments = read(tmp_path / "judgments.jsonl", "jsonl")
    with sqlite3.connect(clean_run.project.store_path) as db:
        stored = dict(db.execute("SELECT request_id, score FROM judgments").fetchall())
    assert {j["request_id"]: j["score"] for j in judgments} == stored
    assert all(len(json.loads(j["generation_ids"])) == 2 for j in judgments)


def test_export_rejects_an_unknown_format(clean_run: Any, cli: Any, tmp_path: Path) -> None:
    result = cli("export", clean_run.project.yaml_path, "--format", "xlsx", "--out", tmp_path)
    assert result.exit_code == 1
    assert "--format must be csv, jsonl or parquet, not 'xlsx'" in result.stderr


def write_queue(path: Path, rows: list[dict[str, str]], likert: dict[str, list[int]]) -> Path:
    from dialectbias.judges import load_rubric
    from dialectbias.review import human_columns

    human = human_columns(load_rubric("rlaif"))
    for row in rows:
        row.update(dict(zip(human, map(str, likert.get(row["judgment_id"], [""] * 5)), strict=True)))
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture
def reviewed(qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path) -> tuple[Any, list[dict[str, str]]]:
    """A finished run and its exported review queue (rows not yet filled in)."""
    project = qa_project(qa_server.base_url, n_items=6)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert cli("review", "export", project.yaml_path, "--out", tmp_path / "queue.csv").exit_code == 0
    with (tmp_path / "queue.csv").open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) > 2
    return project, rows


def test_status_shows_reviewed_judgments_apart_from_the_queue(reviewed: Any, cli: Any, tmp_path: Path) -> None:
    project, rows = reviewed
    first = cli("status", project.yaml_path).stdout
    assert f"needs review: {len(rows)} · reviewed: 0" in first
    path = write_queue(tmp_path / "filled.csv", rows, {r["judgment_id"]: [4, 4, 4, 4, 4] for r in rows[:2]})
    assert cli("review", "import", project.yaml_path, path, "--annotator", "rahim").exit_code == 0
    after = cli("status", project.yaml_path).stdout
    assert f"needs review: {len(rows) - 2} · reviewed: 2" in after


def test_the_latest_import_wins_whoever_the_annotator(reviewed: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    from dialectbias.judges import rlaif_score
    from dialectbias.store import Store
    from dialectbias.tasks.qa_bias._report import final_scores

    project, rows = reviewed
    rid = rows[0]["judgment_id"]

    def imported(annotator: str, likert: list[int], name: str) -> tuple[float, str]:
        path = write_queue(tmp_path / name, [dict(r) for r in rows[:1]], {rid: likert})
        assert cli("review", "import", project.yaml_path, path, "--annotator", annotator).exit_code == 0
        with Store.open(project.store_path, create=False) as store:
            row = final_scores(store, qa.JUDGE, list(qa.MODELS)).set_index("request_id").loc[rid]
        return row["final_score"], row["annotator"]

    assert imported("rahim", [5, 5, 5, 5, 5], "a.csv") == (rlaif_score([5] * 5), "rahim")
    assert imported("karim", [1, 1, 1, 1, 1], "b.csv") == (rlaif_score([1] * 5), "karim")  # a later import wins
    # re-importing an identical row stores nothing new, so it does not win back
    assert imported("rahim", [5, 5, 5, 5, 5], "a.csv") == (rlaif_score([1] * 5), "karim")
    # a changed score is a new annotation: the latest again
    assert imported("rahim", [4, 4, 4, 4, 4], "c.csv") == (rlaif_score([4] * 5), "rahim")
