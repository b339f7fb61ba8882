"""SQLite run store (WAL): requests, results, cache, judgments, annotations."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from dialectbias.data import Item
from dialectbias.errors import StoreError
from dialectbias.store._schema import MIGRATIONS, SCHEMA_VERSION


def dumps(value: Any) -> str:
    """Canonical UTF-8 JSON (sorted keys, no ASCII escaping) used for storage and hashing."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def dumps_ordered(value: Any) -> str:
    """UTF-8 JSON keeping key order: for JSON schemas, where property order is what the model sees."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Store:
    """One experiment's store. Open with `Store.open(path)`; use as a context manager."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Store:
        path = Path(path)
        if not create and not path.is_file():
            raise StoreError(f"{path}: no run store yet (run `dialectbias run` first)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            store = cls(conn, path)
            store._migrate()
            conn.execute("CREATE TEMP TABLE current_requests (request_id TEXT PRIMARY KEY)")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: cannot open the run store ({exc})") from None
        return store

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    # -- schema ---------------------------------------------------------------------------
    def _migrate(self) -> None:
        self.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store schema v{version} is newer than this dialectbias "
                             f"(v{SCHEMA_VERSION}); upgrade dialectbias")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            try:  # one migration = one transaction, inside the script so executescript cannot split it
                self.conn.executescript(
                    f"BEGIN IMMEDIATE;{MIGRATIONS[target]};"
                    f"INSERT OR REPLACE INTO meta VALUES ('schema_version', '{target}');COMMIT;")
            except sqlite3.DatabaseError:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])

    def transaction(self) -> _Transaction:
        return _Transaction(self.conn)

    # -- experiments and items ------------------------------------------------------------
    def save_experiment(self, name: str, task: str, config: dict[str, Any]) -> None:
        now = time.time()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO experiments VALUES (?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET "
                "task=excluded.task, config=excluded.config, updated_at=excluded.updated_at",
                (name, task, dumps(config), now, now))

    def experiment(self) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM experiments ORDER BY updated_at DESC LIMIT 1").fetchone()
        return None if row is None else {**dict(row), "config": json.loads(row["config"])}

    def save_items(self, items: Iterable[Item]) -> int:
        """Replace the item set with the experiment's current data (results are kept)."""
        n = 0
        with self.transaction():
            self.conn.execute("DELETE FROM items")
            for item in items:
                self.conn.execute(
                    "INSERT OR REPLACE INTO items VALUES (?,?,?,?,?,?,?)",
                    (item.id, item.domain, item.question_type, dumps(item.variants), dumps(item.gold),
                     dumps(item.validated_by), dumps(item.metadata)))
                n += 1
        return n

    def iter_items(self) -> Iterator[Item]:
        for row in self.conn.execute("SELECT * FROM items ORDER BY item_id"):
            yield Item(id=row["item_id"], domain=row["domain"], question_type=row["question_type"],
                       variants=json.loads(row["variants"]), gold=json.loads(row["gold"]),
                       validated_by=json.loads(row["validated_by"]), metadata=json.loads(row["metadata"]))

    # -- requests, results, cache ---------------------------------------------------------
    def add_requests(self, rows: Iterable[dict[str, Any]], *, fingerprint: str | None = None) -> int:
        """Insert request rows (dicts with the `requests` columns; existing ids are left alone) and mark
        them as this run's: pending work is only what the current experiment file asks for.

        With a `fingerprint`, the set is also recorded under it; `save_compiled` then makes it reusable."""
        cols = ("request_id", "stage", "model_id", "item_id", "variant", "refs", "template", "prompt_hash",
                "messages", "params", "json_schema", "cache_key", "meta", "created_at")
        sql = f"INSERT OR IGNORE INTO requests ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})"
        n = 0
        iterator = iter(rows)
        with self.transaction():
            while chunk := [tuple(row[c] for c in cols) for row in islice(iterator, 1000)]:
                ids = [(values[0],) for values in chunk]
                self.conn.executemany(sql, chunk)
                self.conn.executemany("INSERT OR IGNORE INTO temp.current_requests VALUES (?)", ids)
                if fingerprint:
                    self.conn.executemany("INSERT OR IGNORE INTO compiled_requests VALUES (?, ?)",
                                          [(fingerprint, rid) for (rid,) in ids])
                n += len(chunk)
        return n

    def save_compiled(self, fingerprint: str, stage: str, model_id: str, n_requests: int, n_skipped: int,
                      notes: dict[str, int]) -> None:
        """Mark a request set as complete (written after its rows: a crash in between only means a rebuild)."""
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO compiled VALUES (?,?,?,?,?,?,?)",
                              (fingerprint, stage, model_id, n_requests, n_skipped, dumps(notes), time.time()))

    def use_compiled(self, fingerprint: str) -> sqlite3.Row | None:
        """Mark a previously compiled request set as this run's; None when there is none."""
        row = self.conn.execute("SELECT * FROM compiled WHERE fingerprint=?", (fingerprint,)).fetchone()
        if row is not None:
            self.conn.execute("INSERT OR IGNORE INTO temp.current_requests "
                              "SELECT request_id FROM compiled_requests WHERE fingerprint=?", (fingerprint,))
        return row

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def pending_requests(self, stage: str, model_id: str, *, after: str = "", limit: int = 1000
                         ) -> list[sqlite3.Row]:
        """Requests with no successful result, in id order (keyset pagination with `after`)."""
        return self.conn.execute(
            "SELECT r.*, c.output AS cached_output, c.finish_reason AS cached_finish, "
            "c.tokens_in AS cached_in, c.tokens_out AS cached_out "
            "FROM temp.current_requests cr JOIN requests r ON r.request_id = cr.request_id "
            "LEFT JOIN results s ON s.request_id = r.request_id "
            "LEFT JOIN cache c ON c.cache_key = r.cache_key "
            "WHERE r.stage=? AND r.model_id=? AND r.request_id>? AND (s.status IS NULL OR s.status != 'ok') "
            "ORDER BY r.request_id LIMIT ?", (stage, model_id, after, limit)).fetchall()

    def count_pending(self, stage: str, model_id: str) -> int:
        return self.conn.execute(
            "SELECT count(*) FROM temp.current_requests cr JOIN requests r ON r.request_id = cr.request_id "
            "LEFT JOIN results s ON s.request_id = r.request_id "
            "WHERE r.stage=? AND r.model_id=? AND (s.status IS NULL OR s.status != 'ok')",
            (stage, model_id)).fetchone()[0]

    def cached(self, cache_key: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM cache WHERE cache_key=?", (cache_key,)).fetchone()

    def write(self, batch: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Write (table, row) pairs in one transaction: a result and what derives from it land together."""
        groups: dict[tuple[str, tuple[str, ...]], list[tuple[Any, ...]]] = {}
        for table, row in batch:  # rows of one request never share a table, so grouping keeps atomicity
            groups.setdefault((table, tuple(row)), []).append(tuple(row.values()))
        with self.transaction():
            for (table, cols), values in groups.items():
                self.conn.executemany(
                    f"INSERT OR REPLACE INTO {table} ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", values)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def iter_query(self, sql: str, params: Sequence[Any] = ()) -> Iterator[sqlite3.Row]:
        cur = self.conn.execute(sql, params)
        while rows := cur.fetchmany(2000):
            yield from rows


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on error (the connection runs in autocommit mode)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
