"""The store's SQLite connection, for tests that set up or inspect rows below the store's typed interface (a
migration, a row exactly as stored, a dump). The package itself never does this: only `dialectbias.store`
holds SQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dialectbias.store import Store


def connection(store: Store) -> sqlite3.Connection:
    """The store's connection (autocommit mode; rows are `sqlite3.Row`)."""
    return store._conn


def store_at_version(path: Path, version: int) -> sqlite3.Connection:
    """A new store file at `path` as dialectbias left it at schema `version` (migrations 1..version, no rows):
    the connection, for the test to add the old rows (it commits and closes)."""
    from dialectbias.store._schema import MIGRATIONS

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for n in range(1, version + 1):
        conn.executescript(MIGRATIONS[n])
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
    return conn
