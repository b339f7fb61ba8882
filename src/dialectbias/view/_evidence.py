"""What is behind one answer (model, item, variant): the prompt as sent and the answer, the item's texts in
every variant, each judge's judgment of it (parsed fields, reasoning, score, code checks, flags, clipping),
the human overrides of each judgment and the human score the report uses, and provenance (request ids, the
model's identity, usage, raw judge outputs, re-asks). The evidence API returns it as JSON; the item page shows
it side by side with the standard variant's."""

from __future__ import annotations

from typing import Any

from dialectbias.store import (
    JudgmentEvidence,
    OverrideEvidence,
    RequestEvidence,
    Store,
    item_requests,
    judgments_of,
    overrides_of,
    request_evidence,
)
from dialectbias.view._experiments import LoadedExperiment
from dialectbias.view._text import messages_text


def model_identity(loaded: LoadedExperiment, model_id: str) -> dict[str, Any]:
    """The model's id and its identity (every setting that changes its answers; never a secret), from the
    experiment file; `{"id": model_id}` when the file no longer lists it."""
    for m in [*loaded.exp.models, *loaded.exp.judges]:
        if m.id == model_id:
            return {"id": m.id, **m.identity()}
    return {"id": model_id}


def human_score(overrides: list[OverrideEvidence], mode: str) -> float | None:
    """The human score the report reads from a judgment's overrides (`review.human_score`): the mean of each
    annotator's latest scored override, or the latest scored override (store/_judgments.py, same rules)."""
    if not overrides:
        return None
    if mode == "latest":
        return overrides[-1].value.get("score")
    latest: dict[str, OverrideEvidence] = {}
    for o in overrides:
        latest[o.annotator] = o
    scores = [float(o.value["score"]) for o in latest.values() if o.value.get("score") is not None]
    return sum(scores) / len(scores) if scores else None


def request_json(store: Store, r: RequestEvidence, *, with_text: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "request_id": r.request_id, "stage": r.stage, "model_id": r.model_id, "item_id": r.item_id,
        "variant": r.variant, "template": r.template, "refs": r.refs, "params": r.params, "meta": r.meta,
        "status": r.status, "error": r.error,
        "usage": {"tokens_in": r.tokens_in, "tokens_out": r.tokens_out, "latency_s": r.latency_s,
                  "cache_hit": bool(r.cache_hit) if r.cache_hit is not None else None, "retries": r.retries,
                  "finish_reason": r.finish_reason, "completed_at": r.completed_at}}
    if with_text:
        messages = store.resolve_messages(r.messages, images="ref")
        out.update(messages=messages, prompt=messages_text(messages), output=r.output)
    return out


def judgment_json(store: Store, j: JudgmentEvidence, overrides: list[OverrideEvidence], mode: str
                  ) -> dict[str, Any]:
    judge_request = request_evidence(store, j.request_id)
    reask = (request_evidence(store, j.source_request_id)
             if j.source_request_id and j.source_request_id != j.request_id else None)
    human = human_score(overrides, mode)
    return {
        "judge_id": j.judge_id, "score": j.score, "parsed": j.parsed, "rubric": j.rubric,
        "confidence": j.confidence, "checks": j.checks, "flags": j.flags, "clipped": j.clipped,
        "parse_status": j.parse_status, "needs_review": j.needs_review, "flagged": j.flagged, "reason": j.reason,
        "latest": j.latest, "request_id": j.request_id, "source_request_id": j.source_request_id,
        "raw_output": j.raw_output, "human_score": human, "final_score": j.score if human is None else human,
        "overrides": [{"annotation_id": o.annotation_id, "annotator": o.annotator, "value": o.value,
                       "comment": o.comment, "created_at": o.created_at} for o in overrides],
        "judge_request": request_json(store, judge_request) if judge_request else None,
        "reask": request_json(store, reask) if reask else None,
    }


def evidence(loaded: LoadedExperiment, store: Store, item_id: str, variant: str, model_id: str
             ) -> dict[str, Any] | None:
    """The evidence of the model's answer to the item in the variant, or None when the store has neither an
    answer nor a judgment of it."""
    item = store.item(item_id)
    requests = item_requests(store, model_id, item_id, variant)
    judgments = [j for j in judgments_of(store, model_id, item_id, variant) if j.judge_id != model_id]
    if item is None or (not requests and not judgments):
        return None
    answers = [r for r in requests if not r.is_reask]
    main = answers[0] if answers else None
    overrides = overrides_of(store, [j.request_id for j in judgments])
    by_target: dict[str, list[OverrideEvidence]] = {}
    for o in overrides:
        by_target.setdefault(o.target_id, []).append(o)
    mode = loaded.exp.review.human_score
    main_json = request_json(store, main) if main else None
    return {
        "experiment": loaded.key, "task": loaded.exp.task, "item_id": item_id, "variant": variant,
        "model": model_identity(loaded, model_id), "domain": item.domain, "question_type": item.question_type,
        "item_variants": dict(item.variants), "gold": item.gold,
        "prompt": main_json["prompt"] if main_json else None, "output": main_json["output"] if main_json else None,
        "request_id": main.request_id if main else None, "status": main.status if main else None,
        "request": main_json,
        "other_requests": [request_json(store, r) for r in answers[1:]],
        "reasks": [request_json(store, r) for r in requests if r.is_reask],
        "primary_judge": loaded.primary_judge, "human_score_mode": mode,
        "judgments": [judgment_json(store, j, by_target.get(j.request_id, []), mode) for j in judgments],
    }
