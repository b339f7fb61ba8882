"""Migration 11 (issue 23): `requests_stage_model` without the request id, so that a compile appends to each
(stage, model)'s entries instead of writing each new request at a random place in the index (its id is a
content hash). A v10 store gains the narrower index with its rows unchanged, and the reads by stage and model
give what they gave."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dialectbias.store import Store, retry_attempts
from store_sql import connection, insert_request, store_at_version


def index_columns(conn: sqlite3.Connection, name: str) -> list[str]:
    return [r[2] for r in conn.execute(f"PRAGMA index_info({name})")]


def test_a_v10_store_gains_the_narrower_index_and_reads_the_same(tmp_path: Path) -> None:
    conn = store_at_version(tmp_path / "s.sqlite", 10)
    assert index_columns(conn, "requests_stage_model") == ["stage", "model_id", "request_id"]
    insert_request(conn, "g0", "generate", "m", "q1")
    insert_request(conn, "g1", "generate", "m", "q2", meta='{"retry_of": "g0", "attempt": 2}')
    insert_request(conn, "g2", "generate", "other", "q1")
    conn.commit()
    conn.close()
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version >= 11
        assert index_columns(connection(store), "requests_stage_model") == ["stage", "model_id"]
        assert [r[0] for r in store.query("SELECT request_id FROM requests ORDER BY rowid")] == ["g0", "g1", "g2"]
        assert retry_attempts(store, "generate", "m") == {"g0": 2}
        assert store.pending_counts("generate") == {"m": 2, "other": 1}
        assert [r["request_id"] for r in store.pending_requests("generate", "m")] == ["g0", "g1"]


def test_a_new_store_has_it(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite") as store:
        assert index_columns(connection(store), "requests_stage_model") == ["stage", "model_id"]
