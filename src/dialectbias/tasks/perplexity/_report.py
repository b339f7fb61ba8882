"""Report of a perplexity run (German dialect-bias paper, App. C.2, Figure 14): `perplexity_scores.csv` (per model
× variant), `perplexity_dialect_vs_noisy.csv` (the paper's claim: dialect texts are less perplexing than noisy
ones) and `perplexity_texts.csv` (per text), as CSV and HTML."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dialectbias.data import STANDARD
from dialectbias.metrics import paired_test
from dialectbias.report import ReportContent, Section
from dialectbias.store import Store
from dialectbias.tasks.perplexity._scores import ratio_ci, summarize
from dialectbias.tasks.perplexity._texts import text_rows
from dialectbias.text import NOISY

if TYPE_CHECKING:
    from dialectbias.tasks.perplexity._task import PerplexityTask

ALL_DIALECTS = "all dialects"
TEXT_COLUMNS = ["model", "item_id", "variant", "n_tokens", "logprob_sum", "perplexity"]
SCORE_COLUMNS = ["model", "variant", "n_texts", "n_tokens", "mean_tokens", "perplexity", "mean_ppl", "median_ppl",
                 "pooled_ppl", "n_pairs", "ratio", "ci_low", "ci_high", "t_p", "wilcoxon_p"]
VS_COLUMNS = ["model", "dialect", "n_pairs", "dialect_ppl", "noisy_ppl", "ratio", "ci_low", "ci_high", "t_p",
              "wilcoxon_p", "dialect_lower"]


def _legend(agg: str, baseline: str, confidence: float) -> dict[str, str]:
    pct = f"{confidence:.0%}"
    return {
        "model": "the model",
        "variant": f"{baseline} (the baseline), {STANDARD} (when not the baseline), a dialect, '{ALL_DIALECTS}' "
                   f"(every dialect text together, when there are several), or {NOISY} (the noised standard text)",
        "n_texts": "texts with a perplexity (at least one scored token)",
        "n_tokens": "scored tokens over those texts (every token but each text's first)",
        "mean_tokens": "n_tokens / n_texts: text length in the model's own tokens (App. C.2, Figure 13), less the "
                       "first token",
        "perplexity": f"the summary this report uses ({agg}): mean_ppl for per_text, pooled_ppl for pooled",
        "mean_ppl": "mean over texts of exp(−mean token logprob) (the paper's 'mean perplexity', App. C.2)",
        "median_ppl": "median over texts of the per-text perplexity",
        "pooled_ppl": "exp(−Σ logprobs / Σ tokens) over all the texts' tokens",
        "n_pairs": f"items with both this variant's and the {baseline} text (the ratio's pairs)",
        "ratio": f"perplexity of this variant / of the {baseline} text on the paired items ({agg})",
        "ci_low, ci_high": f"{pct} percentile-bootstrap CI of the ratio, resampling items (pairs together)",
        "t_p": f"paired t-test p of the per-text perplexities, this variant vs {baseline}",
        "wilcoxon_p": "Wilcoxon signed-rank p of the same pairs",
    }


def _vs_legend(agg: str, confidence: float) -> dict[str, str]:
    return {
        "model": "the model",
        "dialect": f"the dialect ('{ALL_DIALECTS}': every dialect text with its item's noisy text)",
        "n_pairs": "items with both the dialect text and the noisy text",
        "dialect_ppl, noisy_ppl": f"perplexity ({agg}) of the paired dialect and noisy texts",
        "ratio": "dialect_ppl / noisy_ppl (below 1: the model finds the dialect less perplexing than noise)",
        "ci_low, ci_high": f"{confidence:.0%} percentile-bootstrap CI of the ratio, resampling items",
        "t_p": "paired t-test p of the per-text perplexities, dialect vs noisy",
        "wilcoxon_p": "Wilcoxon signed-rank p of the same pairs",
        "dialect_lower": "the CI lies wholly below 1",
    }


def _paired(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Rows of `a` joined with `b`'s row of the same model and item (suffixes _a, _b)."""
    return a.merge(b, on=["model", "item_id"], suffixes=("_a", "_b"))


def _comparison(pairs: pd.DataFrame, task: PerplexityTask, seed: int) -> dict[str, Any]:
    o = task.options
    ratio, lo, hi = ratio_ci(pairs.logprob_sum_a, pairs.n_tokens_a, pairs.logprob_sum_b, pairs.n_tokens_b,
                             o.aggregate, n_resamples=o.n_resamples, confidence=o.confidence, seed=seed)
    test = paired_test(pairs.perplexity_a.to_numpy(), pairs.perplexity_b.to_numpy())
    return {"n_pairs": len(pairs), "ratio": ratio, "ci_low": lo, "ci_high": hi, "t_p": test.t_pvalue,
            "wilcoxon_p": test.wilcoxon_pvalue}


def _summary(rows: pd.DataFrame, agg: str) -> dict[str, Any]:
    mean = float(rows.perplexity.mean()) if len(rows) else math.nan
    pooled = summarize(rows.logprob_sum, rows.n_tokens, "pooled")
    n_tokens = int(rows.n_tokens.sum())
    return {"n_texts": len(rows), "n_tokens": n_tokens, "mean_tokens": n_tokens / len(rows) if len(rows) else math.nan,
            "perplexity": mean if agg == "per_text"
            else pooled, "mean_ppl": mean, "median_ppl": float(rows.perplexity.median()) if len(rows) else math.nan,
            "pooled_ppl": pooled}


def score_tables(task: PerplexityTask, texts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(perplexity_scores, perplexity_dialect_vs_noisy) from the per-text rows."""
    o = task.options
    seed = task.exp.seed
    scores: list[dict[str, Any]] = []
    versus: list[dict[str, Any]] = []
    for model in dict.fromkeys(texts.model):
        mine = texts[texts.model == model]
        base = mine[mine.variant == o.baseline]
        noisy = mine[mine.variant == NOISY]
        dialects = sorted(v for v in set(mine.variant) if v not in (o.baseline, STANDARD, NOISY))
        groups = [(o.baseline, base)]
        if o.baseline != STANDARD and (mine.variant == STANDARD).any():
            groups.append((STANDARD, mine[mine.variant == STANDARD]))
        groups += [(d, mine[mine.variant == d]) for d in dialects]
        if len(dialects) > 1:
            groups.append((ALL_DIALECTS, mine[mine.variant.isin(dialects)]))
        if len(noisy) and o.baseline != NOISY:
            groups.append((NOISY, noisy))
        for name, rows in groups:
            row: dict[str, Any] = {"model": model, "variant": name, **_summary(rows, o.aggregate)}
            if name != o.baseline:
                row.update(_comparison(_paired(rows, base), task, seed))
            scores.append(row)
            if name not in (o.baseline, STANDARD, NOISY) and len(noisy):
                pairs = _paired(rows, noisy)
                c = _comparison(pairs, task, seed)
                versus.append({"model": model, "dialect": name, "n_pairs": c["n_pairs"],
                               "dialect_ppl": summarize(pairs.logprob_sum_a, pairs.n_tokens_a, o.aggregate),
                               "noisy_ppl": summarize(pairs.logprob_sum_b, pairs.n_tokens_b, o.aggregate),
                               **{k: c[k] for k in ("ratio", "ci_low", "ci_high", "t_p", "wilcoxon_p")},
                               "dialect_lower": bool(c["ci_high"] < 1) if not np.isnan(c["ci_high"]) else None})
    table = pd.DataFrame(scores, columns=SCORE_COLUMNS)
    table["n_pairs"] = table["n_pairs"].astype("Int64")  # blank on the baseline's row, an integer elsewhere
    return table, pd.DataFrame(versus, columns=VS_COLUMNS)


def write_report(task: PerplexityTask, store: Store, out_dir: Path) -> ReportContent:
    o = task.options
    rows, problems = text_rows(store, [m.id for m in task.exp.models])
    texts = pd.DataFrame(rows, columns=TEXT_COLUMNS)
    scores, versus = score_tables(task, texts)
    out_dir.mkdir(parents=True, exist_ok=True)
    texts.to_csv(out_dir / "perplexity_texts.csv", index=False)
    scores.to_csv(out_dir / "perplexity_scores.csv", index=False)
    versus.to_csv(out_dir / "perplexity_dialect_vs_noisy.csv", index=False)
    unusable = (f" {len(problems)} scored text(s) gave no perplexity (e.g. {problems[0].model}/{problems[0].item_id}/"
                f"{problems[0].variant}: {problems[0].reason}) and are left out." if problems else "")
    if len(texts) and not (texts.variant == o.baseline).any():
        unusable += (f" No text has the baseline variant {o.baseline!r} (options.baseline), so there is no ratio; "
                     f"the variants scored: {', '.join(sorted(set(texts.variant)))}.")
    rule = ("Each text is scored as it is, with no prompt around it; its perplexity is exp(−mean logprob) over its "
            "scored tokens: every token but the first, which has no prefix (with a tokenizer that adds a BOS token, "
            "the BOS is the first and every text token is scored).")
    sections = [
        Section(heading="Perplexity per model × variant (German paper App. C.2, Figure 14)", table=scores,
                legend=_legend(o.aggregate, o.baseline, o.confidence), empty="no scored text",
                text=f"{rule} Summary: {o.aggregate} (options.aggregate).{unusable}"),
        Section(heading="Dialect vs noisy text", table=versus, legend=_vs_legend(o.aggregate, o.confidence),
                empty=f"no item has both a dialect text and a {NOISY!r} text (build one with `dialectbias build "
                      "noise`)",
                text="The paper finds the dialect texts significantly less perplexing than the noisy ones: the "
                     "models know the dialects, so a bias against dialect text is not a reaction to noise."),
    ]
    metadata = {"perplexity summary": f"{o.aggregate} (options.aggregate)", "ratio baseline": o.baseline,
                "first token": "not scored (no prefix)",
                "bootstrap": f"{o.n_resamples} resamples, seed {task.exp.seed}"}
    return ReportContent(title="Perplexity control", sections=sections, metadata=metadata)


__all__ = ["score_tables", "write_report"]
