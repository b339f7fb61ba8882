"""Exports: generations, judgments and annotations with every field, in CSV, JSONL and Parquet."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest

from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import Store
from dialectbias.store._export import export_store

GENERATION_COLUMNS = ["request_id", "current", "model", "item_id", "variant", "prompt_template", "prompt_hash",
                      "rendered_prompt", "params", "status", "output", "finish_reason", "tokens_in",
                      "tokens_out", "latency_s", "cache_hit", "retries", "error", "completed_at"]
JUDGMENT_COLUMNS = ["request_id", "judge_id", "model_id", "item_id", "variant", "rubric", "raw_output",
                    "parsed",
                    "score", "confidence",
                    "parse_status", "needs_review", "flagged", "reason", "source_request_id", "checks", "flags",
                    "clipped", "scoring", "current",
                    "generation_ids", "prompt_template",
                    "prompt_hash", "tokens_in", "tokens_out", "latency_s", "cache_hit", "completed_at"]
REASK_COLUMNS = ["request_id", "current", "reask_of", "stage", "model", "item_id", "variant", "refs", "prompt_template",
                 "prompt_hash", "rendered_prompt", "params", "meta", "first_output", "status", "output",
                 "finish_reason", "tokens_in", "tokens_out", "latency_s", "cache_hit", "retries", "error",
                 "completed_at"]
ANNOTATION_COLUMNS = ["annotation_id", "target_id", "annotator", "kind", "value", "comment", "created_at", "scoring"]
COLUMNS = {"generations": GENERATION_COLUMNS, "judgments": JUDGMENT_COLUMNS, "reasks": REASK_COLUMNS,
           "annotations": ANNOTATION_COLUMNS}
MODEL = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1")
JUDGE = OpenAIModelConfig(id="j", model="judge-model", base_url="http://127.0.0.1:1/v1")


def read(path: Path, fmt: str) -> tuple[list[str], list[dict]]:
    if fmt == "csv":
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            return list(reader.fieldnames or []), list(reader)
    if fmt == "jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return (list(rows[0]) if rows else []), rows
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return table.column_names, table.to_pylist()


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    """A store with one generation (ok), one failed generation, one judgment and one annotation."""
    path = tmp_path / "run.sqlite"
    now = time.time()
    with Store.open(path) as store:
        gens = [RequestSpec(stage="generate", model=MODEL, item_id="q1", variant=v, template="qa_bias/answer",
                            messages=[{"role": "user", "content": f"প্রশ্ন {v}"}], params={"temperature": 0})
                for v in ("standard", "sylhet")]
        judge = RequestSpec(stage="judge", model=JUDGE, item_id="q1", variant="sylhet",
                            template="qa_bias/judge_user", messages=[{"role": "user", "content": "বিচার"}],
                            refs=[g.request_id() for g in gens], meta={"model_id": "m"})
        store.add_requests([g.to_row() for g in gens] + [judge.to_row()])
        ok = {"status": "ok", "output": "উত্তর", "finish_reason": "stop", "tokens_in": 5, "tokens_out": 2,
              "latency_s": 0.25, "cache_hit": 0, "retries": 1, "error": None, "completed_at": now}
        store.write([
            ("results", {"request_id": gens[0].request_id(), **ok}),
            ("results", {"request_id": gens[1].request_id(), **ok, "status": "failed", "output": None,
                         "error": "HTTP 500"}),
            ("results", {"request_id": judge.request_id(), **ok, "output": "{}"}),
            ("judgments", {"request_id": judge.request_id(), "judge_id": "j", "model_id": "m",
                           "item_id": "q1",
                           "variant": "sylhet", "rubric": "rlaif", "raw_output": "{}", "parsed": None,
                           "score": None, "confidence": None,
                           "checks": '{"refusal":null,"script":{"share":1.0,"status":"ok"}}',
                           "parse_status": "failed", "needs_review": 1,
                           "flagged": 0, "reason": "invalid JSON"}),
            ("annotations", {"target_id": judge.request_id(), "annotator": "ann1", "kind": "judgment_override",
                             "value": '{"score": 7.5}', "comment": "ঠিক আছে", "created_at": now}),
        ])
    return path


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_has_every_field(filled: Path, tmp_path: Path, fmt: str) -> None:
    with Store.open(filled) as store:
        counts = export_store(store, tmp_path / "out", fmt)  # type: ignore[arg-type]
    assert counts == {"generations": 2, "judgments": 1, "reasks": 0, "annotations": 1}
    for name, expected in COLUMNS.items():
        columns, rows = read(tmp_path / "out" / f"{name}.{fmt}", fmt)
        if rows or fmt != "jsonl":  # an empty JSONL file has no header to carry the columns
            assert columns == expected, name
        assert len(rows) == counts[name]
    _, gens = read(tmp_path / "out" / f"generations.{fmt}", fmt)
    by_variant = {g["variant"]: g for g in gens}
    assert by_variant["standard"]["output"] == "উত্তর"
    assert by_variant["sylhet"]["error"] == "HTTP 500"
    assert "প্রশ্ন standard" in by_variant["standard"]["rendered_prompt"]
    _, (judgment,) = read(tmp_path / "out" / f"judgments.{fmt}", fmt)
    assert judgment["parse_status"] == "failed"
    assert judgment["score"] in (None, "")  # unscored, never 0
    _, (annotation,) = read(tmp_path / "out" / f"annotations.{fmt}", fmt)
    assert annotation["comment"] == "ঠিক আছে"


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_empty_export_writes_every_file(tmp_path: Path, fmt: str) -> None:
    with Store.open(tmp_path / "run.sqlite") as store:
        counts = export_store(store, tmp_path / "out", fmt)  # type: ignore[arg-type]
    assert counts == {"generations": 0, "judgments": 0, "reasks": 0, "annotations": 0}
    for name, expected in COLUMNS.items():
        columns, rows = read(tmp_path / "out" / f"{name}.{fmt}", fmt)
        assert rows == []
        if fmt != "jsonl":  # an empty JSONL file has no header to carry the columns
            assert columns == expected, name


def test_jsonl_export_is_not_ascii_escaped(filled: Path, tmp_path: Path) -> None:
    with Store.open(filled) as store:
        export_store(store, tmp_path / "out", "jsonl")
    assert "উত্তর" in (tmp_path / "out" / "generations.jsonl").read_text(encoding="utf-8")


def test_a_keys_several_judgments_are_exported_in_request_id_order(tmp_path: Path) -> None:
    """Judgments come sorted by (judge, model, item, variant), then request id: a key's current and superseded
    judgments in the same order on every run, whatever plan SQLite chooses (issue 23)."""
    from store_sql import connection, insert_judgment, insert_request, leave_current

    rows = [("z9", "j", "m2", "q1"), ("c3", "j", "m1", "q2"), ("b2", "j", "m1", "q1"), ("a1", "j", "m1", "q1"),
            ("d4", "i", "m1", "q1")]
    with Store.open(tmp_path / "s.sqlite") as store:
        conn = connection(store)
        for rid, judge, model, item in rows:
            insert_request(conn, rid, "judge", judge, item)
            insert_judgment(conn, rid, judge, model, item)
        leave_current(conn, "b2")  # superseded, still exported
        export_store(store, tmp_path / "out", "jsonl")
    lines = (tmp_path / "out" / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    assert [(r["request_id"], r["current"]) for r in map(json.loads, lines)] == [
        ("d4", True), ("a1", True), ("b2", False), ("c3", True), ("z9", True)]
