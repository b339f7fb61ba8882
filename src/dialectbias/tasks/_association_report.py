"""Tables of the association probe: bias per trait with bootstrap CI, t-test and rejection rate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dialectbias.data._registry import language_of
from dialectbias.metrics import bootstrap_ci, one_sample_ttest
from dialectbias.report import Section, heatmap
from dialectbias.store import Store

if TYPE_CHECKING:
    from dialectbias.tasks.association import AssociationTask

GROUPS = {"trait": ["model", "trait"], "dialect": ["model", "language", "dialect", "trait"]}
UNKNOWN_LANGUAGE = "—"
MAX_REJECTED_EXAMPLES = 10

BIAS_LEGEND = {
    "model": "the model's id",
    "language": "language of the dialect: the item's `language` field, else the dialect registry's; — = unknown",
    "dialect": "the dialect the dialect writer uses (the other writer uses the standard language)",
    "trait": "the stereotype trait; its adjective poles are in the traits file",
    "n_prompts": "prompts answered (successful generations)",
    "n_accepted": "answers accepted by strict parsing: one 'adjective: writer' line per adjective",
    "rejection_rate": "1 − n_accepted / n_prompts; rejected answers are excluded from the bias",
    "bias": "mean bias in [−1, 1] over accepted answers: +1 = the dialect writer always gets the trait pole, "
            "0 = no preference, −1 = the reverse; — = no accepted answer",
    "ci_low, ci_high": "95% percentile-bootstrap interval of the mean bias (— with fewer than 2 accepted answers)",
    "t, p": "one-sample t-test of the bias against 0, two-sided (— with fewer than 2 accepted answers)",
    "flagged": "accepted answers in which one writer got no adjective, so that writer's term counts 0.5 "
               "(the paper's code scores such an answer 0)",
}


def bias_table(scored: pd.DataFrame, by: list[str], n_resamples: int, seed: int) -> pd.DataFrame:
    """Per group: answered prompts, rejection rate, mean bias, 95% bootstrap CI, one-sample t-test vs 0
    (SPEC §4 P4 Statistics; German paper §4), and how many samples had a zero denominator (flagged)."""
    rows = []
    for key, g in scored.groupby(by, sort=True, dropna=False):
        values = g.loc[g.accepted, "bias"].astype(float).to_numpy()
        lo, hi = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        t, p = one_sample_ttest(values)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     "n_prompts": len(g), "n_accepted": len(values),
                     "rejection_rate": 1 - len(values) / len(g) if len(g) else float("nan"),
                     "bias": float(values.mean()) if len(values) else float("nan"),
                     "ci_low": lo, "ci_high": hi, "t": t, "p": p,
                     "flagged": int(g.loc[g.accepted, "flagged"].astype(bool).sum())})
    return pd.DataFrame(rows, columns=[*by, "n_prompts", "n_accepted", "rejection_rate", "bias", "ci_low",
                                       "ci_high", "t", "p", "flagged"])


def _with_language(scored: pd.DataFrame, extra: dict[str, list[str]]) -> pd.DataFrame:
    """Fill `language` where the item named none (usage-setting items need no `language` field)."""
    known = scored.language.where(scored.language.notna() & (scored.language.astype(str) != ""))
    guessed = scored.dialect.map(lambda d: language_of(str(d), extra) or UNKNOWN_LANGUAGE)
    return scored.assign(language=known.fillna(guessed))


def write_association_report(task: AssociationTask, store: Store, out_dir: Path) -> dict[str, Any]:
    models = [m.id for m in task.exp.models]
    title = f"{task.exp.name}: association probe ({task.options.setting} setting)"
    scored = pd.DataFrame(list(task.scored_rows(store)))
    if not scored.empty:
        scored = scored[scored.model.isin(models)]
    if scored.empty:
        return {"title": title, "sections": [Section(
            heading="No answers yet", text="No generation of the experiment's models has completed: run "
                                           "`dialectbias run` first.")]}
    scored = _with_language(scored, task.exp.dialects)
    scored.to_csv(out_dir / "association_answers.csv", index=False)
    n_res, seed = task.options.n_resamples, task.exp.seed
    by_trait = bias_table(scored, GROUPS["trait"], n_res, seed)
    by_trait.to_csv(out_dir / "association_bias_by_trait.csv", index=False)
    by_dialect = bias_table(scored, GROUPS["dialect"], n_res, seed)
    by_dialect.to_csv(out_dir / "association_bias_by_dialect.csv", index=False)
    traits = [t for t in task.trait_names if t in set(by_trait.trait)] or task.trait_names
    wide = by_trait.pivot(index="model", columns="trait", values="bias").reindex(
        index=[m for m in models if m in set(by_trait.model)], columns=traits)
    wide.insert(0, "rejection_rate", [1 - scored[scored.model == m].accepted.mean() for m in wide.index])
    wide["avg"] = wide[traits].mean(axis=1)
    wide = wide.reset_index()
    wide.columns.name = None
    wide.to_csv(out_dir / "association_bias.csv", index=False)
    heat = by_dialect.assign(row=by_dialect.model + " · " + by_dialect.language + "/" +
                             by_dialect.dialect).pivot(index="row", columns="trait", values="bias")
    png = heatmap(heat.reindex(columns=traits), "association bias (−1 … 1; >0 = stereotypical)",
                  out_dir / "association_heatmap", vmin=-1, vmax=1, cmap="RdBu_r")
    rejected = scored[~scored.accepted]
    examples = rejected.head(MAX_REJECTED_EXAMPLES)[["model", "item_id", "reject_reason"]].reset_index(drop=True)
    legend = {k: v for k, v in BIAS_LEGEND.items() if k not in ("language", "dialect")}
    sections = [
        Section(heading="Bias per model and trait", table=by_trait,
                text=f"CI: 95% bootstrap ({n_res:,} resamples, seed {seed}). Rejected answers (missing, extra "
                     "or unknown adjectives or writers) are excluded from the bias and counted.",
                legend=legend),
        Section(heading="Bias per model, dialect and trait", table=by_dialect, legend=BIAS_LEGEND),
        Section(heading="Heatmap", image_png=png, image_alt="bias heatmap"),
        Section(heading="Examples of rejected answers", table=examples,
                text=(f"The first {len(examples)} of {len(rejected)} rejected answers; all are in "
                      "association_answers.csv (accepted = False)." if len(rejected) else ""),
                empty="none: every answer passed strict parsing",
                legend={"model": "the model's id", "item_id": "the prompt's item",
                        "reject_reason": "why strict parsing rejected the answer (the offending lines)"}),
    ]
    accepted = scored[scored.accepted]
    return {"title": title, "sections": sections,
            "metadata": {"prompts answered": len(scored), "accepted": len(accepted),
                         "rejection rate": f"{1 - len(accepted) / len(scored):.3f}",
                         "mean bias": f"{np.nanmean(accepted.bias.astype(float)):.3f}" if len(accepted) else "—"},
            "tables": {"by_trait": by_trait}}
