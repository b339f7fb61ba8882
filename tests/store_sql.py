"""Raw SQL for tests: a test reads or sets up a row below the store's typed interface (the schema, a
migration, a row exactly as stored). The package itself never does this: only `dialectbias.store` writes SQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from dialectbias.store import Store


def connection(store: Store) -> sqlite3.Connection:
    """The store's SQLite connection (autocommit mode; rows are `sqlite3.Row`)."""
    return store._conn


def sql(store: Store, text: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
    """The rows of one statement run on the store."""
    return store._conn.execute(text, params).fetchall()
