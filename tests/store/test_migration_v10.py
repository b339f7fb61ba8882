"""Migration 10 (issue 23): the indexes that let a resume read indexes, not wide rows. A resume with everything
done grew 16–25× for 10× the paper (benchmarks/tenx.py); these check that the queries it makes use the indexes
(SQLite's own plan), and that a v9 store gains them with its rows unchanged."""

from __future__ import annotations

from pathlib import Path

from dialectbias.store import (
    Store,
    judge_counts,
    judge_yields,
    judgments_to_rescore,
    overrides_to_rescore,
    retry_attempts,
)
from dialectbias.store._judgments import LATEST_CURRENT_SQL
from store_sql import connection, insert_judgment, insert_request, store_at_version
from store_sql import query_plan as plan


def v9_store(path: Path) -> None:
    conn = store_at_version(path, 9)
    for i, meta in enumerate(('{}', '{"retry_of": "j0", "attempt": 1}')):
        insert_request(conn, f"j{i}", "judge", "judge-1", "q1", meta=meta)
        conn.execute("INSERT INTO results (request_id, status, output, completed_at) VALUES (?, 'ok', 'x', 0)",
                     (f"j{i}",))
        insert_judgment(conn, f"j{i}", "judge-1", "m", "q1", score=float(i))
    conn.commit()
    conn.close()


def test_a_v9_store_gains_the_indexes_and_reads_the_same(tmp_path: Path) -> None:
    v9_store(tmp_path / "s.sqlite")
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version >= 10
        names = {r[0] for r in store.query("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"judgments_key", "requests_retries", "results_status_of"} <= names
        assert "judgments_model" not in names  # judgments_key leads with the same columns
        counts = judge_counts(store, ["judge-1"])["judge-1"]
        assert counts.judgments == 1  # j0 and j1 share a key: the latest (j1) counts
        assert store.count_pending("judge", "judge-1") == 0
        assert [j.request_id for b in judgments_to_rescore(store, "judge-1", "fp") for j in b] == ["j0", "j1"]


def test_the_resumes_queries_read_indexes(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite") as store:
        latest = plan(store, f"SELECT count(*) FROM judgments j WHERE {LATEST_CURRENT_SQL}")
        assert "request_id=?" not in latest  # test_current_judgment_reads.py
        trace: list[str] = []
        connection(store).set_trace_callback(trace.append)
        retry_attempts(store, "judge", "m")
        assert "requests_retries" in plan(store, trace.pop())  # the few retried rows, not the stage's every request
        store.count_pending("judge", "m")
        store.pending_counts("judge")
        store.result_counts()
        assert all("results_status_of" in plan(store, sql) for sql in trace if "results" in sql)
        # every model's count in one sweep in request-id order (the primary key), not one sweep per model
        sweep = next(sql for sql in trace if sql.startswith("SELECT cr.model_id, count(*)"))  # pending_counts
        assert plan(store, sweep).startswith("SCAN cr |")
        trace.clear()
        store.result_counts()
        judge_yields(store)
        connection(store).set_trace_callback(None)
        # a current request's stage and model are in current_requests: no request row is read for them
        assert len(trace) == 2 and not any("requests r" in sql or "SEARCH r " in plan(store, sql) for sql in trace)


def test_rescore_batches_continue_in_rowid_order_and_overrides_start_from_annotations(tmp_path: Path) -> None:
    """Each batch of `judgments_to_rescore` continues at the last rowid (no re-sort of what is left: n²/batch at
    10×); `overrides_to_rescore` walks the annotations, never the judge's judgments."""
    with Store.open(tmp_path / "s.sqlite") as store:
        insert_request(connection(store), "j0", "judge", "judge-1", "q1")
        insert_judgment(connection(store), "j0", "judge-1", "m", "q1")  # scored before v8: stale
        trace: list[str] = []
        connection(store).set_trace_callback(trace.append)
        list(judgments_to_rescore(store, "judge-1", "fp"))
        list(overrides_to_rescore(store, "judge-1", "fp"))
        connection(store).set_trace_callback(None)
        batch = next(sql for sql in trace if "LIMIT 2000" in sql and "FROM judgments j" in sql)
        rescore = plan(store, batch.replace("LIMIT 2000", "LIMIT 1"))  # from the (judge, scoring, rowid) index
        assert rescore.startswith("SEARCH j USING INDEX judgments_scoring (judge_id=? AND scoring=? AND rowid>?)")
        assert "TEMP B-TREE" not in rescore
        walk = next(sql for sql in trace if "FROM annotations" in sql)
        overrides = plan(store, walk.replace("LIMIT 2000", "LIMIT 1"))
        assert overrides.startswith("SEARCH a USING INTEGER PRIMARY KEY (rowid>")
