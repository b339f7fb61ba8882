"""SQLite run store (WAL): requests, their content-addressed parts, results, cache, judgments, annotations."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import Any, Literal

from dialectbias.data import Item
from dialectbias.errors import StoreError
from dialectbias.store._content import SCHEMA_REF_PREFIX, ContentRow, read_data, stored_data, unpack_messages
from dialectbias.store._records import ResultCounts, StageResult
from dialectbias.store._schema import MIGRATION_CHECKS, MIGRATIONS, RESULT_STATUS_INDEX, SCHEMA_VERSION

#: the key of a request row (`RequestSpec.to_row`) holding the `content` rows it refers to; not a column:
#: `add_requests` and `write` store them, once each, in the request's transaction
PARTS_KEY = "parts"
#: a re-ask's stage is its first request's stage plus this suffix (`run/_postcall.py`)
REASK_SUFFIX = ":reask"
#: the columns of a request row (`RequestSpec.to_row`; besides `PARTS_KEY`)
REQUEST_COLUMNS = ("request_id", "stage", "model_id", "item_id", "variant", "refs", "template", "prompt_hash",
                   "messages", "params", "json_schema", "cache_key", "meta", "created_at")
#: the tables `Store.write` takes rows of: what finishing a request writes (its result, the cache entry, a
#: re-ask's request, and what a stage's `finalize` derives: a judgment, an annotation); every other table is
#: written by a method of its own
WRITABLE_TABLES = ("requests", "results", "cache", "judgments", "annotations")
#: the tables whose rows take their request's integer key (`rid`, schema v15): `write` finds it by request id
KEYED_BY_REQUEST = ("results", "judgments")


def dumps(value: Any) -> str:
    """Canonical UTF-8 JSON (sorted keys, no ASCII escaping) used for storage and hashing."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def dumps_ordered(value: Any) -> str:
    """UTF-8 JSON keeping key order: for JSON schemas, where property order is what the model sees."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


#: SQLite's page cache per connection, in KiB (its default is 2 MiB). Inserts and lookups by request id land on
#: random pages of the primary-key B-trees; with 2 MiB a 10×-paper store (16 GB) re-read a page for most of them,
#: and compile and resume cost grew faster than the study (issue 23). A fixed bound: memory stays flat. Temporary
#: B-trees keep SQLite's 2 MiB: the same bound for them cost the SQLite side of a 10× judge compile (the workload of
#: benchmarks/compile_inserts.py) 68 MB more peak memory and no CPU (184 s with 2 MiB, 193 s with 64 MiB).
CACHE_KIB = 65_536
#: the environment variable that sets `CACHE_KIB` in MiB for every `Store.open` of this process. Measured in a
#: 10×-paper study, 1 GiB bought no CPU and cost ~1 GB a step (docs/scale.md "The page cache"; benchmarks/tenx.py)
CACHE_ENV = "DIALECTBIAS_STORE_CACHE_MIB"
#: what CACHE_ENV may be, in MiB: SQLite's default (2 MiB) up to 64 GiB
CACHE_MIB_RANGE = (2, 65_536)


def cache_kib() -> int:
    """The page cache of a store connection, in KiB: $DIALECTBIAS_STORE_CACHE_MIB × 1024, else `CACHE_KIB`.
    StoreError naming the variable when it is not a whole number of MiB in `CACHE_MIB_RANGE`."""
    raw = os.environ.get(CACHE_ENV, "").strip()
    if not raw:
        return CACHE_KIB
    lo, hi = CACHE_MIB_RANGE
    try:
        mib = int(raw)
    except ValueError:
        mib = None
    if mib is None or not lo <= mib <= hi:
        raise StoreError(f"{CACHE_ENV}={raw!r}: give the store's page cache as a whole number of MiB from {lo} "
                         f"to {hi:,} (unset: {CACHE_KIB // 1024})")
    return mib * 1024


def is_current(alias: str) -> str:
    """SQL: the row `alias` (a request, result or judgment: keyed by its request's `rid`) belongs to the
    experiment as it is now (`Store`: current rows)."""
    return f"{alias}.rid IN (SELECT rid FROM current_requests)"


#: a current request (`cr`) with its result's status, if any (`s`), and the test for one still to be sent
_WITH_RESULT = f"LEFT JOIN results s INDEXED BY {RESULT_STATUS_INDEX} ON s.rid = cr.rid"
_PENDING = "(s.status IS NULL OR s.status != 'ok')"
#: what `Store.pending_requests` gives of a request (`r`) and its cache entry (`c`)
PENDING_COLUMNS = (
    f"CASE WHEN substr(r.json_schema, 1, {len(SCHEMA_REF_PREFIX)}) = '{SCHEMA_REF_PREFIX}' "
    f"THEN (SELECT data FROM content WHERE sha256 = substr(r.json_schema, {len(SCHEMA_REF_PREFIX) + 1})) "
    "ELSE r.json_schema END AS json_schema, r.*, c.output AS cached_output, c.finish_reason AS cached_finish, "
    "c.tokens_in AS cached_in, c.tokens_out AS cached_out")
#: the test for a current request (`cr`) with a successful result, answered from the results' (key, status)
#: index alone: no result row is read
_DONE = (f"EXISTS (SELECT 1 FROM results s INDEXED BY {RESULT_STATUS_INDEX} "
         "WHERE s.rid = cr.rid AND s.status = 'ok')")


class Store:
    """One experiment's store. Open with `Store.open(path)`; use as a context manager."""

    #: store long text parts zstd-compressed (`store/_content.py`, schema v9); False: as given (reads take both)
    compress_parts = True

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._table_columns: dict[str, frozenset[str]] = {}
        self._pending_memo: dict[str, tuple[tuple[int, int], dict[str, int]]] = {}

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Store:
        path = Path(path)
        if not create and not path.is_file():
            raise StoreError(f"{path}: no run store yet (run `dialectbias run` first)")
        kib = cache_kib()  # before anything is written
        conn: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(f"PRAGMA cache_size=-{kib}")
            store = cls(conn, path)
            store._migrate()
        except BaseException as exc:
            if conn is not None:  # (its statement cache is a cycle: left to the collector, it would stay open)
                conn.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise StoreError(f"{path}: cannot open the run store ({exc})") from None
            raise
        return store

    @classmethod
    def open_copy(cls, source: str | Path, target: str | Path) -> Store:
        """A copy of the store at `source` (SQLite's online backup: consistent while a run writes it), opened
        at `target`, e.g. for a plan to compile into without touching the experiment's; a new store when there
        is none at `source`."""
        if Path(source).exists():
            with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src, \
                    closing(sqlite3.connect(target)) as dst:
                src.backup(dst)
        return cls.open(target)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    # -- schema ---------------------------------------------------------------------------
    def _migrate(self) -> None:
        self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store schema v{version} is newer than this dialectbias "
                             f"(v{SCHEMA_VERSION}); upgrade dialectbias")
        if version == SCHEMA_VERSION:
            return
        # a migration may rebuild a table others refer to (v15): foreign keys are checked once it is done, before
        # its commit (the pragma cannot change inside a transaction)
        self._conn.execute("PRAGMA foreign_keys=OFF")
        # the old tables' rows live on, copied (v15): zeroing their pages as they are freed (this SQLite's
        # secure_delete default) would write them all once more, into the log or the journal
        secure_delete = self._conn.execute("PRAGMA secure_delete").fetchone()[0]
        self._conn.execute("PRAGMA secure_delete=OFF")
        journaled = version > 0 and self._rollback_journal()
        try:
            for target in range(version + 1, SCHEMA_VERSION + 1):
                lost = self._conn.execute(MIGRATION_CHECKS[target]).fetchone() if target in MIGRATION_CHECKS else None
                if lost is not None:  # (the migration checks again inside its transaction)
                    raise StoreError(f"{self.path}: cannot bring the store to schema v{target}: {lost[0]} row "
                                     f"{lost[1]!r} has no request; nothing was changed")
                try:  # one migration = one transaction, inside the script so executescript cannot split it
                    self._conn.executescript(f"BEGIN IMMEDIATE;{MIGRATIONS[target]};")
                    broken = self._conn.execute("PRAGMA foreign_key_check").fetchone()
                    if broken is not None:
                        raise StoreError(f"{self.path}: migration to schema v{target} left a {broken[0]} row "
                                         f"(rowid {broken[1]}) referring to a missing {broken[2]} row")
                    self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(target),))
                    self._conn.execute("COMMIT")
                except (sqlite3.DatabaseError, StoreError):
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
        finally:
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute(f"PRAGMA secure_delete={int(secure_delete)}")
            if journaled:
                self._conn.execute("PRAGMA journal_mode=WAL")

    def _rollback_journal(self) -> bool:
        """Upgrade an existing store under a rollback journal rather than the write-ahead log: a migration that
        rebuilds tables (v15) writes the new ones past the file's old end, which a rollback journal does not
        copy, where the log holds every page written until it is folded in (v15 at 10× the paper: a 651 MB
        journal against an 11.2 GB log, 3.8× less CPU; `benchmarks/migration_journal.py`). A crash mid-way is
        rolled back from the journal on the next open, as from the log. False, and the log is kept, when
        another connection has the store open (SQLite then refuses)."""
        try:
            mode = self._conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        except sqlite3.OperationalError:
            return False
        return str(mode).lower() == "delete"

    @property
    def schema_version(self) -> int:
        return int(self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])

    def transaction(self) -> _Transaction:
        return _Transaction(self._conn)

    # -- experiments and items ------------------------------------------------------------
    def save_experiment(self, name: str, task: str, config: dict[str, Any]) -> None:
        now = time.time()
        with self.transaction():
            self._conn.execute(
                "INSERT INTO experiments VALUES (?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET "
                "task=excluded.task, config=excluded.config, updated_at=excluded.updated_at",
                (name, task, dumps(config), now, now))

    def experiment(self) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT * FROM experiments ORDER BY updated_at DESC LIMIT 1").fetchone()
        return None if row is None else {**dict(row), "config": json.loads(row["config"])}

    def save_items(self, items: Iterable[Item]) -> int:
        """Replace the item set with the experiment's current data (results are kept)."""
        n = 0
        with self.transaction():
            self._conn.execute("DELETE FROM items")
            for item in items:
                self._conn.execute(
                    "INSERT OR REPLACE INTO items VALUES (?,?,?,?,?,?,?)",
                    (item.id, item.domain, item.question_type, dumps(item.variants), dumps(item.gold),
                     dumps(item.validated_by), dumps(item.metadata)))
                n += 1
        return n

    def iter_items(self) -> Iterator[Item]:
        """The stored items, in id order."""
        for row in self._conn.execute("SELECT * FROM items ORDER BY item_id"):
            yield _item(row)

    def item(self, item_id: str) -> Item | None:
        """The stored item with this id, or None."""
        row = self._conn.execute("SELECT * FROM items WHERE item_id = ?", (item_id,)).fetchone()
        return None if row is None else _item(row)

    # -- requests, results, cache ---------------------------------------------------------
    def add_requests(self, rows: Iterable[dict[str, Any]], *, fingerprint: str | None = None,
                     current: tuple[str, str] | None = None) -> int:
        """Insert request rows (dicts with the `requests` columns; existing ids are left alone).

        A new request is current (trigger `requests_are_current`). With `current=(stage, model_id)`, the
        rows are that stage's whole set for the model: they become its current set, replacing the previous
        one (rows no longer asked for are superseded, in the same transaction, so readers see either set).
        With a `fingerprint`, the set is also recorded under it; `save_compiled` then makes it reusable."""
        cols = REQUEST_COLUMNS
        sql = f"INSERT OR IGNORE INTO requests ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})"
        n = 0
        iterator = iter(rows)
        with self.transaction():
            if current or fingerprint:  # the set's keys, new or already stored
                self._conn.execute("CREATE TEMP TABLE IF NOT EXISTS compiling (rid INTEGER PRIMARY KEY)")
                self._conn.execute("DELETE FROM temp.compiling")
            while batch := list(islice(iterator, 1000)):
                self.add_content(part for row in batch for part in row.get(PARTS_KEY, ()))
                chunk = [tuple(row[c] for c in cols) for row in batch]
                self._conn.executemany(sql, chunk)
                if current or fingerprint:
                    self._conn.executemany("INSERT OR IGNORE INTO temp.compiling SELECT rid FROM requests "
                                          "WHERE request_id = ?", [(values[0],) for values in chunk])
                n += len(chunk)
            if fingerprint:
                self._conn.execute("INSERT OR IGNORE INTO compiled_requests SELECT ?, rid FROM temp.compiling",
                                  (fingerprint,))
            if current:
                self._conn.execute("INSERT OR IGNORE INTO current_requests SELECT r.rid, r.stage, r.model_id "
                                  "FROM temp.compiling c JOIN requests r ON r.rid = c.rid")
                self._replace_current(*current, "SELECT rid FROM temp.compiling", (), fingerprint)
        return n

    def save_compiled(self, fingerprint: str, stage: str, model_id: str, n_requests: int, n_skipped: int,
                      notes: dict[str, int]) -> None:
        """Mark a request set as complete (written after its rows: a crash in between only means a rebuild)."""
        with self.transaction():
            self._conn.execute("INSERT OR REPLACE INTO compiled VALUES (?,?,?,?,?,?,?)",
                              (fingerprint, stage, model_id, n_requests, n_skipped, dumps(notes), time.time()))

    def use_compiled(self, fingerprint: str) -> sqlite3.Row | None:
        """Make a previously compiled request set its (stage, model)'s current set; None when there is none.
        A set still applied as it was (`current_stages.applied`, cleared by trigger when a row enters or leaves
        the current set) is only marked as compiled now."""
        row = self._conn.execute("SELECT * FROM compiled WHERE fingerprint=?", (fingerprint,)).fetchone()
        if row is not None:
            with self.transaction():
                if self._conn.execute(
                        "UPDATE current_stages SET compiled_at = ? WHERE stage = ? AND model_id = ? AND applied = ?",
                        (time.time(), row["stage"], row["model_id"], fingerprint)).rowcount:
                    return row
                self._conn.execute(
                    "INSERT OR IGNORE INTO current_requests SELECT rid, ?, ? FROM compiled_requests "
                    "WHERE fingerprint=?", (row["stage"], row["model_id"], fingerprint))
                self._replace_current(row["stage"], row["model_id"],
                                      "SELECT rid FROM compiled_requests WHERE fingerprint=?",
                                      (fingerprint,), fingerprint)
        return row

    # -- current rows ------------------------------------------------------------------------
    # A request is *current* when it belongs to the experiment as it is now: its (stage, model)'s latest
    # compiled set (or, inserted since, e.g. an imported generation), or the re-ask (stage "<stage>:reask",
    # meta.reask_of) of a current request. Everything else is superseded: kept, marked, never counted.

    def _replace_current(self, stage: str, model_id: str, ids_sql: str, params: tuple[Any, ...],
                         fingerprint: str | None) -> None:
        """Inside a transaction, after the new ids were inserted: supersede the (stage, model)'s other rows,
        bring its re-asks in line, record the compile, and prune later requests built on superseded ones."""
        self._start_superseding()
        removed = self._supersede(f"stage=? AND model_id=? AND rid NOT IN ({ids_sql})",
                                  (stage, model_id, *params))
        self._conn.execute(  # `applied`: the triggers on current_requests clear it when the set changes
            "INSERT OR REPLACE INTO current_stages (stage, model_id, fingerprint, compiled_at, applied) "
            "VALUES (?, ?, ?, ?, ?)", (stage, model_id, fingerprint, time.time(), fingerprint))
        removed += self._sync_reasks(f"{stage}{REASK_SUFFIX}", model_id)
        if removed:
            self._prune_orphans()

    def _start_superseding(self) -> None:
        """Inside a transaction: an empty `temp.superseded`, which `_supersede` fills for `_prune_orphans`."""
        self._conn.execute("CREATE TEMP TABLE IF NOT EXISTS superseded (rid INTEGER PRIMARY KEY)")
        self._conn.execute("DELETE FROM temp.superseded")

    def _supersede(self, where: str, params: tuple[Any, ...] = ()) -> int:
        """Take the current requests matching `where` out of the current set, noting their keys in
        `temp.superseded`; returns how many. `where` is evaluated once (the keys noted are the ones deleted:
        those noted earlier in the operation are no longer current, so deleting them again does nothing)."""
        self._conn.execute(f"INSERT OR IGNORE INTO temp.superseded SELECT rid FROM current_requests "
                          f"WHERE {where}", params)
        return self._conn.execute(
            "DELETE FROM current_requests WHERE rid IN (SELECT rid FROM temp.superseded)").rowcount

    def _sync_reasks(self, reask_stage: str, model_id: str) -> int:
        """Make the re-asks of the stage's current requests current, and only those; returns how many were
        superseded."""
        first_is_current = ("EXISTS (SELECT 1 FROM requests q JOIN current_requests c ON c.rid = q.rid "
                            "WHERE q.request_id = json_extract(r.meta, '$.reask_of'))")
        removed = self._supersede(
            f"stage=? AND model_id=? AND rid IN (SELECT r.rid FROM requests r WHERE r.stage=? AND r.model_id=? "
            f"AND NOT {first_is_current})", (reask_stage, model_id, reask_stage, model_id))
        self._conn.execute(
            "INSERT OR IGNORE INTO current_requests SELECT r.rid, r.stage, r.model_id FROM requests r "
            f"WHERE r.stage=? AND r.model_id=? AND {first_is_current}", (reask_stage, model_id))
        return removed

    def _prune_orphans(self) -> None:
        """Supersede current requests that refer to a superseded one (a judgment of an old generation, the
        re-ask of an old judge request), until none is left: they were built from what is no longer asked.

        Each pass reads `requests` once in storage order and looks each row's refs up in `temp.superseded`
        (what was just superseded, not the whole current set); what it supersedes is the next pass's set.
        Looking each current request's row up by id instead read the table in random order: 2× the CPU at 10×
        the paper and minutes of disk reads from a cold page cache (issue 23, `benchmarks/prune_pass.py`)."""
        self._conn.execute("CREATE TEMP TABLE IF NOT EXISTS orphans (rid INTEGER PRIMARY KEY)")
        while True:
            self._conn.execute("DELETE FROM temp.orphans")
            self._conn.execute(
                "INSERT INTO temp.orphans SELECT r.rid FROM requests r NOT INDEXED WHERE r.refs != '[]' "
                "AND EXISTS (SELECT 1 FROM json_each(r.refs) ref WHERE ref.value IN (SELECT q.request_id "
                "FROM temp.superseded s CROSS JOIN requests q ON q.rid = s.rid)) "
                f"AND {is_current('r')}")
            self._conn.execute("DELETE FROM temp.superseded")
            if not self._supersede("rid IN temp.orphans"):
                return

    def retire_current(self, keep: Iterable[tuple[str, str]]) -> int:
        """Supersede the rows of every (stage, model) not in `keep` (the experiment's stages × models; their
        re-ask stages are kept with them), and what was built on them. Returns the rows superseded."""
        pairs = {(stage, model) for s, model in keep for stage in (s, f"{s}{REASK_SUFFIX}")}
        with self.transaction():
            self._conn.execute("CREATE TEMP TABLE IF NOT EXISTS keep_stages (stage TEXT, model_id TEXT, "
                              "PRIMARY KEY (stage, model_id))")
            self._conn.execute("DELETE FROM temp.keep_stages")
            self._conn.executemany("INSERT INTO temp.keep_stages VALUES (?, ?)", sorted(pairs))
            gone = ("NOT EXISTS (SELECT 1 FROM temp.keep_stages k WHERE k.stage = {t}.stage "
                    "AND k.model_id = {t}.model_id)")
            self._start_superseding()
            removed = self._supersede(gone.format(t="current_requests"))
            self._conn.execute(f"DELETE FROM current_stages WHERE {gone.format(t='current_stages')}")
            if removed:
                self._prune_orphans()
        return removed

    def current_stages(self) -> dict[tuple[str, str], float]:
        """(stage, model) -> when a run last compiled it; a (stage, model) missing was never compiled."""
        rows = self._conn.execute("SELECT stage, model_id, compiled_at FROM current_stages")
        return {(r[0], r[1]): r[2] for r in rows}

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def delete_meta(self, key: str) -> None:
        """Remove a `meta` entry (nothing happens when there is none)."""
        with self.transaction():
            self._conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def pending_requests(self, stage: str, model_id: str, *, after: int = 0, limit: int = 1000
                         ) -> list[sqlite3.Row]:
        """Requests with no successful result, in compile order (keyset pagination with `after`: the last
        row's `rid`); `json_schema` is the schema itself, also when the row stores it by reference (it comes
        first: `sqlite3.Row` returns the first column of a name, so it hides `r.json_schema`). `messages` is
        the stored form: `resolve_messages` makes it what a provider gets."""
        return self._conn.execute(
            f"SELECT {PENDING_COLUMNS} FROM current_requests cr JOIN requests r ON r.rid = cr.rid "
            "LEFT JOIN cache c ON c.cache_key = r.cache_key "
            f"WHERE cr.stage=? AND cr.model_id=? AND cr.rid>? AND NOT {_DONE} "
            "ORDER BY cr.rid LIMIT ?", (stage, model_id, after, limit)).fetchall()

    # -- what tasks read: current rows only ------------------------------------------------------
    def stage_results(self, stage: str, model_id: str | None = None, *, ok_only: bool = True,
                      template_prefix: str | None = None, ordered: bool = False) -> Iterator[StageResult]:
        """The current requests of a stage (of one model, or of all) with their results: by default only
        the successful ones; `template_prefix` keeps requests whose template starts with it; `ordered` sorts
        by model, then item. Streamed."""
        where = ["cr.stage = ?"]
        params: list[str | int] = [stage]
        if model_id is not None:
            where.append("cr.model_id = ?")
            params.append(model_id)
        if ok_only:
            where.append("s.status = 'ok'")
        if template_prefix is not None:
            where.append("substr(r.template, 1, ?) = ?")
            params += [len(template_prefix), template_prefix]
        rows = self.iter_query(
            "SELECT r.request_id, r.model_id, r.item_id, r.variant, r.template, s.status, s.output, r.meta, r.refs "
            "FROM current_requests cr JOIN requests r ON r.rid = cr.rid "
            f"{'JOIN' if ok_only else 'LEFT JOIN'} results s ON s.rid = r.rid "
            f"WHERE {' AND '.join(where)}{' ORDER BY r.model_id, r.item_id' if ordered else ''}", params)
        for row in rows:
            yield StageResult(*row)

    def result_counts(self) -> dict[tuple[str, str], ResultCounts]:
        """(stage, model id) -> its current requests, successes and failures."""
        rows = self.query(
            "SELECT cr.stage, cr.model_id, count(*), coalesce(sum(s.status='ok'), 0), "
            "coalesce(sum(s.status='failed'), 0) FROM current_requests cr "  # its stage and model are the request's
            f"LEFT JOIN results s INDEXED BY {RESULT_STATUS_INDEX} ON s.rid = cr.rid "
            "GROUP BY cr.stage, cr.model_id")
        return {(r[0], r[1]): ResultCounts(r[2], r[3], r[4]) for r in rows}

    def count_pending(self, stage: str, model_id: str) -> int:
        return self._conn.execute(
            f"SELECT count(*) FROM current_requests cr {_WITH_RESULT} "
            f"WHERE cr.stage=? AND cr.model_id=? AND {_PENDING}",
            (stage, model_id)).fetchone()[0]

    def pending_counts(self, stage: str) -> dict[str, int]:
        """Model id -> its current requests of the stage without a successful result (models with none are left
        out). One pass over `current_requests` in key order, so the lookups sweep the results' index once;
        `count_pending` sweeps it once per model (the paper's generation stage: 19 sweeps per call of an index
        that outgrows the page cache at 10× the paper, issue 23)."""
        version = self._content_version()
        memo = self._pending_memo.get(stage)
        if version is not None and memo is not None and memo[0] == version:
            return dict(memo[1])
        rows = self._conn.execute(
            f"SELECT cr.model_id, count(*) FROM current_requests cr NOT INDEXED {_WITH_RESULT} "
            f"WHERE cr.stage=? AND {_PENDING} GROUP BY cr.model_id", (stage,))
        counts = {r[0]: r[1] for r in rows}
        if version is not None:
            self._pending_memo[stage] = (version, counts)
        return dict(counts)

    def _content_version(self) -> tuple[int, int] | None:
        """What changes whenever the database's content may have: the rows this connection has written so far
        and the commits of other connections (`PRAGMA data_version`). None inside a transaction, which may be
        rolled back. A run asks `pending_counts` three times per stage with nothing written in between (after
        compiling, to prepare the executor, to start it): 0.9 s a sweep at 10× the paper (issue 23)."""
        if self._conn.in_transaction:
            return None
        return self._conn.total_changes, self._conn.execute("PRAGMA data_version").fetchone()[0]

    def cached(self, cache_key: str) -> sqlite3.Row | None:
        return self._conn.execute("SELECT * FROM cache WHERE cache_key=?", (cache_key,)).fetchone()

    def write(self, batch: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Write (table, row) pairs in one transaction: a result and what derives from it land together
        (a request row's content parts too). A table must be one of `WRITABLE_TABLES` and a row's keys its
        columns (checked against the schema): no name a caller passes reaches the SQL unchecked."""
        groups: dict[tuple[str, tuple[str, ...]], list[tuple[Any, ...]]] = {}
        parts: list[ContentRow] = []
        for table, row in batch:  # rows of one request never share a table, so grouping keeps atomicity
            if PARTS_KEY in row:
                parts += row[PARTS_KEY]
                row = {k: v for k, v in row.items() if k != PARTS_KEY}
            key = (table, tuple(row))
            if key not in groups:
                self._check_columns(table, key[1])
            groups.setdefault(key, []).append(tuple(row.values()))
        with self.transaction():
            self.add_content(parts)
            for (table, cols), values in groups.items():
                if table in KEYED_BY_REQUEST:
                    self._write_keyed(table, cols, values)
                elif table == "requests":  # a request stored again keeps its key (what refers to it stays)
                    self._conn.executemany(
                        f"INSERT INTO requests ({','.join(cols)}) VALUES ({','.join('?' * len(cols))}) "
                        f"ON CONFLICT (request_id) DO UPDATE SET {','.join(f'{c} = excluded.{c}' for c in cols)}",
                        values)
                    at = cols.index("request_id")  # and is current, as when it was first inserted
                    self._conn.executemany("INSERT OR IGNORE INTO current_requests SELECT rid, stage, model_id "
                                          "FROM requests WHERE request_id = ?", [(row[at],) for row in values])
                else:
                    self._conn.executemany(f"INSERT OR REPLACE INTO {table} ({','.join(cols)}) "
                                          f"VALUES ({','.join('?' * len(cols))})", values)

    def _write_keyed(self, table: str, cols: tuple[str, ...], values: list[tuple[Any, ...]]) -> None:
        """Rows of a table keyed by their request (`KEYED_BY_REQUEST`): each takes its request's `rid`, found by
        the `request_id` it names; a row naming no stored request is refused (StoreError, nothing written)."""
        if "rid" in cols or "request_id" not in cols:
            raise ValueError(f"Store.write: a {table} row names its request by request_id (its rid follows)")
        at = cols.index("request_id")
        cur = self._conn.executemany(
            f"INSERT OR REPLACE INTO {table} (rid,{','.join(cols)}) SELECT rid,{','.join('?' * len(cols))} "
            "FROM requests WHERE request_id = ?", [(*row, row[at]) for row in values])
        if cur.rowcount != len(values):
            wanted = [row[at] for row in values]
            known = {r[0] for i in range(0, len(wanted), 500) for r in self._conn.execute(
                f"SELECT request_id FROM requests WHERE request_id IN ({','.join('?' * len(wanted[i:i + 500]))})",
                wanted[i:i + 500])}
            missing = next(rid for rid in wanted if rid not in known)
            raise StoreError(f"{self.path}: a {table} row names request {missing}, which is not stored")

    def _check_columns(self, table: str, columns: Sequence[str]) -> None:
        """ValueError unless `table` is one `write` takes and every name in `columns` is one of its columns."""
        if table not in WRITABLE_TABLES:
            raise ValueError(f"Store.write: table {table!r} is not one of {', '.join(WRITABLE_TABLES)}")
        known = self._table_columns.get(table)
        if known is None:
            known = self._table_columns[table] = frozenset(
                r[0] for r in self._conn.execute("SELECT name FROM pragma_table_info(?)", (table,)))
        unknown = [c for c in columns if c not in known]
        if unknown or not columns:
            raise ValueError(f"Store.write: {table} has no column {', '.join(map(repr, unknown))}" if unknown
                             else f"Store.write: a {table} row with no column")

    # -- content-addressed parts (store/_content.py) -------------------------------------------
    def add_content(self, parts: Iterable[ContentRow]) -> None:
        """Store parts not stored yet (inside the caller's transaction: with the requests that use them); a long
        text part compressed (`compress_parts`). `size` stays the length of the part as given."""
        new = {p.sha256: p for p in parts}
        if not new:
            return
        hashes = list(new)  # parts already stored are not compressed again (a shared system prompt)
        known = {r[0] for i in range(0, len(hashes), 500) for r in self._conn.execute(
            f"SELECT sha256 FROM content WHERE sha256 IN ({','.join('?' * len(hashes[i:i + 500]))})",
            hashes[i:i + 500])}
        self._conn.executemany(
            "INSERT OR IGNORE INTO content (sha256, kind, mime, size, data, width, height) VALUES (?,?,?,?,?,?,?)",
            [(p.sha256, p.kind, p.mime, p.size, stored_data(p.kind, p.data, compress=self.compress_parts),
              p.width, p.height) for p in new.values() if p.sha256 not in known])

    def content(self, hashes: Sequence[str]) -> dict[str, tuple[str, str, str | bytes]]:
        """sha256 -> (kind, mime, data) of stored parts; a hash a request refers to must be there."""
        found: dict[str, tuple[str, str, str | bytes]] = {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i:i + 500]
            for row in self._conn.execute(f"SELECT sha256, kind, mime, data FROM content WHERE sha256 IN "
                                         f"({','.join('?' * len(chunk))})", chunk):
                found[row[0]] = (row[1], row[2], read_data(row[1], row[3]))
        missing = sorted(set(hashes) - set(found))
        if missing:
            raise StoreError(f"{self.path}: {len(missing)} message part(s) referenced by requests are missing "
                             f"from the content table (e.g. sha256 {missing[0]}); the store is damaged")
        return found

    def resolve_messages(self, messages: str | list[Any], *, images: Literal["bytes", "ref"] = "bytes"
                         ) -> list[Any]:
        """A request row's messages as sent: text references resolved (each part read once per process),
        images as bytes parts for a provider, or (`images="ref"`) kept as `{"type": "image", "sha256",
        "mime"}` references, the canonical form `export` shows."""
        stored = json.loads(messages) if isinstance(messages, str) else messages
        return unpack_messages(stored, self.content, images=images)

    # -- raw reads: for the store's own modules (and tests); code outside `dialectbias.store` asks the named
    # methods and functions (tests/packaging/test_store_owns_sql.py checks that it passes no SQL) -----------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """The rows of one statement."""
        return self._conn.execute(sql, params).fetchall()

    def iter_query(self, sql: str, params: Sequence[Any] = ()) -> Iterator[sqlite3.Row]:
        """The rows of one statement, fetched in chunks (streamed)."""
        cur = self._conn.execute(sql, params)
        while rows := cur.fetchmany(2000):
            yield from rows


def _item(row: sqlite3.Row) -> Item:
    return Item(id=row["item_id"], domain=row["domain"], question_type=row["question_type"],
                variants=json.loads(row["variants"]), gold=json.loads(row["gold"]),
                validated_by=json.loads(row["validated_by"]), metadata=json.loads(row["metadata"]))


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on error (the connection runs in autocommit mode)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type else "COMMIT")
