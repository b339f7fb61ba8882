"""Migration 7 (the review app): a v6 store gains annotators, assignments and calibration snapshots; its
annotations (CSV imports) are kept and count as the annotators' own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dialectbias.store import Store
from store_sql import connection, store_at_version


def v6_store(path: Path) -> None:
    conn = store_at_version(path, 6)
    conn.execute("INSERT INTO annotations (target_id, annotator, kind, value, created_at) "
                 "VALUES ('j1', 'rahim', 'judgment_override', '{\"score\": 7.5}', 1)")
    conn.commit()
    conn.close()


def test_a_v6_store_gains_the_review_tables(tmp_path: Path) -> None:
    v6_store(tmp_path / "s.sqlite")
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version >= 7
        tables = {r[0] for r in store.query("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"annotators", "assignments", "calibration_snapshots"} <= tables
        columns = {r[1] for r in store.query("PRAGMA table_info(annotators)")}
        assert columns == {"name", "token_hash", "dialects", "queues", "created_at", "updated_at"}
        assert store.query("SELECT annotator, value FROM annotations")[0][:] == ("rahim", '{"score": 7.5}')


def test_assignments_are_unique_per_queue_target_and_annotator(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite") as store:
        connection(store).execute("INSERT INTO annotators VALUES ('a', 'h1', '[]', '[]', 0, 0)")
        connection(store).execute("INSERT INTO annotators VALUES ('b', 'h2', '[]', '[]', 0, 0)")
        row = "INSERT INTO assignments VALUES (?, 'judgments', 't1', 'q1', 'sylhet', ?, 0)"
        connection(store).execute(row, ("x1", "a"))
        connection(store).execute(row, ("x2", "b"))  # a second annotator on the same item: overlap
        with pytest.raises(sqlite3.IntegrityError):
            connection(store).execute(row, ("x3", "a"))
        with pytest.raises(sqlite3.IntegrityError):  # a token hash names one annotator
            connection(store).execute("INSERT INTO annotators VALUES ('c', 'h1', '[]', '[]', 0, 0)")
        with pytest.raises(sqlite3.IntegrityError):  # an assignment names an existing annotator
            connection(store).execute(row, ("x4", "nobody"))
