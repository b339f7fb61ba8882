"""The store's named reads that hold logic (what is current, what counts), and `Store.write`'s schema check."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import (
    Store,
    call_totals,
    measured_means,
    ok_results_mark,
    request_tallies,
    result_output,
    stage_requests,
)

MODEL = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1")


def request_row(item: str, stage: str = "generate") -> dict[str, Any]:
    return RequestSpec(stage=stage, model=MODEL, item_id=item, variant="standard", template="t",
                       messages=[{"role": "user", "content": f"প্রশ্ন {item}"}]).to_row()


def result_row(request_id: str, status: str = "ok", tokens: int = 1) -> dict[str, Any]:
    return {"request_id": request_id, "status": status, "output": "উত্তর" if status == "ok" else None,
            "tokens_in": tokens, "tokens_out": 2 * tokens, "error": None if status == "ok" else "boom",
            "completed_at": time.time()}


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "run.sqlite") as s:
        yield s


def test_write_takes_only_its_tables_and_their_columns(store: Store) -> None:
    row = request_row("q1")
    store.add_requests([row])
    with pytest.raises(ValueError, match="table 'meta' is not one of"):
        store.write([("meta", {"key": "k", "value": "v"})])
    with pytest.raises(ValueError, match=r"results has no column 'status\) VALUES \(1\); DROP TABLE items; --'"):
        store.write([("results", {"request_id": row["request_id"],
                                  "status) VALUES (1); DROP TABLE items; --": "ok"})])
    assert store.query("SELECT count(*) FROM results")[0][0] == 0 and list(store.iter_items()) == []
    store.write([("results", result_row(row["request_id"]))])
    assert result_output(store, row["request_id"]) == "উত্তর"


def test_the_ok_results_mark_moves_with_each_ok_result_of_those_stages(store: Store) -> None:
    gen, judge = request_row("q1"), request_row("q1", stage="judge")
    store.add_requests([gen, judge])
    assert ok_results_mark(store, ["generate"]) == (0, 0)
    store.write([("results", result_row(gen["request_id"], "failed"))])
    store.write([("results", result_row(judge["request_id"]))])
    assert ok_results_mark(store, ["generate"]) == (0, 0)  # a failure, and another stage's result, do not count
    store.write([("results", result_row(gen["request_id"]))])
    first = ok_results_mark(store, ["generate"])
    store.write([("results", result_row(gen["request_id"]))])  # the same answer stored again is a change
    assert first[0] == 1 and ok_results_mark(store, ["generate"]) > first


def test_totals_and_stage_requests_read_current_requests_only(store: Store) -> None:
    old, new = request_row("q1"), request_row("q2")
    store.add_requests([old], current=("generate", "m"))
    store.write([("results", result_row(old["request_id"], tokens=10))])
    store.add_requests([new], current=("generate", "m"))  # the compiled set is now q2 only: q1 is superseded
    store.write([("results", result_row(new["request_id"], "failed", tokens=3))])
    totals = call_totals(store)
    assert (totals.results, totals.failed, totals.tokens_in, totals.tokens_out) == (1, 1, 3, 6)
    (only,) = stage_requests(store, "generate", "m")
    assert (only.item_id, only.status, only.output, only.error) == ("q2", "failed", None, "boom")
    tallies = {t.current: (t.requests, t.ok, t.failed, t.tokens_in) for t in request_tallies(store)}
    assert tallies == {True: (1, 0, 1, 3), False: (1, 1, 0, 10)}


def test_measured_means_read_fresh_answers_only(store: Store) -> None:
    row = request_row("q1")
    store.add_requests([row])
    assert measured_means(store, "generate", "m") == (None, None)
    store.write([("cache", {"cache_key": row["cache_key"], "output": "x", "tokens_out": 7, "latency_s": 0.0,
                            "created_at": 0.0})])
    assert measured_means(store, "generate", "m") == (None, None)  # no latency: not measured (e.g. imported)
    store.write([("cache", {"cache_key": row["cache_key"], "output": "x", "tokens_out": 7, "latency_s": 0.5,
                            "created_at": 0.0})])
    assert measured_means(store, "generate", "m") == (7.0, 0.5)


def test_open_copy_leaves_the_source_alone(store: Store, tmp_path: Path) -> None:
    store.add_requests([request_row("q1")])
    with Store.open_copy(store.path, tmp_path / "copy.sqlite") as copy:
        copy.add_requests([request_row("q2")])
        assert copy.query("SELECT count(*) FROM requests")[0][0] == 2
    assert store.query("SELECT count(*) FROM requests")[0][0] == 1
    with Store.open_copy(tmp_path / "absent.sqlite", tmp_path / "new.sqlite") as new:
        assert new.query("SELECT count(*) FROM requests")[0][0] == 0
