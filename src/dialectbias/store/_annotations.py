"""Human annotations (the `annotations` table): one row per (target, annotator, kind, value, comment); a
person's latest row of a kind on a target is their current answer, and two annotators never touch each
other's rows. The review app, its CSV round trip and the calibration statistics read and write them here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from dialectbias.store._kinds import OVERRIDE_KIND
from dialectbias.store._store import Store


@dataclass(frozen=True)
class NewAnnotation:
    """An annotation to store: `value` is its JSON text (canonical `dumps`)."""

    target_id: str
    annotator: str
    kind: str
    value: str
    comment: str
    created_at: float


class LatestAnnotation(NamedTuple):
    """An annotator's current answer of a kind on a target: the decoded value, comment and time."""

    value: dict[str, Any]
    comment: str
    created_at: float


@dataclass(frozen=True)
class OverrideOfJudgment:
    """A `judgment_override` with what it overrides: the judgment's rubric, model, item and variant."""

    annotator: str
    value_json: str
    rubric: str
    model_id: str
    item_id: str
    variant: str


def replace_annotation(store: Store, row: NewAnnotation) -> bool:
    """Make `row` its annotator's current answer on the target, in one transaction; False (nothing written)
    when it is their current answer already (same value and comment). An identical earlier row is removed,
    so going back to an earlier answer moves it to now."""
    with store.transaction():
        latest = store._conn.execute(
            "SELECT value, comment FROM annotations WHERE target_id=? AND annotator=? AND kind=? "
            "ORDER BY annotation_id DESC LIMIT 1", (row.target_id, row.annotator, row.kind)).fetchone()
        if latest is not None and latest[0] == row.value and latest[1] == row.comment:
            return False
        store._conn.execute("DELETE FROM annotations WHERE target_id=? AND annotator=? AND kind=? AND value=? "
                           "AND comment=?", (row.target_id, row.annotator, row.kind, row.value, row.comment))
        store._conn.execute("INSERT INTO annotations (target_id, annotator, kind, value, comment, created_at) "
                           "VALUES (?,?,?,?,?,?)", (row.target_id, row.annotator, row.kind, row.value, row.comment,
                                                    row.created_at))
    return True


def add_annotations(store: Store, rows: Sequence[NewAnnotation]) -> list[bool]:
    """Store the rows in one transaction, each unless an identical one (same target, annotator, kind, value
    and comment) is stored already; per row, whether it was added."""
    added = []
    with store.transaction():
        for r in rows:
            cur = store._conn.execute(
                "INSERT OR IGNORE INTO annotations (target_id, annotator, kind, value, comment, created_at) "
                "VALUES (?,?,?,?,?,?)", (r.target_id, r.annotator, r.kind, r.value, r.comment, r.created_at))
            added.append(bool(cur.rowcount))
    return added


def latest_annotations(store: Store, kind: str, annotator: str | None = None
                       ) -> dict[tuple[str, str], LatestAnnotation]:
    """(target_id, annotator) -> each annotator's (or only `annotator`'s) latest annotation of a kind."""
    sql = ("SELECT target_id, annotator, value, comment, created_at, MAX(annotation_id) FROM annotations "
           "WHERE kind=?" + (" AND annotator=?" if annotator is not None else "") + " GROUP BY target_id, annotator")
    params: tuple[Any, ...] = (kind,) if annotator is None else (kind, annotator)
    return {(r[0], r[1]): LatestAnnotation(json.loads(r[2]), r[3], r[4]) for r in store.query(sql, params)}


def annotated_targets(store: Store, kinds: Iterable[str]) -> list[str]:
    """The distinct target ids annotated under any of `kinds` (by anyone), in no particular order."""
    kinds = list(kinds)
    if not kinds:
        return []
    return [r[0] for r in store.query(f"SELECT DISTINCT target_id FROM annotations WHERE kind IN "
                                      f"({','.join('?' * len(kinds))})", kinds)]


def judgment_overrides(store: Store) -> list[OverrideOfJudgment]:
    """Every `judgment_override` with its judgment's rubric, model, item and variant, oldest first."""
    rows = store.query(
        "SELECT a.annotator, a.value, j.rubric, j.model_id, j.item_id, j.variant FROM annotations a "
        "JOIN requests q ON q.request_id = a.target_id JOIN judgments j ON j.rid = q.rid WHERE a.kind = ? "
        "ORDER BY a.annotation_id", (OVERRIDE_KIND,))
    return [OverrideOfJudgment(*r) for r in rows]
