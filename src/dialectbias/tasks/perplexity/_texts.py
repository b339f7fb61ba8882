"""The per-text rows of a perplexity run: each stored prompt-logprob result → (model, item, variant, scored tokens,
their logprob sum, the text's perplexity). The logprobs themselves stay in the result's `output` (the JSON of a
`PromptLogprobs`), so every figure can be recomputed from the store."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dialectbias.providers import parse_prompt_logprobs
from dialectbias.store import Store
from dialectbias.tasks.perplexity._scores import text_perplexity

STAGE = "score"


@dataclass(frozen=True)
class Unusable:
    """A stored result that gives no perplexity, and why."""

    model: str
    item_id: str
    variant: str
    reason: str


def text_rows(store: Store, model_ids: list[str]) -> tuple[list[dict[str, Any]], list[Unusable]]:
    """Per-text rows of the current results (models in `model_ids` order, then item, then variant) and the
    results that give none (malformed, or a one-token text: nothing scored)."""
    rows: list[dict[str, Any]] = []
    problems: list[Unusable] = []
    for model_id in model_ids:
        results = sorted(store.stage_results(STAGE, model_id), key=lambda r: (r.item_id, r.variant))
        for r in results:
            try:
                scored = parse_prompt_logprobs(r.output or "").scored()
            except ValueError as exc:
                problems.append(Unusable(model_id, r.item_id, r.variant, str(exc)))
                continue
            if not scored:
                problems.append(Unusable(model_id, r.item_id, r.variant, "no token after the first to score"))
                continue
            total = math.fsum(scored)
            rows.append({"model": model_id, "item_id": r.item_id, "variant": r.variant, "n_tokens": len(scored),
                         "logprob_sum": total, "perplexity": text_perplexity(total, len(scored))})
    return rows, problems


__all__ = ["STAGE", "Unusable", "text_rows"]
