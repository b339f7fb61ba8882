"""Calibration snapshots (table `calibration_snapshots`): each judge's agreement with the human scores per
dialect, stored each time `dialectbias review calibration` runs, so calibration is tracked over time."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dialectbias.store._store import Store


@dataclass(frozen=True)
class SnapshotRow:
    """One judge × dialect of a snapshot; `below`: the thresholds it missed when it was taken."""

    taken_at: float
    judge_id: str
    rubric: str
    dialect: str
    n: int
    ccc: float | None
    cbs: float | None
    kappa: float | None
    below: list[str]


def save_snapshot_rows(store: Store, rows: Sequence[SnapshotRow], thresholds: dict[str, Any]) -> int:
    """Store a snapshot's rows (with the thresholds in force) in one transaction; returns how many."""
    with store.transaction():
        for r in rows:
            store._conn.execute(
                "INSERT INTO calibration_snapshots (taken_at, judge_id, rubric, dialect, n, ccc, cbs, kappa, below, "
                "thresholds) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (r.taken_at, r.judge_id, r.rubric, r.dialect, r.n, r.ccc, r.cbs, r.kappa, json.dumps(r.below),
                 json.dumps(thresholds)))
    return len(rows)


def snapshot_rows(store: Store, judge: str | None = None) -> list[SnapshotRow]:
    """Every stored snapshot row (of one judge, or all), oldest first."""
    sql = ("SELECT taken_at, judge_id, rubric, dialect, n, ccc, cbs, kappa, below FROM calibration_snapshots"
           + (" WHERE judge_id = ?" if judge else "") + " ORDER BY taken_at, snapshot_id")
    return [_row(r) for r in store.query(sql, (judge,) if judge else ())]


def latest_snapshot(store: Store, judge: str) -> list[SnapshotRow]:
    """The rows of the judge's latest snapshot (none: never calibrated)."""
    rows = store.query(
        "SELECT taken_at, judge_id, rubric, dialect, n, ccc, cbs, kappa, below FROM calibration_snapshots "
        "WHERE judge_id = ? AND taken_at = (SELECT MAX(taken_at) FROM calibration_snapshots WHERE judge_id = ?)",
        (judge, judge))
    return [_row(r) for r in rows]


def _row(r: Any) -> SnapshotRow:
    return SnapshotRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8]))
