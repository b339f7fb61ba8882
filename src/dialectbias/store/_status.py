"""Counts `dialectbias status` shows (`run/_status.py`): requests per stage × model, current and superseded,
and the judgments, in all and per judge and dialect."""

from __future__ import annotations

from dataclasses import dataclass

from dialectbias.errors import CONTEXT_FAULT
from dialectbias.store._judgments import INVALID_SQL, OUT_OF_RANGE_SQL
from dialectbias.store._kinds import OVERRIDE_KIND
from dialectbias.store._store import Store

_REQUESTS_SQL = f"""
SELECT r.stage, r.model_id, c.rid IS NOT NULL AS cur, count(*), coalesce(sum(s.status = 'ok'), 0),
       coalesce(sum(s.status = 'failed'), 0), coalesce(sum(s.rid IS NULL), 0),
       coalesce(sum(s.cache_hit), 0), coalesce(sum(s.tokens_in), 0), coalesce(sum(s.tokens_out), 0),
       coalesce(sum(CASE WHEN s.cache_hit = 0 THEN s.tokens_in END), 0),
       coalesce(sum(CASE WHEN s.cache_hit = 0 THEN s.tokens_out END), 0),
       coalesce(sum(s.status = 'failed' AND instr(s.error, ': {CONTEXT_FAULT}: ') > 0), 0)
FROM requests r LEFT JOIN current_requests c ON c.rid = r.rid
LEFT JOIN results s ON s.rid = r.rid
GROUP BY r.stage, r.model_id, cur
"""

# the judgments with their review state: `o.target_id` is set when a human has overridden the judgment
_REVIEWED_SQL = (f"LEFT JOIN (SELECT DISTINCT target_id FROM annotations WHERE kind = '{OVERRIDE_KIND}') o "
                 "ON o.target_id = j.request_id")
_JUDGMENT_COUNTS_SQL = ("count(*), coalesce(sum(j.parse_status = 'failed'), 0), "
                        "coalesce(sum(j.needs_review = 1 AND o.target_id IS NULL), 0), "
                        f"coalesce(sum(o.target_id IS NOT NULL), 0), coalesce(sum(j.flagged), 0), "
                        f"coalesce(sum({INVALID_SQL}), 0), coalesce(sum({OUT_OF_RANGE_SQL}), 0)")

_JUDGMENTS_SQL = (f"SELECT c.rid IS NOT NULL AS cur, {_JUDGMENT_COUNTS_SQL} FROM judgments j "
                  f"LEFT JOIN current_requests c ON c.rid = j.rid {_REVIEWED_SQL} GROUP BY cur")

_PER_JUDGE_SQL = (f"SELECT j.judge_id, j.variant, {_JUDGMENT_COUNTS_SQL} FROM judgments j "
                  f"JOIN current_requests c ON c.rid = j.rid {_REVIEWED_SQL} "
                  "GROUP BY j.judge_id, j.variant")


@dataclass(frozen=True)
class RequestTally:
    """The requests of one stage × model that are current (`current`), or superseded: how many, their
    results (ok, failed, none yet: `pending`), cache hits, tokens, and the tokens of calls actually made
    (`fresh_tokens_in`/`fresh_tokens_out`: not cache hits, what they cost)."""

    stage: str
    model_id: str
    current: bool
    requests: int
    ok: int
    failed: int
    pending: int
    cache_hits: int
    tokens_in: int
    tokens_out: int
    fresh_tokens_in: int
    fresh_tokens_out: int
    #: of `failed`, requests that do not fit the model's context (their error says `CONTEXT_FAULT`)
    too_long: int = 0


@dataclass(frozen=True)
class JudgmentTally:
    """Judgments (every stored row, not only the latest per key): how many, unscored (parse failed or invalid
    values), needing review that no human has overridden (`needs_review` as stored), overridden by a human
    (`reviewed`), flagged, of the unscored those whose values were invalid (`invalid`), and the scored ones with
    a value out of range clipped (`out_of_range`: rubric `out_of_range: clip`)."""

    judgments: int
    unscored: int
    needs_review: int
    reviewed: int
    flagged: int
    invalid: int = 0
    out_of_range: int = 0


def request_tallies(store: Store) -> list[RequestTally]:
    """Per stage × model, one tally of its current requests and one of its superseded ones (either left out
    when there are none)."""
    return [RequestTally(r[0], r[1], bool(r[2]), *r[3:]) for r in store.query(_REQUESTS_SQL)]


def judgment_tallies(store: Store) -> dict[bool, JudgmentTally]:
    """The judgments of current requests (key True) and of superseded ones (False); a key is missing when
    there are none."""
    return {bool(r[0]): JudgmentTally(*r[1:]) for r in store.query(_JUDGMENTS_SQL)}


def judgment_tallies_by_judge(store: Store) -> dict[tuple[str, str], JudgmentTally]:
    """(judge id, dialect) -> the current judgments of that judge in that dialect."""
    return {(r[0], r[1]): JudgmentTally(*r[2:]) for r in store.query(_PER_JUDGE_SQL)}
