"""What `dialectbias status` shows: per stage × model of the experiment, its current requests (done,
failed, pending), its superseded ones apart, and whether a run has compiled it yet; then the judgments."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Literal

from dialectbias.config import Experiment
from dialectbias.run._stage import Stage
from dialectbias.store import (
    REASK_SUFFIX,
    RetryCounts,
    Store,
    judgment_tallies,
    judgment_tallies_by_judge,
    request_tallies,
    retry_counts,
)

State = Literal["compiled", "outdated", "not compiled", "superseded"]

@dataclass
class StageBlock:
    """One stage × model. Counts are of current requests, except `superseded`."""

    stage: str
    model_id: str
    state: State = "compiled"
    note: str = ""
    requests: int = 0
    done: int = 0
    failed: int = 0
    #: of `failed`, requests that do not fit the model's context window (`providers._fit`)
    too_long: int = 0
    pending: int = 0
    superseded: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None


@dataclass
class JudgmentCounts:
    """Current judgments: `needs_review` counts only those no human has reviewed; `reviewed` those with an
    override (whatever their confidence). `superseded`: judgments of requests no longer current."""

    total: int = 0
    unscored: int = 0
    needs_review: int = 0
    reviewed: int = 0
    flagged: int = 0
    superseded: int = 0
    #: of `unscored`, those whose answer parsed but had invalid values (the rest did not parse)
    invalid: int = 0
    #: scored with a value out of its range clipped (rubric `out_of_range: clip`)
    out_of_range: int = 0


@dataclass
class JudgeReview:
    """One judge's current judgments and its review queue. `needs_review`: not reviewed yet and needing it
    under the experiment's settings now (confidence ≤ review.confidence_threshold, flagged or clipped, or in a
    dialect `review.on_miscalibrated: review` routes: `routed` of them); `in_default_queue`: the primary
    judge's, which `review export` and the review app show without `--judge`."""

    judge_id: str
    role: str
    judgments: int = 0
    unscored: int = 0
    invalid: int = 0
    out_of_range: int = 0
    needs_review: int = 0
    routed: int = 0
    reviewed: int = 0
    flagged: int = 0
    in_default_queue: bool = False


@dataclass
class StatusReport:
    blocks: list[StageBlock] = field(default_factory=list)
    judgments: JudgmentCounts = field(default_factory=JudgmentCounts)
    judges: list[JudgeReview] = field(default_factory=list)
    #: what `run --retry` would ask again (`store.retry_counts`)
    retry: RetryCounts = field(default_factory=RetryCounts)


def read_status(exp: Experiment, stages: list[Stage], store: Store,
                routed: Set[tuple[str, str]] = frozenset()) -> StatusReport:
    """Per stage × model of the task's `stages`, in order; then the judgments, in all and per judge of the
    experiment. `routed`: (judge, dialect) pairs whose every judgment goes to review (`review.on_miscalibrated:
    review`, `dialectbias.review.routed_to_review`)."""
    compiled = store.current_stages()
    configs = {m.id: m for m in exp.all_models()}
    blocks: dict[tuple[str, str], StageBlock] = {}
    order: dict[tuple[str, str], tuple[int, int, int]] = {}
    for i, stage in enumerate(stages):
        earlier = [t for (s, _), t in compiled.items() if s in {x.name for x in stages[:i]}]
        for k, model in enumerate(stage.models):
            key = (stage.name, model.id)
            block = blocks[key] = StageBlock(stage.name, model.id)
            order[key] = (i, 0, k)
            if key not in compiled:
                block.state = "not compiled"
                after = f" after {stages[i - 1].name}" if i else ""
                block.note = f"not compiled yet: the next run builds its requests{after}"
            elif earlier and compiled[key] < max(earlier):
                block.state = "outdated"
                block.note = f"outdated: compiled before the last {stages[i - 1].name}; rebuilt by the next run"
    stage_index = {s.name: i for i, s in enumerate(stages)}
    for tally in request_tallies(store):
        model_id = tally.model_id
        key = (tally.stage, model_id)
        if key not in blocks:
            base = tally.stage.removesuffix(REASK_SUFFIX)
            known = (base, model_id) in order
            blocks[key] = StageBlock(tally.stage, model_id, state="compiled" if known else "superseded",
                                     note="" if known else "no longer in the experiment")
            order[key] = ((order[(base, model_id)][0], 1, order[(base, model_id)][2]) if known
                          else (len(stages) + stage_index.get(base, 0), 2, 0))
        block = blocks[key]
        if not tally.current:
            block.superseded += tally.requests
            continue
        block.requests, block.done, block.failed, block.pending = tally.requests, tally.ok, tally.failed, tally.pending
        block.too_long = tally.too_long
        block.cache_hits, block.tokens_in, block.tokens_out = tally.cache_hits, tally.tokens_in, tally.tokens_out
        if model_id in configs:
            block.cost = configs[model_id].cost(tally.fresh_tokens_in, tally.fresh_tokens_out)
    report = StatusReport(blocks=[blocks[k] for k in sorted(blocks, key=lambda k: (order[k], k))])
    for current, t in judgment_tallies(store).items():
        if current:
            j = report.judgments
            j.total, j.unscored, j.needs_review, j.reviewed, j.flagged = (t.judgments, t.unscored, t.needs_review,
                                                                          t.reviewed, t.flagged)
            j.invalid, j.out_of_range = t.invalid, t.out_of_range
        else:
            report.judgments.superseded = t.judgments
    report.judges = _per_judge(exp, store, routed)
    report.retry = retry_counts(store)
    return report


def _per_judge(exp: Experiment, store: Store, routed: Set[tuple[str, str]]) -> list[JudgeReview]:
    primary = exp.primary_judge.id if exp.primary_judge else None
    judges = {j.id: JudgeReview(j.id, j.role or ("primary" if j.id == primary else "secondary"),
                                in_default_queue=j.id == primary) for j in exp.judges}
    for (judge_id, variant), t in judgment_tallies_by_judge(store).items():
        j = judges.get(judge_id)
        if j is None:  # a judge no longer in the experiment
            continue
        n, unscored, pending, reviewed, flagged = t.judgments, t.unscored, t.needs_review, t.reviewed, t.flagged
        j.judgments += n
        j.unscored += unscored
        j.invalid += t.invalid
        j.out_of_range += t.out_of_range
        j.reviewed += reviewed
        j.flagged += flagged
        if (judge_id, variant) in routed:
            j.routed += n - reviewed - pending
            pending = n - reviewed
        j.needs_review += pending
    return list(judges.values())
