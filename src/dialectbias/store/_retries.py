"""What `run --retry unscored|failed|all` asks again (issue 24 item 3), read from the store.

A retried request is a new request row: the same call with `meta.retry_of` = the id the stage builds for it
(its *base* id) and `meta.attempt` = 1, 2, …; its id and cache key fold the attempt in (`run/_specs.py`
`retry_row`), so it gets a fresh answer and the old request, its re-ask and its judgment stay in the store,
superseded. Which attempt a base id is at is read back from the request rows themselves (no table of its
own): a later run builds the same attempt, so the retried requests stay current and nothing is resent.

Kinds: *unscored* = a current judgment whose answer came back but did not validate (even after the re-ask);
*failed* = a current request whose result is an error (these are resent by every run anyway) or a current
judgment whose re-ask call failed (never resent without --retry).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

from dialectbias.store._schema import RESULT_STATUS_INDEX, RETRIES_INDEX
from dialectbias.store._store import REASK_SUFFIX, Store

#: a current judge request's judgment is unscored and its re-ask's call failed
_REASK_FAILED_SQL = (f"EXISTS (SELECT 1 FROM requests q JOIN results s ON s.rid = q.rid "
                     f"WHERE q.stage = r.stage || '{REASK_SUFFIX}' AND q.model_id = r.model_id "
                     "AND json_extract(q.meta, '$.reask_of') = r.request_id AND s.status = 'failed')")

#: the judgments of current requests that are unscored, with the kind of retry each needs
_UNSCORED_SQL = (f"SELECT r.request_id, r.stage, r.model_id, r.meta, {_REASK_FAILED_SQL} AS reask_failed "
                 "FROM current_requests cr JOIN requests r ON r.rid = cr.rid "
                 "JOIN judgments j ON j.rid = r.rid WHERE j.parse_status = 'failed'")


def retry_attempts(store: Store, stage: str, model_id: str) -> dict[str, int]:
    """Base request id -> the highest retry attempt stored for it in this stage × model (any row, current or
    superseded): the attempt a compile of the stage builds."""
    rows = store.query(
        "SELECT json_extract(meta, '$.retry_of'), max(json_extract(meta, '$.attempt')) "
        f"FROM requests INDEXED BY {RETRIES_INDEX} "
        "WHERE stage = ? AND model_id = ? AND json_extract(meta, '$.retry_of') IS NOT NULL GROUP BY 1",
        (stage, model_id))
    return {r[0]: int(r[1]) for r in rows}


def retry_targets(store: Store, stage: str, model_id: str, kinds: Collection[str]) -> dict[str, int]:
    """Base request id -> the attempt to build next, for the current requests of this stage × model that
    `kinds` ("unscored", "failed") asks again: unscored judgments, and judgments whose re-ask failed."""
    rows = store.query(f"{_UNSCORED_SQL} AND r.stage = ? AND r.model_id = ?", (stage, model_id))
    targets: dict[str, int] = {}
    for row in rows:
        if ("failed" if row["reask_failed"] else "unscored") not in kinds:
            continue
        meta = json.loads(row["meta"])
        base, attempt = (meta["retry_of"], int(meta["attempt"])) if "retry_of" in meta else (row["request_id"], 0)
        targets[base] = attempt + 1
    return targets


@dataclass(frozen=True)
class RetryCounts:
    """What `--retry` would ask again now: `unscored` judgments (answer did not validate), `failed` requests
    (current requests whose call failed, and re-asks of unscored judgments whose call failed)."""

    unscored: int = 0
    failed: int = 0


def retry_counts(store: Store) -> RetryCounts:
    """The experiment's current unscored judgments and failed requests, by the kind of retry they need."""
    judged = store.query(f"SELECT coalesce(sum(NOT reask_failed), 0), coalesce(sum(reask_failed), 0) "
                         f"FROM ({_UNSCORED_SQL})")[0]
    failed = store.query(f"SELECT count(*) FROM current_requests cr JOIN results s INDEXED BY {RESULT_STATUS_INDEX} "
                         "ON s.rid = cr.rid "
                         f"WHERE s.status = 'failed' AND cr.stage NOT GLOB '*{REASK_SUFFIX}'")[0][0]
    return RetryCounts(unscored=judged[0], failed=judged[1] + failed)
