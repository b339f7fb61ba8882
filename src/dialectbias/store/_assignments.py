"""Annotators and their review assignments (tables `annotators`, `assignments`; SPEC §6). An annotator row
holds the sha256 of their personal token (never the token), the dialects and queues they see; an assignment
is one (queue, target, annotator), named by its `task_id`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dialectbias.store._store import Store

_ANNOTATOR_COLUMNS = "name, dialects, queues, created_at"


@dataclass(frozen=True)
class AnnotatorRow:
    name: str
    dialects: tuple[str, ...]
    queues: tuple[str, ...]
    created_at: float


@dataclass(frozen=True)
class AssignmentRow:
    """One assignment; `done`: the annotator stored an annotation of the queue's kind on the target."""

    task_id: str
    queue: str
    target_id: str
    item_id: str
    dialect: str
    annotator: str
    done: bool = False


def _annotator(r: Any) -> AnnotatorRow:
    return AnnotatorRow(r[0], tuple(json.loads(r[1])), tuple(json.loads(r[2])), r[3])


def save_annotator(store: Store, name: str, token_hash: str, dialects: Sequence[str], queues: Sequence[str],
                   now: float, *, replace: bool) -> bool:
    """Create the annotator, or (`replace`) give an existing one this token hash, dialects and queues; one
    transaction. False, with nothing written, when the annotator exists and `replace` is off."""
    with store.transaction():
        exists = store._conn.execute("SELECT 1 FROM annotators WHERE name=?", (name,)).fetchone()
        if exists and not replace:
            return False
        if exists:
            store._conn.execute("UPDATE annotators SET token_hash=?, dialects=?, queues=?, updated_at=? WHERE name=?",
                               (token_hash, json.dumps(list(dialects)), json.dumps(list(queues)), now, name))
        else:
            store._conn.execute("INSERT INTO annotators VALUES (?,?,?,?,?,?)",
                               (name, token_hash, json.dumps(list(dialects)), json.dumps(list(queues)), now, now))
    return True


def annotator_by_token_hash(store: Store, token_hash: str) -> AnnotatorRow | None:
    rows = store.query(f"SELECT {_ANNOTATOR_COLUMNS} FROM annotators WHERE token_hash=?", (token_hash,))
    return _annotator(rows[0]) if rows else None


def annotator_by_name(store: Store, name: str) -> AnnotatorRow | None:
    rows = store.query(f"SELECT {_ANNOTATOR_COLUMNS} FROM annotators WHERE name=?", (name,))
    return _annotator(rows[0]) if rows else None


def annotator_token_hash(store: Store, name: str) -> str | None:
    """The sha256 of the annotator's current token (None: no such annotator)."""
    rows = store.query("SELECT token_hash FROM annotators WHERE name = ?", (name,))
    return str(rows[0][0]) if rows else None


def annotator_rows(store: Store) -> list[AnnotatorRow]:
    """Every annotator, by name."""
    return [_annotator(r) for r in store.query(f"SELECT {_ANNOTATOR_COLUMNS} FROM annotators ORDER BY name")]


def queue_holders(store: Store, queue: str) -> list[tuple[str, str]]:
    """(target_id, annotator) of every assignment of a queue."""
    return [(r[0], r[1]) for r in store.query("SELECT target_id, annotator FROM assignments WHERE queue=?", (queue,))]


def add_assignments(store: Store, rows: Sequence[AssignmentRow], assigned_at: float) -> None:
    """Store new assignments (an existing task id is left alone), inside the caller's transaction when there
    is one."""
    store._conn.executemany("INSERT OR IGNORE INTO assignments VALUES (?,?,?,?,?,?,?)",
                           [(r.task_id, r.queue, r.target_id, r.item_id, r.dialect, r.annotator, assigned_at)
                            for r in rows])


def _assignments(store: Store, annotation_kind: str, where: str, params: tuple[Any, ...]) -> list[AssignmentRow]:
    rows = store.query(
        "SELECT a.task_id, a.queue, a.target_id, a.item_id, a.dialect, a.annotator, EXISTS (SELECT 1 FROM "
        "annotations n WHERE n.target_id = a.target_id AND n.annotator = a.annotator AND n.kind = ?) "
        f"FROM assignments a WHERE {where} ORDER BY a.queue, a.dialect, a.item_id, a.task_id",
        (annotation_kind, *params))
    return [AssignmentRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in rows]


def annotator_assignments(store: Store, annotator: str, queue: str, annotation_kind: str) -> list[AssignmentRow]:
    """The annotator's assignments in a queue (done: they annotated the target under `annotation_kind`), in
    (dialect, item, task id) order."""
    return _assignments(store, annotation_kind, "a.annotator = ? AND a.queue = ?", (annotator, queue))


def assignment(store: Store, task_id: str, annotator: str, annotation_kind: str) -> AssignmentRow | None:
    """The annotator's assignment with this task id (None: none, or someone else's)."""
    found = _assignments(store, annotation_kind, "a.task_id = ? AND a.annotator = ?", (task_id, annotator))
    return found[0] if found else None


def assignment_queue(store: Store, task_id: str, annotator: str) -> str | None:
    """The queue of the annotator's assignment with this task id (None: none, or someone else's)."""
    rows = store.query("SELECT queue FROM assignments WHERE task_id = ? AND annotator = ?", (task_id, annotator))
    return str(rows[0][0]) if rows else None


def assignment_count(store: Store, annotator: str) -> int:
    """How many assignments the annotator has, in every queue."""
    return int(store.query("SELECT count(*) FROM assignments WHERE annotator = ?", (annotator,))[0][0])


def assigned_dialects(store: Store) -> dict[str, str]:
    """target id -> the dialect its assignments record."""
    return {r[0]: r[1] for r in store.query("SELECT target_id, dialect FROM assignments")}
