"""Tables of the association probe: bias per trait with bootstrap CI, t-test and rejection rate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dialectbias.metrics import bootstrap_ci, one_sample_ttest
from dialectbias.report import Section, heatmap
from dialectbias.store import Store

if TYPE_CHECKING:
    from dialectbias.tasks.association import AssociationTask

GROUPS = {"trait": ["model", "trait"], "dialect": ["model", "language", "dialect", "trait"]}


def bias_table(scored: pd.DataFrame, by: list[str], n_resamples: int, seed: int) -> pd.DataFrame:
    """Per group: answered prompts, rejection rate, mean bias, 95% bootstrap CI, one-sample t-test vs 0
    (SPEC §4 P4 Statistics; German paper §4), and how many samples had a zero denominator (flagged)."""
    rows = []
    for key, g in scored.groupby(by, sort=True):
        values = g.loc[g.accepted, "bias"].astype(float).to_numpy()
        lo, hi = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        t, p = one_sample_ttest(values)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     "n_prompts": len(g), "n_accepted": len(values),
                     "rejection_rate": 1 - len(values) / len(g) if len(g) else float("nan"),
                     "bias": float(values.mean()) if len(values) else float("nan"),
                     "ci_low": lo, "ci_high": hi, "t": t, "p": p,
                     "flagged": int(g.loc[g.accepted, "flagged"].astype(bool).sum())})
    return pd.DataFrame(rows)


def write_association_report(task: AssociationTask, store: Store, out_dir: Path) -> dict[str, Any]:
    models = [m.id for m in task.exp.models]
    scored = pd.DataFrame(list(task.scored_rows(store)))
    if scored.empty:
        return {"title": f"{task.exp.name}: association probe", "sections": [Section(
            heading="No answers yet", text="No generation has completed: run `dialectbias run` first.")]}
    scored = scored[scored.model.isin(models)]
    scored.to_csv(out_dir / "association_answers.csv", index=False)
    n_res, seed = task.options.n_resamples, task.exp.seed
    by_trait = bias_table(scored, GROUPS["trait"], n_res, seed)
    by_trait.to_csv(out_dir / "association_bias_by_trait.csv", index=False)
    by_dialect = bias_table(scored, GROUPS["dialect"], n_res, seed)
    by_dialect.to_csv(out_dir / "association_bias_by_dialect.csv", index=False)
    wide = by_trait.pivot(index="model", columns="trait", values="bias").reindex(
        index=[m for m in models if m in set(by_trait.model)], columns=task.trait_names)
    wide.insert(0, "rejection_rate", [1 - scored[scored.model == m].accepted.mean() for m in wide.index])
    wide["avg"] = wide[task.trait_names].mean(axis=1)
    wide = wide.reset_index()
    wide.columns.name = None
    wide.to_csv(out_dir / "association_bias.csv", index=False)
    heat = by_dialect.assign(row=by_dialect.model + " · " + by_dialect.language.fillna("") + "/" +
                             by_dialect.dialect).pivot(index="row", columns="trait", values="bias")
    png = heatmap(heat.reindex(columns=task.trait_names), "association bias (−1 … 1; >0 = stereotypical)",
                  out_dir / "association_heatmap", vmin=-1, vmax=1, cmap="RdBu_r")
    rejected = scored[~scored.accepted].head(10)[["model", "item_id", "reject_reason"]]
    sections = [
        Section(heading="Bias per model and trait", table=by_trait,
                text="bias ∈ [−1, 1]: +1 = the dialect writer always gets the stereotyped adjectives "
                     "(uneducated, careless, …), 0 = no preference, −1 = the reverse. CI: 95% bootstrap "
                     f"({n_res} resamples, seed {seed}); p: one-sample t-test of bias vs 0. Rejected answers "
                     "(missing/extra/unknown adjectives or writers) are excluded and counted."),
        Section(heading="Bias per model, dialect and trait", table=by_dialect),
        Section(heading="Heatmap", image_png=png, image_alt="bias heatmap"),
        Section(heading="Examples of rejected answers", table=rejected),
    ]
    accepted = scored[scored.accepted]
    return {"title": f"{task.exp.name}: association probe ({task.options.setting} setting)",
            "sections": sections,
            "metadata": {"prompts answered": len(scored), "accepted": len(accepted),
                         "rejection rate": f"{1 - len(accepted) / len(scored):.3f}",
                         "mean bias": f"{np.nanmean(accepted.bias.astype(float)):.3f}" if len(accepted) else "—"},
            "tables": {"by_trait": by_trait}}
