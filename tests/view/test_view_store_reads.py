"""The explorer's store access (`store.open_read_only`): it cannot write, never migrates, and says what to do
about a missing store or another schema version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dialectbias.errors import StoreError
from dialectbias.store import SCHEMA_VERSION, Store, open_read_only


def test_read_only_store_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Store.open(path).close()
    store = open_read_only(path)
    try:
        assert store.schema_version == SCHEMA_VERSION
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only|query_only"):
            store.set_meta("x", "y")
    finally:
        store.close()


def test_read_only_store_messages(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"no run store yet \(run `dialectbias run` first\)"):
        open_read_only(tmp_path / "none.sqlite")
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '3')")
    with pytest.raises(StoreError, match=f"schema v3, this dialectbias reads v{SCHEMA_VERSION}.*never writes"):
        open_read_only(old)
    with sqlite3.connect(old) as conn:  # untouched: not migrated
        assert conn.execute("SELECT value FROM meta").fetchone()[0] == "3"
