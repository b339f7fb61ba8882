"""The SQLite run store: schema and migrations, WAL, idempotent requests, pagination, atomic writes."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from dialectbias.errors import StoreError
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import SCHEMA_VERSION, Store
from store_sql import connection, query_plan

MODEL = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1")


def request_row(i: int, stage: str = "generate", model: OpenAIModelConfig = MODEL) -> dict[str, Any]:
    return RequestSpec(stage=stage, model=model, item_id=f"q{i}", variant="standard", template="t",
                       messages=[{"role": "user", "content": f"প্রশ্ন {i}"}]).to_row()


def result_row(request_id: str, status: str = "ok") -> dict[str, Any]:
    return {"request_id": request_id, "status": status, "output": "উত্তর", "finish_reason": "stop",
            "tokens_in": 1, "tokens_out": 2, "latency_s": 0.1, "cache_hit": 0, "retries": 0,
            "error": None if status == "ok" else "boom", "completed_at": time.time()}


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "run.sqlite") as s:
        yield s


def test_new_store_is_at_the_current_schema_version(store: Store) -> None:
    assert store.schema_version == SCHEMA_VERSION
    tables = {r[0] for r in store.query("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"meta", "experiments", "items", "requests", "results", "cache", "judgments",
            "annotations"} <= tables


def test_store_uses_wal(store: Store) -> None:
    assert store.query("PRAGMA journal_mode")[0][0] == "wal"


def test_reopening_does_not_migrate_again_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    with Store.open(path) as s:
        s.add_requests([request_row(1)])
    with Store.open(path) as s, Store.open(path) as again:  # idempotent, also with two connections
        assert s.schema_version == again.schema_version == SCHEMA_VERSION
        assert s.query("SELECT count(*) FROM requests")[0][0] == 1
        assert s.query("SELECT value FROM meta WHERE key='schema_version'")[0][0] == str(SCHEMA_VERSION)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    with Store.open(path) as s:
        connection(s).execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match=r"newer than this dialectbias"):
        Store.open(path)


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=str(path)):
        Store.open(path)


def test_open_without_create_needs_an_existing_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store yet"):
        Store.open(tmp_path / "none.sqlite", create=False)


def test_add_requests_is_idempotent(store: Store) -> None:
    first = [request_row(i) for i in range(3)]
    store.add_requests(first)
    created = {r[0]: r[1] for r in store.query("SELECT request_id, created_at FROM requests")}
    store.add_requests([request_row(i) for i in range(3)])
    assert store.query("SELECT count(*) FROM requests")[0][0] == 3
    assert {r[0]: r[1] for r in store.query("SELECT request_id, created_at FROM requests")} == created
    assert store.count_pending("generate", "m") == 3


def test_pending_requests_paginate_in_compile_order(store: Store) -> None:
    rows = [request_row(i) for i in range(7)]
    store.add_requests(rows)
    ids = [r["request_id"] for r in rows]
    seen, after = [], 0
    while page := store.pending_requests("generate", "m", after=after, limit=3):
        assert len(page) <= 3
        seen += [r["request_id"] for r in page]
        after = page[-1]["rid"]
    assert seen == ids


def test_pending_skips_ok_results_but_not_failed_ones(store: Store) -> None:
    rows = [request_row(i) for i in range(3)]
    store.add_requests(rows)
    store.write([("results", result_row(rows[0]["request_id"], "ok")),
                 ("results", result_row(rows[1]["request_id"], "failed"))])
    pending = {r["request_id"] for r in store.pending_requests("generate", "m")}
    assert pending == {rows[1]["request_id"], rows[2]["request_id"]}
    assert store.count_pending("generate", "m") == 2


def test_pending_requests_skip_a_done_request_from_the_status_index(store: Store) -> None:
    """A resumed run pages through every current request of a model to find the pending ones. A done one is
    skipped on the results' (key, status) index alone: neither its result row (the output) nor its
    request row is read. Reading both for each done request made a 10×-paper study with 1/16 of its answers
    missing cost 23.2 s of CPU to page through, 12.9 s now (issue 23, benchmarks/pending_pages.py)."""
    rows = [request_row(i) for i in range(3)]
    store.add_requests(rows)
    store.write([("results", result_row(rows[0]["request_id"], "ok")),
                 ("results", result_row(rows[1]["request_id"], "failed"))])
    trace: list[str] = []
    connection(store).set_trace_callback(trace.append)
    pending = store.pending_requests("generate", "m")
    connection(store).set_trace_callback(None)
    assert [r["request_id"] for r in pending] == [r["request_id"] for r in rows[1:]]
    (sql,) = trace
    steps = query_plan(store, sql).split(" | ")
    done_test = "SEARCH s USING COVERING INDEX results_status_of (rid=? AND status=? AND rowid=?)"
    assert done_test in steps, steps
    assert not any(step.startswith("SEARCH s USING INDEX") for step in steps)  # no result row read
    read_request = next(i for i, step in enumerate(steps) if step.startswith("SEARCH r "))
    assert steps.index(done_test) < read_request, steps  # decided before the request row is looked up


def test_pending_counts_match_count_pending_in_one_pass(store: Store) -> None:
    """`pending_counts` (one sweep, used by the runner and executors) gives each model what `count_pending` gives:
    ok results are done, failed and missing ones pending, superseded and other stages' requests not counted."""
    other = OpenAIModelConfig(id="m2", model="test-model-2", base_url="http://127.0.0.1:1/v1")
    gen = [request_row(i) for i in range(5)]
    gen2 = [request_row(i, model=other) for i in range(4)]
    store.add_requests(gen, current=("generate", "m"))
    store.add_requests(gen2, current=("generate", "m2"))
    store.add_requests([request_row(i, stage="judge") for i in range(3)], current=("judge", "m"))
    store.write([("results", result_row(gen[0]["request_id"], "ok")),
                 ("results", result_row(gen[1]["request_id"], "failed")),
                 *(("results", result_row(r["request_id"], "ok")) for r in gen2)])
    store.add_requests(gen[:4], current=("generate", "m"))  # gen[4] is superseded
    trace: list[str] = []
    connection(store).set_trace_callback(trace.append)
    counts = store.pending_counts("generate")
    connection(store).set_trace_callback(None)
    assert counts == {"m": 3} == {m: n for m in ("m", "m2") if (n := store.count_pending("generate", m))}
    assert store.pending_counts("judge") == {"m": 3}
    assert store.pending_counts("nothing") == {}
    assert [sql for sql in trace if not sql.startswith("PRAGMA")] == trace[-1:]  # one statement for every model


def test_pending_counts_sweep_once_while_nothing_changes_and_follow_every_change(tmp_path: Path) -> None:
    """A run asks a stage's pending counts three times with nothing written in between (issue 23): the sweep runs
    once; a write of this connection, a commit of another one and a transaction rolled back each give the
    counts as they are now."""
    path = tmp_path / "run.sqlite"
    store = Store.open(path)
    gen = [request_row(i) for i in range(4)]
    store.add_requests(gen, current=("generate", "m"))
    sweeps: list[str] = []
    connection(store).set_trace_callback(lambda sql: sweeps.append(sql) if "GROUP BY cr.model_id" in sql else None)
    assert store.pending_counts("generate") == {"m": 4}
    counts = store.pending_counts("generate")
    counts["m"] = 0  # the caller's copy
    assert store.pending_counts("generate") == {"m": 4} and len(sweeps) == 1
    store.write([("results", result_row(gen[0]["request_id"]))])  # this connection
    assert store.pending_counts("generate") == {"m": 3} and len(sweeps) == 2
    with sqlite3.connect(path) as other:  # another connection (another process)
        other.execute("INSERT INTO results (rid, request_id, status, output, completed_at) "
                      "SELECT rid, request_id, 'ok', 'x', 0 FROM requests WHERE request_id = ?",
                      (gen[1]["request_id"],))
    assert store.pending_counts("generate") == {"m": 2} and len(sweeps) == 3
    conn = connection(store)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO results (rid, request_id, status, output, completed_at) "
                      "SELECT rid, request_id, 'ok', 'x', 0 FROM requests WHERE request_id = ?",
                 (gen[2]["request_id"],))
    assert store.pending_counts("generate") == {"m": 1}  # inside the transaction: seen, not kept
    conn.execute("ROLLBACK")
    assert store.pending_counts("generate") == {"m": 2} and len(sweeps) == 5
    store.close()


def test_pending_is_only_the_current_compiled_set(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    with Store.open(path) as s:
        s.add_requests([request_row(1), request_row(2)], current=("generate", "m"))
    with Store.open(path) as s:  # the experiment file now only asks for item 2
        s.add_requests([request_row(2)], current=("generate", "m"))
    with Store.open(path) as s:  # and another process sees the same
        assert [r["item_id"] for r in s.pending_requests("generate", "m")] == ["q2"]
        assert s.count_pending("generate", "m") == 1


def test_pending_carries_the_cached_output(store: Store) -> None:
    row = request_row(1)
    store.add_requests([row])
    store.write([("cache", {"cache_key": row["cache_key"], "output": "ক্যাশ", "finish_reason": "stop",
                            "tokens_in": 3, "tokens_out": 4, "latency_s": 0.5, "created_at": time.time()})])
    (pending,) = store.pending_requests("generate", "m")
    assert (pending["cached_output"], pending["cached_in"], pending["cached_out"]) == ("ক্যাশ", 3, 4)


def test_write_is_atomic(store: Store) -> None:
    rows = [request_row(i) for i in range(2)]
    store.add_requests(rows)
    bad = result_row(rows[1]["request_id"])
    bad["status"] = None  # NOT NULL: fails after the first row of the batch was inserted
    with pytest.raises(sqlite3.IntegrityError):
        store.write([("results", result_row(rows[0]["request_id"])),
                     ("cache", {"cache_key": "k", "output": "x", "created_at": 0.0}),
                     ("results", bad)])
    assert store.query("SELECT count(*) FROM results")[0][0] == 0
    assert store.query("SELECT count(*) FROM cache")[0][0] == 0
    assert not connection(store).in_transaction
    store.write([("results", result_row(rows[0]["request_id"]))])  # the connection is still usable
    assert store.query("SELECT count(*) FROM results")[0][0] == 1


def test_write_replaces_a_failed_result(store: Store) -> None:
    row = request_row(1)
    store.add_requests([row])
    store.write([("results", result_row(row["request_id"], "failed"))])
    store.write([("results", result_row(row["request_id"], "ok"))])
    assert [tuple(r) for r in store.query("SELECT status, error FROM results")] == [("ok", None)]


def test_results_must_reference_a_request(store: Store) -> None:
    with pytest.raises(StoreError, match="names request no-such-request, which is not stored"):
        store.write([("results", result_row("no-such-request"))])
    with pytest.raises(sqlite3.IntegrityError, match="rid and request_id name different requests"):
        connection(store).execute("INSERT INTO results (rid, request_id, status, completed_at) "
                                  "VALUES (1, 'no-such-request', 'ok', 0)")
    assert store.query("SELECT count(*) FROM results")[0][0] == 0


def test_items_roundtrip_in_utf8(store: Store) -> None:
    from dialectbias.data import Item

    item = Item(id="q1", variants={"standard": "নদীর নাম কী?"}, gold={"a": 1}, metadata={"src": "ওয়েব"})
    assert store.save_items([item]) == 1
    assert list(store.iter_items()) == [item]
    raw = store.query("SELECT variants FROM items")[0][0]
    assert "নদীর" in raw  # stored as UTF-8, not \\u escapes


def test_a_v1_store_is_migrated_in_place_keeping_its_data(tmp_path: Path) -> None:
    import sqlite3

    from dialectbias.store._schema import MIGRATIONS

    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);" + MIGRATIONS[1]
                       + "INSERT INTO meta VALUES ('schema_version', '1');"
                       + "INSERT INTO cache VALUES ('k', 'out', 'stop', 1, 2, 0.1, 0);")
    conn.close()
    with Store.open(path) as s:
        assert s.schema_version == SCHEMA_VERSION >= 2
        assert s.query("SELECT output FROM cache")[0][0] == "out"
        assert s.query("SELECT count(*) FROM compiled")[0][0] == 0


def test_a_v2_store_gets_the_judgment_source_column(tmp_path: Path) -> None:
    """Migration 3: a judgment names the request it was parsed from; unknown for re-asks made before v3."""
    import sqlite3

    from dialectbias.store._schema import MIGRATIONS

    path = tmp_path / "v2.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);" + MIGRATIONS[1]
                       + MIGRATIONS[2] + "INSERT INTO meta VALUES ('schema_version', '2');")
    for rid, status in (("a", "ok"), ("b", "reasked"), ("c", "failed")):
        conn.execute("INSERT INTO requests VALUES (?, 'judge', 'j', 'q1', 'sylhet', '[]', 't', 'h', '[]', "
                     "'{}', NULL, 'k', '{}', 0)", (rid,))
        conn.execute("INSERT INTO judgments (request_id, judge_id, model_id, item_id, variant, rubric, "
                     "parse_status) VALUES (?, 'j', 'm', 'q1', 'sylhet', 'rlaif_v1', ?)", (rid, status))
    conn.commit()
    conn.close()
    with Store.open(path) as s:
        assert s.schema_version == SCHEMA_VERSION >= 3
        assert dict(s.query("SELECT request_id, source_request_id FROM judgments").__iter__()) == {
            "a": "a", "b": None, "c": "c"}


def test_every_connection_has_a_bounded_page_cache_larger_than_sqlites_default(tmp_path: Path,
                                                                              monkeypatch: Any) -> None:
    """Lookups and inserts by request id hit random B-tree pages: SQLite's 2 MiB default re-read a page for most of
    them in a 10×-paper store, so compile and resume grew faster than the study (benchmarks/tenx.py, issue 23)."""
    from dialectbias.store._store import CACHE_ENV, CACHE_KIB

    monkeypatch.delenv(CACHE_ENV, raising=False)
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.query("PRAGMA cache_size")[0][0] == -CACHE_KIB
    assert 2_000 < CACHE_KIB <= 262_144  # larger than the default, and a fixed bound: memory stays flat


def test_the_page_cache_follows_the_environment_at_every_open(tmp_path: Path, monkeypatch: Any) -> None:
    from dialectbias.store._store import CACHE_ENV, CACHE_KIB

    for value, kib in (("512", 512 * 1024), (" 2 ", 2048), ("", CACHE_KIB)):
        monkeypatch.setenv(CACHE_ENV, value)
        with Store.open(tmp_path / "s.sqlite") as store:
            assert store.query("PRAGMA cache_size")[0][0] == -kib, value
