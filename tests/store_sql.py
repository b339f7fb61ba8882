"""The store's SQLite connection, for tests that set up or inspect rows below the store's typed interface (a
migration, a row exactly as stored, a dump). The package itself never does this: only `dialectbias.store`
holds SQL."""

from __future__ import annotations

import sqlite3

from dialectbias.store import Store


def connection(store: Store) -> sqlite3.Connection:
    """The store's connection (autocommit mode; rows are `sqlite3.Row`)."""
    return store._conn
