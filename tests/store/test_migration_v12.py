"""Migration 12 (issue 23): `judgments_scoring` (judge, scoring fingerprint). Every command that opens an
experiment asks each judge whether any judgment was scored with other settings (`JudgedTask.rescore`); before
the index each question read the whole `judgments` table, however few were stale. A v11 store gains the index;
the stale judgments of every old fingerprint (NULL: scored before v8) are found, in batches, and only current
ones; with nothing stale no judgment row is read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dialectbias.store import Store, judgments_to_rescore, stale_scorings, update_judgments
from store_sql import connection, insert_judgment, insert_request, leave_current, store_at_version

JUDGE = "judge-1"


def _judged(conn: sqlite3.Connection, i: int, scoring: str | None, *, current: bool = True) -> str:
    rid = f"j{i}"
    insert_request(conn, rid, "judge", JUDGE, f"q{i}")
    insert_judgment(conn, rid, JUDGE, "m", f"q{i}", score=1.0)
    conn.execute("UPDATE judgments SET scoring = ? WHERE request_id = ?", (scoring, rid))
    if not current:
        leave_current(conn, rid)
    return rid


def _v11_store(path: Path) -> None:
    conn = store_at_version(path, 11)
    for i, scoring in enumerate(["new", "old", None, "new", "older", "old", "new"]):
        _judged(conn, i, scoring)
    _judged(conn, 7, "old", current=False)  # superseded: never re-scored
    insert_request(conn, "other", "judge", "judge-2", "q0")
    insert_judgment(conn, "other", "judge-2", "m", "q0")
    conn.commit()
    conn.close()


def _rescored(store: Store, batch: int) -> list[list[str]]:
    seen = []
    for stale in judgments_to_rescore(store, JUDGE, "new", batch=batch):
        seen.append([j.request_id for j in stale])
        update_judgments(store, [{"request_id": j.request_id, "parse_status": "ok", "parsed": "{}", "score": 2.0,
                                  "confidence": None, "checks": "{}", "flags": "[]", "clipped": "{}",
                                  "needs_review": 0, "flagged": 0, "reason": None, "scoring": "new"}
                                 for j in stale])
    return seen


def test_a_v11_store_gains_the_index_and_every_stale_judgment_is_rescored_once(tmp_path: Path) -> None:
    _v11_store(tmp_path / "s.sqlite")
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version >= 12
        assert [r[2] for r in connection(store).execute("PRAGMA index_info(judgments_scoring)")] == [
            "judge_id", "scoring"]
        assert stale_scorings(store, JUDGE, "new") == [None, "old", "older"]
        assert stale_scorings(store, "judge-2", "new") == [None]
        # each fingerprint's stale judgments in rowid order; the superseded j7 is left as it is
        assert _rescored(store, 1) == [["j2"], ["j1"], ["j5"], ["j4"]]
        assert list(judgments_to_rescore(store, JUDGE, "new")) == []
        rows = dict(store.query("SELECT request_id, scoring FROM judgments WHERE judge_id = ?", (JUDGE,)))
        assert rows == {**{f"j{i}": "new" for i in range(7)}, "j7": "old"}


def test_with_nothing_stale_no_judgment_row_is_read(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite") as store:
        conn = connection(store)
        for i in range(3):
            _judged(conn, i, "new")
        conn.commit()
        trace: list[str] = []
        conn.set_trace_callback(trace.append)
        assert list(judgments_to_rescore(store, JUDGE, "new")) == []
        conn.set_trace_callback(None)
        assert trace  # the probes ran
        plans = [" | ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in trace]
        assert all(p.startswith("SEARCH judgments USING COVERING INDEX judgments_scoring") for p in plans), plans
