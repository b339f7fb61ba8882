"""Schema 15 (issue 23): results and judgments are keyed by their request's integer key (`rid`) and keep their
request id as a plain, unindexed column. A read that names a request by id must therefore reach them through the
request's key: a query filtering or joining them on `request_id` itself would read the whole table, the store's
widest, for each id (correct, and 10× the paper's minutes slower). Each reader is traced and every statement's
plan checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dialectbias.errors import StoreError
from dialectbias.run import RequestSpec
from dialectbias.store import (
    Store,
    annotated_judgment_variants,
    get_judgment,
    judgment_overrides,
    overrides_to_rescore,
    ref_outputs,
    result_output,
    stored_generation,
    update_judgments,
)
from dialectbias.store._export import export_store
from dialectbias.store._judgments import DERIVED_COLUMNS
from dialectbias.store._kinds import OVERRIDE_KIND
from store_sql import connection, query_plan

MODEL, JUDGE = "m", "j"


def _request(stage: str, model: str, text: str, **extra: Any) -> dict[str, Any]:
    from dialectbias.providers._openai import OpenAIModelConfig

    config = OpenAIModelConfig(id=model, model=model, base_url="http://127.0.0.1:1/v1")
    return RequestSpec(stage=stage, model=config, item_id="q1", variant="sylhet", template="t",
                       messages=[{"role": "user", "content": text}], **extra).to_row()


@pytest.fixture
def stored(tmp_path: Path):
    """A store with a generation, its judge request, the judge's re-ask, their results, a judgment and a human
    override of it; and the generation's and the judge request's ids."""
    with Store.open(tmp_path / "s.sqlite") as s:
        gen = _request("generate", MODEL, "প্রশ্ন")
        judge = _request("judge", JUDGE, "বিচার", refs=[gen["request_id"]])
        reask = _request("judge:reask", JUDGE, "আবার", refs=[judge["request_id"]],
                         meta={"reask_of": judge["request_id"]})
        s.add_requests([gen], current=("generate", MODEL))
        s.add_requests([judge], current=("judge", JUDGE))
        s.write([("requests", reask)])
        done = {"status": "ok", "output": "উত্তর", "completed_at": 1.0}
        s.write([("results", {"request_id": r["request_id"], **done}) for r in (gen, judge, reask)])
        s.write([("judgments", {"request_id": judge["request_id"], "judge_id": JUDGE, "model_id": MODEL,
                                "item_id": "q1", "variant": "sylhet", "rubric": "r", "parsed": "{}", "score": 3.0,
                                "parse_status": "ok", "scoring": "old"})])
        s.write([("annotations", {"target_id": judge["request_id"], "annotator": "rahim", "kind": OVERRIDE_KIND,
                                  "value": '{"score": 4}', "created_at": 2.0, "scoring": "old"})])
        yield s, {"gen": gen["request_id"], "judge": judge["request_id"]}


def _plans(store: Store, call: Any) -> list[str]:
    trace: list[str] = []
    connection(store).set_trace_callback(trace.append)
    try:
        call()
    finally:
        connection(store).set_trace_callback(None)
    return [query_plan(store, sql) for sql in trace if sql.lstrip().upper().startswith(("SELECT", "WITH", "UPDATE"))]


def test_readers_by_request_id_reach_results_and_judgments_by_key(stored: tuple[Store, dict[str, str]],
                                                                  tmp_path: Path) -> None:
    store, ids = stored
    row = {c: None for c in DERIVED_COLUMNS} | {"request_id": ids["judge"], "parse_status": "ok", "parsed": "{}",
                                                 "checks": "{}", "flags": "[]", "clipped": "{}", "needs_review": 0,
                                                 "flagged": 0, "scoring": "new"}
    calls = {
        "result_output": lambda: result_output(store, ids["gen"]),
        "get_judgment": lambda: get_judgment(store, ids["judge"]),
        "ref_outputs": lambda: ref_outputs(store, ids["judge"]),
        "annotated_judgment_variants": lambda: annotated_judgment_variants(store),
        "judgment_overrides": lambda: judgment_overrides(store),
        "overrides_to_rescore": lambda: list(overrides_to_rescore(store, JUDGE, "new")),
        "stored_generation": lambda: stored_generation(store, ids["gen"]),
        "update_judgments": lambda: update_judgments(store, [row]),
        "export": lambda: export_store(store, tmp_path / "out", "jsonl"),
    }
    for name, call in calls.items():
        plans = _plans(store, call)
        assert plans, name
        for plan in plans:
            steps = plan.split(" | ")
            scans = [s for s in steps if s.startswith(("SCAN s", "SCAN j", "SCAN f", "SCAN results", "SCAN judgments"))
                     and "USING" not in s]
            assert not scans or name == "export", (name, plan)
            for step in steps:  # results and judgments are searched by their key, never by their id
                if step.startswith(("SEARCH s ", "SEARCH j ", "SEARCH f ", "SEARCH results", "SEARCH judgments")):
                    assert "request_id" not in step, (name, step)
    assert get_judgment(store, ids["judge"]).parse_status == "ok"  # type: ignore[union-attr]
    assert result_output(store, ids["gen"]) == "উত্তর"
    assert ref_outputs(store, ids["judge"]) == ["উত্তর"]
    assert annotated_judgment_variants(store) == {ids["judge"]: "sylhet"}
    assert [o.model_id for o in judgment_overrides(store)] == [MODEL]


def test_the_export_is_in_key_order_whatever_order_the_keys_were_given(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The export sorts each table's keys, then reads each row by its integer key (no outer ORDER BY: it follows
    the sorted subquery). Stored in another order than the export's, the rows still come out in it; a read that
    did not (SQLite planning it otherwise) is refused while it is written, never exported out of order."""
    import json

    import dialectbias.store._export as export_module
    from store_sql import insert_judgment, insert_request, reorder_keys

    with Store.open(tmp_path / "s.sqlite") as s:
        conn = connection(s)
        for i, (judge, model, item, variant) in enumerate([("j2", "m1", "q1", "a"), ("j1", "m2", "q2", "b"),
                                                           ("j1", "m1", "q2", "a"), ("j1", "m1", "q1", "b"),
                                                           ("j1", "m1", "q1", "a")]):
            insert_request(conn, f"r{i}", "judge", judge, item, variant=variant)
            insert_judgment(conn, f"r{i}", judge, model, item, variant=variant)
        reorder_keys(conn, "j.request_id")  # stored: r0 (j2 …) first, r4 (j1 m1 q1 a) last
        export_store(s, tmp_path / "out", "jsonl")
        lines = (tmp_path / "out" / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
        got = [tuple(json.loads(line)[c] for c in ("judge_id", "model_id", "item_id", "variant")) for line in lines]
        assert got == sorted(got) and len(got) == 5
        monkeypatch.setattr(export_module, "JUDGMENTS_SQL", export_module.JUDGMENTS_SQL.replace(
            "ORDER BY k.judge_id, k.model_id, k.item_id, k.variant, k.request_id", "ORDER BY k.rowid"))
        with pytest.raises(StoreError, match="the judgments export came out of order"):
            export_store(s, tmp_path / "again", "jsonl")
