"""The explorer's store access (`store.open_read_only`): it cannot write, never migrates, and says what to do
about a missing store or another schema version; `StoreWatch` tells when another process changed the store."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dialectbias.errors import StoreError
from dialectbias.store import SCHEMA_VERSION, Store, StoreWatch, open_read_only


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


def _write(path: Path, sql: str) -> None:
    """`sql` committed by another process."""
    subprocess.run([sys.executable, "-c", f"import sqlite3; sqlite3.connect({str(path)!r}, isolation_level=None)"
                    f".execute({sql!r})"], check=True, timeout=60)


def test_store_watch_follows_every_commit_of_another_process(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store.open(path) as store:
        store.set_meta("x", "1")
    watch = StoreWatch(path)
    try:
        first = watch.mark()
        assert watch.mark() == first  # nothing changed
        marks = [first]
        for sql in ("UPDATE meta SET value = '2' WHERE key = 'x'",  # in place: no row added or removed
                    "DELETE FROM meta WHERE key = 'x'", "INSERT INTO meta VALUES ('y', '3')"):
            _write(path, sql)
            marks.append(watch.mark())
            assert marks[-1] not in marks[:-1], sql
            assert watch.mark() == marks[-1]
        other = tmp_path / "other.sqlite"
        Store.open(other).close()
        os.replace(other, path)  # another store in its place
        assert watch.mark() not in marks
        path.unlink()
        with pytest.raises(StoreError, match=r"s\.sqlite: no run store yet"):
            watch.mark()
    finally:
        watch.close()
