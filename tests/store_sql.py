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


def insert_request(conn: sqlite3.Connection, request_id: str, stage: str, model_id: str, item_id: str, *,
                   variant: str = "sylhet", meta: str = "{}") -> None:
    """A request row as a test needs it: placeholder prompt fields (template `t`, hash `h`, no messages)."""
    conn.execute("INSERT INTO requests (request_id, stage, model_id, item_id, variant, template, prompt_hash, "
                 "messages, params, cache_key, created_at, meta) VALUES (?, ?, ?, ?, ?, 't', 'h', '[]', '{}', ?, 0, ?)",
                 (request_id, stage, model_id, item_id, variant, f"k{request_id}", meta))


def insert_judgment(conn: sqlite3.Connection, request_id: str, judge_id: str, model_id: str, item_id: str, *,
                    variant: str = "sylhet", score: float | None = None, parse_status: str = "ok",
                    reason: str | None = None) -> None:
    """A judgment row of rubric `r` with an empty parsed answer."""
    conn.execute("INSERT INTO judgments (request_id, judge_id, model_id, item_id, variant, rubric, parsed, score, "
                 "parse_status, reason) VALUES (?, ?, ?, ?, ?, 'r', '{}', ?, ?, ?)",
                 (request_id, judge_id, model_id, item_id, variant, score, parse_status, reason))


def query_plan(store: Store, sql: str, params: tuple[object, ...] = ()) -> str:
    """SQLite's plan for `sql` on the store, its steps joined by ` | `."""
    return " | ".join(r[3] for r in connection(store).execute(f"EXPLAIN QUERY PLAN {sql}", params))
