"""Annotators and their assignments (SPEC §6): a personal token per annotator (only its sha256 is stored),
the dialects and queues each one sees, and the review tasks: one per (queue, target, annotator), each target
given to up to `overlap` annotators of its dialect (the least busy first), so agreement can be measured.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dialectbias.errors import DataError
from dialectbias.review._kinds import QueueKind, ReviewConfig, queue_kinds
from dialectbias.review._sample import queue_targets, sampled_ids
from dialectbias.store import (
    AnnotatorRow,
    AssignmentRow,
    Store,
    add_assignments,
    annotator_assignments,
    annotator_by_name,
    annotator_by_token_hash,
    annotator_rows,
    assignment,
    assignment_queue,
    queue_holders,
    save_annotator,
)

NAME_PATTERN = re.compile(r"^[\w.\-]{1,64}$")
#: a token is 32 random bytes (URL-safe base64, 43 characters): a sha256 of it cannot be searched back
TOKEN_BYTES = 32


@dataclass(frozen=True)
class Annotator(AnnotatorRow):
    """An annotator as the review sees them: the stored row, and which tasks they are shown."""

    def sees(self, queue: str, dialect: str) -> bool:
        return queue in self.queues and dialect in self.dialects


def hash_token(token: str) -> str:
    """sha256 hex of a token (tokens are 256-bit random, so an unsalted hash is not guessable)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _names(values: Iterable[str], what: str) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
    bad = [v for v in out if not NAME_PATTERN.match(v)]
    if bad:
        raise DataError(f"{what}: {bad[0]!r} is not a name (letters, digits, _ . -)")
    return out


def add_annotator(store: Store, name: str, dialects: Sequence[str], queues: Sequence[str] | None = None, *,
                  rotate: bool = False) -> str:
    """Create an annotator (or, with `rotate`, give an existing one a new token and these dialects and
    queues) and return their new token — the only time it exists outside their hands."""
    (name,) = _names([name], "annotator name") or ("",)
    if not name:
        raise DataError("annotator name: empty")
    dialect_names = _names(dialects, "--dialects")
    if not dialect_names:
        raise DataError("--dialects: give at least one dialect (e.g. --dialects sylhet,chittagong)")
    known = queue_kinds()
    queue_names = _names(queues or [k for k, kind in known.items() if not kind.opt_in], "--queues")
    unknown = [q for q in queue_names if q not in known]
    if unknown:
        raise DataError(f"--queues: unknown queue {unknown[0]!r}; queues: {', '.join(known)}")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    if not save_annotator(store, name, hash_token(token), dialect_names, queue_names, time.time(), replace=rotate):
        raise DataError(f"annotator {name!r} exists already (use --rotate to issue a new token)")
    return token


def _annotator(row: AnnotatorRow | None) -> Annotator | None:
    return None if row is None else Annotator(row.name, row.dialects, row.queues, row.created_at)


def annotator_for_token(store: Store, token: str | None) -> Annotator | None:
    """The annotator holding a token, or None (an empty or unknown token)."""
    if not token or len(token) > 200:
        return None
    return _annotator(annotator_by_token_hash(store, hash_token(token)))


def annotator_named(store: Store, name: str) -> Annotator | None:
    return _annotator(annotator_by_name(store, name))


def annotators(store: Store) -> list[Annotator]:
    return [Annotator(r.name, r.dialects, r.queues, r.created_at) for r in annotator_rows(store)]


def task_id_for(queue: str, target_id: str, annotator: str) -> str:
    return hashlib.sha256(f"{queue}\x00{target_id}\x00{annotator}".encode()).hexdigest()[:24]


@dataclass
class AssignSummary:
    targets: int = 0
    new_tasks: int = 0
    unassigned: int = 0  # targets no annotator sees (no one with the queue and the dialect)


def assign(store: Store, config: ReviewConfig, kinds: Iterable[QueueKind] | None = None, *,
           now: float | None = None) -> AssignSummary:
    """Give each target of each queue to annotators who see its queue and dialect until it has `overlap`
    of them (existing assignments are kept; new ones go to whoever has the fewest tasks in the queue).
    A queue with a sample (`review sample`) gives out only its sampled targets. Idempotent; one transaction
    per queue."""
    people = annotators(store)
    summary = AssignSummary()
    created = time.time() if now is None else now
    for kind in kinds or queue_kinds().values():
        eligible = [a for a in people if kind.name in a.queues]
        targets = list(queue_targets(kind, config, store)) if eligible else []
        summary.targets += len(targets)
        if not targets:
            continue
        with store.transaction():
            load = dict.fromkeys((a.name for a in eligible), 0)
            holders: dict[str, set[str]] = {}
            for target_id, annotator in queue_holders(store, kind.name):
                holders.setdefault(target_id, set()).add(annotator)
                if annotator in load:
                    load[annotator] += 1
            new: list[AssignmentRow] = []
            for t in targets:
                have = holders.setdefault(t.target_id, set())
                candidates = sorted((a for a in eligible if t.dialect in a.dialects and a.name not in have),
                                    key=lambda a: (load[a.name], a.name))
                if not have and not candidates:
                    summary.unassigned += 1
                for a in candidates[: max(0, config.overlap - len(have))]:
                    new.append(AssignmentRow(task_id_for(kind.name, t.target_id, a.name), kind.name, t.target_id,
                                             t.item_id, t.dialect, a.name))
                    have.add(a.name)
                    load[a.name] += 1
                    summary.new_tasks += 1
            add_assignments(store, new, created)
    return summary


@dataclass(frozen=True)
class Task:
    """One assignment as the app and the API show it."""

    task_id: str
    queue: str
    target_id: str
    item_id: str
    dialect: str
    annotator: str
    done: bool

    @classmethod
    def of(cls, row: AssignmentRow) -> Task:
        return cls(row.task_id, row.queue, row.target_id, row.item_id, row.dialect, row.annotator, row.done)


def tasks_of(store: Store, annotator: Annotator, queue: str | None = None) -> list[Task]:
    """The annotator's tasks in the queues and dialects they see now (done or not); in a queue with a sample,
    only the sampled targets' (other assignments are kept, and come back when the sample is cleared)."""
    out: list[Task] = []
    for name, kind in queue_kinds().items():
        if name not in annotator.queues or (queue is not None and name != queue):
            continue
        rows = annotator_assignments(store, annotator.name, name, kind.annotation_kind)
        sampled = sampled_ids(store, name)
        out += [Task.of(r) for r in rows
                if r.dialect in annotator.dialects and (sampled is None or r.target_id in sampled)]
    return out


def task_of(store: Store, annotator: Annotator, task_id: str) -> Task | None:
    """The annotator's task with this id, or None — also when it is someone else's (no hint that it exists)."""
    queue = assignment_queue(store, task_id, annotator.name)
    if queue is None or queue not in queue_kinds():
        return None
    row = assignment(store, task_id, annotator.name, queue_kinds()[queue].annotation_kind)
    task = None if row is None else Task.of(row)
    if task is None or not annotator.sees(task.queue, task.dialect):
        return None
    sampled = sampled_ids(store, task.queue)
    return task if sampled is None or task.target_id in sampled else None
