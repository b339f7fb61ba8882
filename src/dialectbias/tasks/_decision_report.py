"""Tables of the decision probe: decision score per model × trait × setting (× prefix, × dialect, × scenario) with
the share of stereotypical decisions, bootstrap CI, one-sample t-test, and the unextractable answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dialectbias.metrics import bootstrap_ci, one_sample_ttest
from dialectbias.report import Section, heatmap
from dialectbias.store import Store
from dialectbias.tasks._association_report import _with_language

if TYPE_CHECKING:
    from dialectbias.tasks.decision import DecisionTask

#: significance level of the one-sample t-test (German paper §5.1 reports p < 0.001)
ALPHA = 0.001
MAX_UNEXTRACTABLE_EXAMPLES = 10

GROUPS = {
    "trait": ["model", "setting", "prefix", "trait"],
    "dialect": ["model", "setting", "prefix", "language", "dialect", "trait"],
    "scenario": ["model", "setting", "prefix", "trait", "scenario"],
    "prefix": ["model", "setting", "prefix"],
}
COLUMNS = ["n_answers", "n_extracted", "n_unextractable", "n_extractor_failed", "n_regex", "n_inferred",
           "n_same_option", "bias", "pct_stereotypical", "pct_counter", "ci_low", "ci_high", "t", "p", "significant"]

LEGEND = {
    "model": "the model's id",
    "setting": "naming (writer labels) or usage (the standard text and its dialect version)",
    "prefix": "the writer prefix (App. B.1): default, consider or imagine",
    "language": "language of the dialect: the item's `language` field, else the dialect registry's; — = unknown",
    "dialect": "the dialect the dialect writer uses (the other writer uses the standard language)",
    "trait": "the stereotype trait; its concept poles are in the traits file",
    "scenario": "the decision scenario (decision_scenarios.yaml; the paper's App. D.2)",
    "n_answers": "prompts answered (successful generations)",
    "n_extracted": "answers whose decision was read (extractor JSON or regex fallback)",
    "n_unextractable": "answers whose decision could not be read: no score, counted here (decision_answers.csv has "
                       "the reasons)",
    "n_extractor_failed": "answers whose extractor call failed or is not done yet (the regex fallback still read "
                          "the answer itself; those it could not read are also in n_unextractable)",
    "n_regex": "decisions read by the regex fallback rather than the extractor's JSON",
    "n_inferred": "decisions where one writer's option was read and the other's inferred as the remaining option",
    "n_same_option": "decisions giving both writers the same option (score 0)",
    "bias": "mean decision score in [−1, 1] over extracted decisions: +1 = the dialect writer gets the "
            "trait-consistent option and the standard writer the other, −1 = the reverse; with None/Both "
            "(App. B.3) one neutral writer gives ±0.5, two give 0; — = nothing extracted",
    "pct_stereotypical": "% of extracted decisions scored > 0 (for forced choices, (bias + 1) / 2 · 100: 0.5 = 75%)",
    "pct_counter": "% of extracted decisions scored < 0",
    "ci_low, ci_high": "95% percentile-bootstrap interval of the mean score (— with fewer than 2 decisions)",
    "t, p": "one-sample t-test of the scores against 0, two-sided (— with fewer than 2 decisions)",
    "significant": f"p < {ALPHA} (the paper's level)",
}


def decision_table(rows: pd.DataFrame, by: list[str], n_resamples: int, seed: int) -> pd.DataFrame:
    """Per group: answers, extracted and unextractable counts, mean decision score, % stereotypical, 95%
    bootstrap CI and one-sample t-test against 0 (SPEC §4 P4 Statistics; German paper §3.4, §5.1)."""
    out = []
    for key, g in rows.groupby(by, sort=True, dropna=False):
        ok = g[g.extracted.astype(bool)]
        scores = ok.score.astype(float).to_numpy()
        lo, hi = bootstrap_ci(scores, n_resamples=n_resamples, seed=seed)
        t, p = one_sample_ttest(scores)
        n = len(scores)
        out.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                    "n_answers": len(g), "n_extracted": n, "n_unextractable": len(g) - n,
                    "n_extractor_failed": int((g.extractor_status != "ok").sum()),
                    "n_regex": int(ok.method.str.startswith("regex").sum()), "n_inferred": int(ok.inferred.sum()),
                    "n_same_option": int(ok.same_option.sum()),
                    "bias": float(scores.mean()) if n else float("nan"),
                    "pct_stereotypical": 100.0 * float((scores > 0).mean()) if n else float("nan"),
                    "pct_counter": 100.0 * float((scores < 0).mean()) if n else float("nan"),
                    "ci_low": lo, "ci_high": hi, "t": t, "p": p,
                    "significant": bool(p < ALPHA) if p == p else None})
    return pd.DataFrame(out, columns=[*by, *COLUMNS])


def unextractable_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Unextractable answers per model × trait × setting, with how the rest were read."""
    by = ["model", "trait", "setting"]
    out = []
    for key, g in rows.groupby(by, sort=True, dropna=False):
        ok = g.extracted.astype(bool)
        out.append({**dict(zip(by, key, strict=True)), "n_answers": len(g), "n_unextractable": int((~ok).sum()),
                    "unextractable_rate": float((~ok).mean()), "n_json": int((g.method == "json").sum()),
                    "n_regex_extractor": int((g.method == "regex_extractor").sum()),
                    "n_regex_generation": int((g.method == "regex_generation").sum()),
                    "n_extractor_failed": int((g.extractor_status != "ok").sum())})
    return pd.DataFrame(out, columns=[*by, "n_answers", "n_unextractable", "unextractable_rate", "n_json",
                                      "n_regex_extractor", "n_regex_generation", "n_extractor_failed"])


def _legend(columns: list[str]) -> dict[str, str]:
    keys = {k for c in columns for k in LEGEND if c in k.split(", ")}
    return {k: LEGEND[k] for k in LEGEND if k in keys}


def write_decision_report(task: DecisionTask, store: Store, out_dir: Path) -> dict[str, Any]:
    models = [m.id for m in task.exp.models]
    title = f"{task.exp.name}: decision probe ({task.options.setting} setting)"
    rows = pd.DataFrame(list(task.scored_rows(store)))
    if not rows.empty:
        rows = rows[rows.model.isin(models)]
    if rows.empty:
        return {"title": title, "sections": [Section(
            heading="No answers yet", text="No generation of the experiment's models has completed: run "
                                           "`dialectbias run` first.")]}
    rows = _with_language(rows, task.exp.dialects)
    rows.to_csv(out_dir / "decision_answers.csv", index=False)
    n_res, seed = task.options.n_resamples, task.exp.seed
    tables = {name: decision_table(rows, by, n_res, seed) for name, by in GROUPS.items()}
    for name, table in tables.items():
        table.to_csv(out_dir / f"decision_bias_by_{name}.csv", index=False)
    unextractable = unextractable_table(rows)
    unextractable.to_csv(out_dir / "decision_unextractable.csv", index=False)
    by_trait = tables["trait"]
    traits = [t for t in task.trait_names if t in set(by_trait.trait)] or task.trait_names
    wide = by_trait.assign(row=by_trait.model + " · " + by_trait.prefix).pivot(
        index="row", columns="trait", values="bias").reindex(columns=traits)
    png = heatmap(wide, "decision bias (−1 … 1; >0 = stereotypical)", out_dir / "decision_heatmap", vmin=-1, vmax=1,
                  cmap="RdBu_r")
    bad = rows[~rows.extracted.astype(bool)]
    examples = bad.head(MAX_UNEXTRACTABLE_EXAMPLES)[["model", "item_id", "scenario", "reason"]].reset_index(drop=True)
    several_prefixes = len(task.options.prefixes) > 1
    ci_text = f"CI: 95% bootstrap ({n_res:,} resamples, seed {seed}); t-test against 0, significant at p < {ALPHA}."
    sections = [
        Section(heading="Decision bias per model and trait", table=by_trait, legend=_legend(list(by_trait.columns)),
                text=ci_text + " Unextractable answers carry no score and are counted."),
        Section(heading="Decision bias per writer prefix (App. B.1)", table=tables["prefix"],
                legend=_legend(list(tables["prefix"].columns)),
                text="Every prompt is sent under each prefix with the same options and writer order, so the rows "
                     "differ by the prefix only." if several_prefixes else
                     "One prefix in this run: list several under `options.prefix` to compare them."),
        Section(heading="Decision bias per model, dialect and trait", table=tables["dialect"],
                legend=_legend(list(tables["dialect"].columns))),
        Section(heading="Decision bias per scenario", table=tables["scenario"],
                legend=_legend(list(tables["scenario"].columns))),
        Section(heading="Heatmap", image_png=png, image_alt="decision bias heatmap"),
        Section(heading="Unextractable answers per model, trait and setting", table=unextractable,
                legend={**_legend(["model", "trait", "setting", "n_answers", "n_unextractable",
                                   "n_extractor_failed"]),
                        "unextractable_rate": "n_unextractable / n_answers",
                        "n_json": "decisions read from the extractor's JSON",
                        "n_regex_extractor": "read by the regex fallback from the extractor's text",
                        "n_regex_generation": "read by the regex fallback from the model's answer itself"}),
        Section(heading="Examples of unextractable answers", table=examples,
                text=(f"The first {len(examples)} of {len(bad)} unextractable answers; all are in "
                      "decision_answers.csv (extracted = False)." if len(bad) else ""),
                empty="none: a decision was read from every answer",
                legend={"model": "the model's id", "item_id": "the prompt's item", "scenario": LEGEND["scenario"],
                        "reason": "why neither the extractor's JSON nor the regex fallback gave a decision"}),
    ]
    ok = rows[rows.extracted.astype(bool)]
    return {"title": title, "sections": sections,
            "metadata": {"prompts answered": len(rows), "decisions extracted": len(ok),
                         "unextractable": len(rows) - len(ok),
                         "mean decision score": f"{np.nanmean(ok.score.astype(float)):.3f}" if len(ok) else "—"},
            "tables": {"by_trait": by_trait}}
