"""Importing generations made elsewhere: same request ids as a run, no-op re-import, conflicts, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectbias.config import load_experiment
from dialectbias.errors import DataError
from dialectbias.run import import_generations as import_into_store
from dialectbias.store import Store
from dialectbias.tasks import get_task
from store_sql import connection

URL = "http://127.0.0.1:9/v1"  # never called: importing sends nothing


def import_generations(exp: Any, path: Path) -> Any:
    return import_into_store(exp, get_task(exp.task)(exp), path)


@pytest.fixture
def exp(qa_project: Any) -> Any:
    return load_experiment(qa_project(URL, n_items=3).yaml_path)


def line(item: str = "q01", variant: str = "standard", model: str = "model-a", output: str = "উত্তর: পদ্মা।",
         **extra: Any) -> dict[str, Any]:
    return {"item_id": item, "variant": variant, "model": model, "output": output, **extra}


def error(exp: Any, path: Path) -> str:
    with pytest.raises(DataError) as info:
        import_generations(exp, path)
    return str(info.value)


def test_imported_rows_are_the_runs_generation_requests(exp: Any, qa: Any, tmp_path: Path) -> None:
    path = qa.write_jsonl(tmp_path / "g.jsonl", [
        line(finish_reason="length", tokens_in=12, tokens_out=7, latency_s=0.5, metadata={"run": "vllm-1"}),
        line(variant="sylhet", output="উত্তর: সুরমা।")])
    summary = import_generations(exp, path)
    assert (summary.lines, summary.imported, summary.unchanged) == (2, 2, 0)

    task = get_task(exp.task)(exp)
    with Store.open(exp.store_path, create=False) as store:
        expected = {(s.item_id, s.variant): s.request_id()
                    for s in task.stages()[0].build(store, exp.models[0]) if hasattr(s, "request_id")}
        rows = store.query("SELECT q.request_id, q.stage, q.item_id, q.variant, q.meta, s.* FROM requests q "
                           "JOIN results s USING (request_id) ORDER BY q.variant")
    assert [(r["item_id"], r["variant"]) for r in rows] == [("q01", "standard"), ("q01", "sylhet")]
    for r in rows:
        assert r["request_id"] == expected[(r["item_id"], r["variant"])] and r["stage"] == "generate"
        assert r["status"] == "ok" and r["cache_hit"] == 0
        assert json.loads(r["meta"])["imported_from"] == str(path.resolve())
    first = rows[0]
    assert (first["output"], first["finish_reason"], first["tokens_in"], first["tokens_out"]) == \
        ("উত্তর: পদ্মা।", "length", 12, 7)
    assert json.loads(first["meta"])["import_metadata"] == {"run": "vllm-1"}


def test_reimport_is_a_no_op_and_a_changed_output_is_a_conflict(exp: Any, qa: Any, tmp_path: Path) -> None:
    path = qa.write_jsonl(tmp_path / "g.jsonl", [line(), line(variant="sylhet")])
    import_generations(exp, path)
    again = import_generations(exp, path)
    assert (again.imported, again.unchanged) == (0, 2)

    other = qa.write_jsonl(tmp_path / "other.jsonl", [line(variant="chittagong"), line(output="উত্তর: মেঘনা।")])
    msg = error(exp, other)
    assert f"{other.resolve()}:2: model-a/q01/standard: output 'উত্তর: মেঘনা।' conflicts" in msg
    assert f"imported from {path.resolve()}" in msg and "'উত্তর: পদ্মা।'" in msg
    with Store.open(exp.store_path, create=False) as store:  # all or nothing: line 1 was not stored
        assert store.query("SELECT count(*) FROM results")[0][0] == 2


def test_duplicate_keys_in_one_file(exp: Any, qa: Any, tmp_path: Path) -> None:
    same = qa.write_jsonl(tmp_path / "same.jsonl", [line(), line()])
    first, second = import_generations(exp, same), import_generations(exp, same)
    assert (first.imported, first.unchanged, second.imported, second.unchanged) == (1, 1, 0, 2)
    differ = qa.write_jsonl(tmp_path / "differ.jsonl",
                            [line(variant="sylhet"), line(variant="sylhet", output="x")])
    assert f"{differ.resolve()}:2: model-a/q01/sylhet: output differs from line 1" in error(exp, differ)


def test_a_failed_result_is_replaced(exp: Any, qa: Any, tmp_path: Path) -> None:
    path = qa.write_jsonl(tmp_path / "g.jsonl", [line()])
    import_generations(exp, path)
    with Store.open(exp.store_path, create=False) as store:
        connection(store).execute("UPDATE results SET status='failed', output=NULL")
    other = qa.write_jsonl(tmp_path / "retry.jsonl", [line()])
    assert import_generations(exp, other).imported == 1
    with Store.open(exp.store_path, create=False) as store:
        row = store.query("SELECT s.status, q.meta FROM results s JOIN requests q USING (request_id)")[0]
    assert row["status"] == "ok" and json.loads(row["meta"])["imported_from"] == str(other.resolve())


@pytest.mark.parametrize(("row", "message"), [
    (line(model="gpt-x"), ":1: model 'gpt-x' is not a model of"),
    (line(model="judge-1"), ":1: model 'judge-1' is not a model of"),
    (line(item="q99"), ":1: item 'q99' is not in the experiment's data (items.jsonl)"),
    (line(variant="rangpur"),
     ":1: item 'q01' has no variant 'rangpur' in the experiment (variants: chittagong"),
    (line(output="  "), ":1: output: Value error, empty output"),
    (line(tokens=3), ":1: tokens: unknown key"),
    (line(strategy="cot"), ":1: strategy: unknown key (keys: item_id, variant, model, output, finish_reason, "
     "tokens_in, tokens_out, latency_s, metadata; task 'qa_bias' takes no request keys"),
    ({"item_id": "q01", "variant": "standard", "model": "model-a"}, ":1: output: Field required"),
])
def test_bad_lines_name_the_file_and_line(exp: Any, qa: Any, tmp_path: Path, row: dict[str, Any],
                                          message: str) -> None:
    path = qa.write_jsonl(tmp_path / "g.jsonl", [row])
    msg = error(exp, path)
    assert f"{path.resolve()}{message}" in msg


def test_invalid_json_and_missing_file(exp: Any, tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(line(), ensure_ascii=False) + "\n{oops\n", encoding="utf-8")
    assert f"{path.resolve()}:2: invalid JSON" in error(exp, path)
    assert "file not found" in error(exp, tmp_path / "none.jsonl")
