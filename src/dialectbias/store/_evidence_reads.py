"""Read-only access for the results explorer (`dialectbias view`, issue 22 item 1): a store opened so that it
cannot write (no migration, no lock, `query_only`), a watch that tells when the store changed,
and the evidence behind a table cell: the requests of a model for an item and variant, with their results,
the judgments of them and the human overrides of those judgments.

A `dialectbias run` writing the same store is never disturbed: the explorer's connection reads in WAL mode
(readers do not block the writer) and takes no lock."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialectbias.errors import StoreError
from dialectbias.store._kinds import OVERRIDE_KIND
from dialectbias.store._schema import SCHEMA_VERSION
from dialectbias.store._store import REASK_SUFFIX, Store, is_current

#: at most this many rows in a list of a cell's items (the page says when there are more)
MAX_CELL_ROWS = 500


def open_read_only(path: str | Path) -> Store:
    """The store at `path`, opened read-only (SQLite `mode=ro`, `query_only`): no migration, no lock, no
    write. StoreError when there is no store (run the experiment first) or its schema is not this version's
    (any other command upgrades it; the explorer does not write)."""
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"{path}: no run store yet (run `dialectbias run` first)")
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False,
                               timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA query_only=ON")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        if conn is not None:  # (its statement cache is a cycle: left to the collector, it would stay open)
            conn.close()
        journal = path.with_name(f"{path.name}-journal")
        if journal.is_file() and journal.stat().st_size > 0:  # a read-only connection cannot roll it back
            raise StoreError(f"{path}: an upgrade of this store was interrupted ({journal.name} is beside it); "
                             "any other command (e.g. `dialectbias status`) rolls it back and upgrades it again; "
                             "the explorer never writes") from None
        raise StoreError(f"{path}: cannot open the run store read-only ({exc})") from None
    version = int(row[0]) if row else 0
    if version != SCHEMA_VERSION:
        conn.close()
        newer = "newer than this dialectbias: upgrade dialectbias" if version > SCHEMA_VERSION else (
            "older: any other command (e.g. `dialectbias status`) upgrades it; the explorer never writes")
        raise StoreError(f"{path}: store schema v{version}, this dialectbias reads v{SCHEMA_VERSION} ({newer})")
    return Store(conn, path)


class StoreWatch:
    """Tells when a store's content changed, at no cost that grows with the store: a read-only connection
    kept open and SQLite's `PRAGMA data_version`, which changes whenever another connection (any process)
    commits. Every write counts: an in-place update (re-scoring a judgment or an override) and a delete as
    much as a new row. The mark counted from rows before (`max(rowid)`, `count(*)`) missed the updates and
    walked whole indexes on each page load: 59 ms warm, 3.6 s cold on a 10×-paper store; this one 0.1 ms
    (`benchmarks/view_mark.py`).

    A store file replaced by another (moved, recreated) is reopened, and the mark changes with it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._store: Store | None = None
        self._file: tuple[int, int] | None = None
        self._opened = 0

    def mark(self) -> tuple[int, int]:
        """A pair that differs from the last one whenever the store changed since; StoreError when the store
        is gone or cannot be read (`open_read_only`)."""
        try:
            st = self.path.stat()
        except OSError:
            self.close()
            raise StoreError(f"{self.path}: no run store yet (run `dialectbias run` first)") from None
        if self._store is None or self._file != (st.st_dev, st.st_ino):
            self.close()
            self._store = open_read_only(self.path)
            self._file = (st.st_dev, st.st_ino)
            self._opened += 1
        try:
            version = self._store.query("PRAGMA data_version")[0][0]
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"{self.path}: cannot read the run store ({exc})") from None
        return self._opened, int(version)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store = None


@dataclass(frozen=True)
class RequestEvidence:
    """One current request (a generation, a judge call or a re-ask) with its result."""

    request_id: str
    stage: str
    model_id: str
    item_id: str
    variant: str
    refs: list[str]
    template: str
    messages: str
    params: dict[str, Any]
    meta: dict[str, Any]
    status: str | None
    output: str | None
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    latency_s: float | None
    cache_hit: int | None
    retries: int | None
    error: str | None
    completed_at: float | None

    @property
    def is_reask(self) -> bool:
        return self.stage.endswith(REASK_SUFFIX)


_REQUEST_SQL = ("SELECT r.request_id, r.stage, r.model_id, r.item_id, r.variant, r.refs, r.template, r.messages, "
                "r.params, r.meta, s.status, s.output, s.finish_reason, s.tokens_in, s.tokens_out, s.latency_s, "
                "s.cache_hit, s.retries, s.error, s.completed_at FROM requests r "
                "LEFT JOIN results s ON s.rid = r.rid ")


def _request(r: sqlite3.Row) -> RequestEvidence:
    return RequestEvidence(r[0], r[1], r[2], r[3], r[4], json.loads(r[5] or "[]"), r[6], r[7],
                           json.loads(r[8] or "{}"), json.loads(r[9] or "{}"), *r[10:])


def item_requests(store: Store, model_id: str, item_id: str, variant: str | None = None) -> list[RequestEvidence]:
    """The model's current requests for the item (one variant, or all), re-asks included, in (variant, stage,
    request id) order."""
    sql = (_REQUEST_SQL + f"WHERE {is_current('r')} AND r.model_id = ? "
           "AND r.item_id = ?")
    params: list[Any] = [model_id, item_id]
    if variant is not None:
        sql += " AND r.variant = ?"
        params.append(variant)
    return [_request(r) for r in store.query(sql + " ORDER BY r.variant, r.stage, r.request_id", params)]


def request_evidence(store: Store, request_id: str) -> RequestEvidence | None:
    """Any stored request (current or superseded) with its result, or None."""
    rows = store.query(_REQUEST_SQL + "WHERE r.request_id = ?", (request_id,))
    return _request(rows[0]) if rows else None


@dataclass(frozen=True)
class JudgmentEvidence:
    """A current judgment of a model's answer: every stored column, JSON parsed."""

    request_id: str
    source_request_id: str | None
    judge_id: str
    model_id: str
    item_id: str
    variant: str
    rubric: str
    raw_output: str | None
    parsed: dict[str, Any] | None
    score: float | None
    confidence: int | None
    checks: dict[str, Any]
    flags: list[Any]
    clipped: dict[str, Any]
    parse_status: str
    needs_review: bool
    flagged: bool
    reason: str | None
    latest: bool


def judgments_of(store: Store, model_id: str, item_id: str, variant: str | None = None) -> list[JudgmentEvidence]:
    """The current judgments of the model's answers to the item (one variant, or all), by judge; `latest`
    marks the one per (judge, variant) the report reads."""
    sql = ("SELECT j.request_id, j.source_request_id, j.judge_id, j.model_id, j.item_id, j.variant, j.rubric, "
           "j.raw_output, j.parsed, j.score, j.confidence, j.checks, j.flags, j.clipped, j.parse_status, "
           "j.needs_review, j.flagged, j.reason, j.rowid FROM judgments j "
           f"WHERE {is_current('j')} AND j.model_id = ? AND j.item_id = ?")
    params: list[Any] = [model_id, item_id]
    if variant is not None:
        sql += " AND j.variant = ?"
        params.append(variant)
    rows = store.query(sql + " ORDER BY j.judge_id, j.variant, j.rowid", params)
    last = {(r[2], r[5]): r[18] for r in rows}
    return [JudgmentEvidence(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8]) if r[8] else None,
                             r[9], r[10], json.loads(r[11] or "{}"), json.loads(r[12] or "[]"),
                             json.loads(r[13] or "{}"), r[14], bool(r[15]), bool(r[16]), r[17],
                             last[(r[2], r[5])] == r[18]) for r in rows]


@dataclass(frozen=True)
class OverrideEvidence:
    """A human override of a judgment (an `annotations` row of kind judgment_override)."""

    annotation_id: int
    target_id: str
    annotator: str
    value: dict[str, Any]
    comment: str
    created_at: float


def overrides_of(store: Store, judgment_ids: Sequence[str]) -> list[OverrideEvidence]:
    """Every human override of these judgments, oldest first."""
    if not judgment_ids:
        return []
    rows = store.query(
        "SELECT annotation_id, target_id, annotator, value, comment, created_at FROM annotations "
        f"WHERE kind = ? AND target_id IN ({','.join('?' * len(judgment_ids))}) ORDER BY annotation_id",
        (OVERRIDE_KIND, *judgment_ids))
    return [OverrideEvidence(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5]) for r in rows]


@dataclass(frozen=True)
class CellRow:
    """One (item, variant) answer of a model behind a table cell: its request, a preview of the output, and
    the score of each judge's latest current judgment."""

    item_id: str
    variant: str
    model_id: str
    domain: str | None
    question_type: str | None
    request_id: str
    stage: str
    status: str | None
    preview: str
    scores: dict[str, float | None]


def cell_rows(store: Store, *, model_id: str | None = None, variant: str | None = None, domain: str | None = None,
              question_type: str | None = None, item_id: str | None = None, exclude_models: Sequence[str] = (),
              limit: int = MAX_CELL_ROWS) -> tuple[list[CellRow], int]:
    """The current answers matching the filters (requests other than re-asks and those of `exclude_models`,
    the judges), with each judge's latest score; (at most `limit` rows, how many match in all)."""
    where = [is_current("r"), "r.stage NOT LIKE ?"]
    params: list[Any] = [f"%{REASK_SUFFIX}"]
    for column, value in (("r.model_id", model_id), ("r.variant", variant), ("i.domain", domain),
                          ("i.question_type", question_type), ("r.item_id", item_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if exclude_models:
        where.append(f"r.model_id NOT IN ({','.join('?' * len(exclude_models))})")
        params.extend(exclude_models)
    joins = ("FROM requests r LEFT JOIN items i ON i.item_id = r.item_id "
             "LEFT JOIN results s ON s.rid = r.rid")
    cond = " AND ".join(where)
    total = int(store.query(f"SELECT count(*) {joins} WHERE {cond}", params)[0][0])
    rows = store.query(
        "SELECT r.item_id, r.variant, r.model_id, i.domain, i.question_type, r.request_id, r.stage, s.status, "
        f"substr(coalesce(s.output, ''), 1, 160) {joins} WHERE {cond} "
        "ORDER BY r.item_id, r.variant, r.model_id, r.stage LIMIT ?", (*params, limit))
    scores = _latest_scores(store, {(r[2], r[0], r[1]) for r in rows})
    return [CellRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], scores.get((r[2], r[0], r[1]), {}))
            for r in rows], total


def _latest_scores(store: Store, keys: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(model, item, variant) -> {judge: score of its latest current judgment}."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    models = sorted({k[0] for k in keys})
    if not models:
        return out
    rows = store.query(
        "SELECT j.model_id, j.item_id, j.variant, j.judge_id, j.score FROM judgments j "
        f"WHERE {is_current('j')} "
        f"AND j.model_id IN ({','.join('?' * len(models))}) ORDER BY j.rowid", models)
    for r in rows:
        if (r[0], r[1], r[2]) in keys:
            out.setdefault((r[0], r[1], r[2]), {})[r[3]] = r[4]
    return out
