"""Tables of the stereotype probes shared by the association and decision tasks (German paper §4–6, App. B–C;
SPEC §4 P4 "Statistics", "Noisy control", "Marked words").

Every function takes `scored`: one row per prompt answered, with at least the columns `model`, `setting`,
`trait`, `dialect`, `accepted` (the answer could be scored) and the score column (default `bias`; NaN when
not accepted). Groups are sorted; a group with fewer than 2 scores has empty (nan) t, p, CI and d.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dialectbias.metrics import (
    ALPHA_BIAS,
    ALPHA_COMPARE,
    bias_vs_zero,
    compare_groups,
    marked_words,
)
from dialectbias.providers import ModelConfig
from dialectbias.report import Section

STAT_COLUMNS = ["n_prompts", "n_accepted", "rejection_rate", "bias", "sd", "ci_low", "ci_high", "t", "p",
                "significant", "cohens_d"]

STAT_LEGEND = {
    "model": "the model's id",
    "setting": "naming: the writers are described by labels; usage: they are shown a standard text and its "
               "dialect version",
    "trait": "the stereotype trait (the pole perception studies attach to dialect speakers)",
    "dialect": "the dialect of the dialect writer (the other writer uses the standard language)",
    "language": "language of the dialect: the item's `language` field, else the dialect registry's",
    "domain": "the topic (`domain` field) of the usage-setting text",
    "n_prompts": "prompts answered (successful generations)",
    "n_accepted": "answers that could be scored (accepted by strict parsing or extracted)",
    "rejection_rate": "1 − n_accepted / n_prompts; rejected answers are excluded from the bias and counted",
    "bias": "mean bias in [−1, 1]: > 0 = stereotypical, 0 = no preference, < 0 = the reverse",
    "sd": "standard deviation of the scores (ddof 1)",
    "ci_low, ci_high": "95% percentile-bootstrap interval of the mean (seeded)",
    "t, p": "one-sample t-test of the mean against 0, two-sided",
    "significant": f"p < {ALPHA_BIAS} (the German paper's threshold, §5.1)",
    "cohens_d": "Cohen's d = mean / sd (German paper App. B.2)",
    "flagged": "accepted answers in which one writer got no adjective, so that writer's term counts 0.5 "
               "(the paper's code scores such an answer 0)",
}


def stats_table(scored: pd.DataFrame, by: Sequence[str], *, n_resamples: int, seed: int,
                value: str = "bias") -> pd.DataFrame:
    """Per group: prompts, scored answers, rejection rate, mean, sd, 95% bootstrap CI, one-sample t-test vs 0
    with significance at p < 0.001 and Cohen's d (`dialectbias.metrics.bias_vs_zero`)."""
    rows = []
    for key, g in scored.groupby(list(by), sort=True, dropna=False):
        values = g.loc[g.accepted.astype(bool), value].astype(float).to_numpy()
        r = bias_vs_zero(values, n_resamples=n_resamples, seed=seed)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     "n_prompts": len(g), "n_accepted": r.n,
                     "rejection_rate": 1 - r.n / len(g) if len(g) else math.nan, "bias": r.mean, "sd": r.sd,
                     "ci_low": r.ci_low, "ci_high": r.ci_high, "t": r.t, "p": r.p, "significant": r.significant,
                     "cohens_d": r.cohens_d})
    return pd.DataFrame(rows, columns=[*by, *STAT_COLUMNS])


def comparison_legend(a: str, b: str, what: str) -> dict[str, str]:
    return {
        f"n_{a}, n_{b}": f"scored answers in each group ({what})",
        f"bias_{a}, bias_{b}": "mean bias of each group",
        "diff": f"bias_{a} − bias_{b}",
        "ci_low, ci_high": "95% bootstrap interval of the difference (each group resampled on its own, seeded)",
        "t, p": "two-sample t-test, two-sided: Welch's (unequal variances), or Student's (pooled) with "
                "options.t_test: student (the paper's; departures.csv says which)",
        "significant": f"p < {ALPHA_COMPARE}",
        "cohens_d": "Cohen's d of the difference, pooled sd",
    }


def comparison_table(scored: pd.DataFrame, by: Sequence[str], column: str, a: str, b: str, *, n_resamples: int,
                     seed: int, value: str = "bias", label_a: str | None = None,
                     label_b: str | None = None, student: bool = False) -> pd.DataFrame:
    """Per group of `by`: the rows with `column == a` against those with `column == b` (e.g. setting naming vs
    usage, condition dialect vs noisy): Welch's t-test, p < 0.05, Cohen's d and a bootstrap CI of the
    difference (`dialectbias.metrics.compare_groups`). Groups lacking either side are left out."""
    la, lb = label_a or a, label_b or b
    cols = [*by, f"n_{la}", f"bias_{la}", f"n_{lb}", f"bias_{lb}", "diff", "ci_low", "ci_high", "t", "p",
            "significant", "cohens_d"]
    ok = scored[scored.accepted.astype(bool)]
    rows = []
    for key, g in ok.groupby(list(by), sort=True, dropna=False):
        x = g.loc[g[column] == a, value].astype(float).to_numpy()
        y = g.loc[g[column] == b, value].astype(float).to_numpy()
        if not len(x) or not len(y):
            continue
        r = compare_groups(x, y, n_resamples=n_resamples, seed=seed, student=student)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     f"n_{la}": r.n_a, f"bias_{la}": r.mean_a, f"n_{lb}": r.n_b, f"bias_{lb}": r.mean_b,
                     "diff": r.diff, "ci_low": r.ci_low, "ci_high": r.ci_high, "t": r.t, "p": r.p,
                     "significant": r.significant, "cohens_d": r.cohens_d})
    return pd.DataFrame(rows, columns=cols)


FAMILY_LEGEND = {
    "family": "the models' `family` in the experiment file",
    "larger, smaller": "the largest and the smallest model of the family by `params_b`",
    "params_larger, params_smaller": "their sizes in billions of parameters",
    **{k: v for k, v in comparison_legend("larger", "smaller", "larger vs smaller model").items()},
}


def family_table(scored: pd.DataFrame, models: Sequence[ModelConfig], by: Sequence[str], *, n_resamples: int,
                 seed: int, value: str = "bias", student: bool = False) -> pd.DataFrame:
    """Larger vs smaller model of each `family` (the largest and the smallest `params_b` among the
    experiment's models with both fields; German paper §5, model sizes), per group of `by` (e.g. setting ×
    trait): `comparison_table` with the two models as the groups."""
    sized = [m for m in models if m.family and m.params_b is not None]
    frames = []
    for family in sorted({m.family for m in sized if m.family}):
        members = sorted((m for m in sized if m.family == family), key=lambda m: m.params_b or 0.0)
        if len(members) < 2 or members[0].params_b == members[-1].params_b:
            continue
        small, large = members[0], members[-1]
        part = scored[scored.model.isin([small.id, large.id])]
        table = comparison_table(part, by, "model", large.id, small.id, n_resamples=n_resamples, seed=seed,
                                 value=value, label_a="larger", label_b="smaller", student=student)
        table.insert(0, "params_smaller", small.params_b)
        table.insert(0, "params_larger", large.params_b)
        table.insert(0, "smaller", small.id)
        table.insert(0, "larger", large.id)
        table.insert(0, "family", family)
        frames.append(table)
    columns = ["family", "larger", "smaller", "params_larger", "params_smaller", *by, "n_larger", "bias_larger",
               "n_smaller", "bias_smaller", "diff", "ci_low", "ci_high", "t", "p", "significant", "cohens_d"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


REJECTION_LEGEND = {
    "model": "the model's id",
    "setting": "naming or usage; all = both pooled, as the German paper's Figure 8",
    "n_prompts": "prompts answered",
    "rejected": "answers the primary rule rejected: our strict parser (missing, extra or unknown adjectives or "
                "writers), or the paper's with options.parser: paper",
    "rejection_rate": "rejected / n_prompts",
    "rejected_paper_rule": "answers the German paper's released script would discard (PROCEDURES.md §1.4: exactly "
                           "10 lines, each 'adjective: writer' as it reads them), comparable with its Figure 8",
    "rejection_rate_paper_rule": "rejected_paper_rule / n_prompts",
    "mean_bias_paper_rule": "mean of the released script's per-answer bias over the answers it keeps (its "
                            "final.csv: 0 when a writer got no adjective, list words not shown count)",
}


def rejection_table(scored: pd.DataFrame, by: Sequence[str] = ("model", "setting"),
                    paper_rule: str | None = "accepted_paper_rule") -> pd.DataFrame:
    """Rejected answers per group, by our rule (`accepted`) and, when `scored` has the column, by the paper's
    rule, so the rates can be set beside its Figure 8; with a `bias_paper_rule` column also the mean of the
    paper rule's own bias (nan when it keeps no answer)."""
    rows = []
    has_paper = paper_rule is not None and paper_rule in scored.columns
    has_bias = has_paper and "bias_paper_rule" in scored.columns
    for key, g in scored.groupby(list(by), sort=True, dropna=False):
        n = len(g)
        rejected = int((~g.accepted.astype(bool)).sum())
        row = {**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)), "n_prompts": n,
               "rejected": rejected, "rejection_rate": rejected / n if n else math.nan}
        if has_paper:
            paper = int((~g[paper_rule].astype(bool)).sum())
            row |= {"rejected_paper_rule": paper, "rejection_rate_paper_rule": paper / n if n else math.nan}
        if has_bias:
            kept = g.bias_paper_rule.dropna().astype(float)
            row["mean_bias_paper_rule"] = float(kept.mean()) if len(kept) else math.nan
        rows.append(row)
    cols = [*by, "n_prompts", "rejected", "rejection_rate"] + (
        ["rejected_paper_rule", "rejection_rate_paper_rule"] if has_paper else []) + (
        ["mean_bias_paper_rule"] if has_bias else [])
    return pd.DataFrame(rows, columns=cols)


@dataclass(frozen=True)
class MarkedWordsInput:
    """Profiles of one setting × task × model × dialect: those written for the dialect writer and for the
    standard writer, and the prior texts (the other tasks' profiles of both writers in the same setting,
    German paper §6.1). `setting`: naming or usage (the paper runs the analysis per setting; profiles of a
    named dialect and of a dialect text are never pooled), "" when the run has no setting."""

    task: str
    model: str
    dialect: str
    dialect_texts: Sequence[str]
    standard_texts: Sequence[str]
    prior_texts: Sequence[str]
    setting: str = ""


def marked_words_inputs(profiles: pd.DataFrame) -> list[MarkedWordsInput]:
    """Group generated profiles for `marked_words_table` the way the German paper does (§6.1): one group per
    setting × task × model × dialect, the dialect writers' profiles against the standard writers', with the
    prior from the same model's profiles in every *other* task of the same setting (both writers, every
    dialect). The naming and usage settings are never pooled, in the groups or in the prior.

    `profiles`: columns `task`, `model`, `dialect`, `writer` ('dialect' or 'standard') and `text`, and
    optionally `setting`. A group without a profile on either side is left out.
    """
    missing = {"task", "model", "dialect", "writer", "text"} - set(profiles.columns)
    if missing:
        raise ValueError(f"profiles lack the column(s) {sorted(missing)}")
    profiles = profiles.assign(setting=profiles["setting"].fillna("").astype(str)
                               if "setting" in profiles.columns else "")
    out = []
    for (setting, task, model, dialect), g in profiles.groupby(["setting", "task", "model", "dialect"], sort=True):
        dialect_texts = g.loc[g.writer == "dialect", "text"].astype(str).tolist()
        standard_texts = g.loc[g.writer == "standard", "text"].astype(str).tolist()
        if not dialect_texts or not standard_texts:
            continue
        prior = profiles.loc[(profiles.setting == setting) & (profiles.model == model) & (profiles.task != task),
                             "text"].astype(str).tolist()
        out.append(MarkedWordsInput(task=str(task), model=str(model), dialect=str(dialect), setting=str(setting),
                                    dialect_texts=dialect_texts, standard_texts=standard_texts, prior_texts=prior))
    return out


MARKED_WORDS_LEGEND = {
    "setting": "naming or usage: the profiles of each setting are compared on their own",
    "task": "the decision scenario whose profiles were compared",
    "model": "the model that wrote the profiles",
    "dialect": "the dialect of the dialect writer",
    "side": "dialect: the word marks the dialect writers' profiles; standard: the standard writers'",
    "rank": "rank on its side (1 = most distinctive)",
    "word": "the word (lowercased)",
    "z": "z-score of the weighted log-odds ratio with an informative Dirichlet prior (Monroe et al. 2008); > 0 "
         "dialect, < 0 standard",
    "count_dialect, count_standard": "occurrences in the dialect / standard writers' profiles",
    "prior": "occurrences in the prior texts (the other tasks' profiles), the Dirichlet prior's α",
    "significant": "|z| > 1.96",
}


def marked_words_table(groups: Iterable[MarkedWordsInput], *, top: int = 10, min_count: int = 1) -> pd.DataFrame:
    """The `top` marked words per side for each setting × task × model × dialect
    (`dialectbias.metrics.marked_words`)."""
    rows = []
    for g in groups:
        for w in marked_words(g.dialect_texts, g.standard_texts, g.prior_texts, top=top, min_count=min_count):
            rows.append({"setting": g.setting, "task": g.task, "model": g.model, "dialect": g.dialect,
                         "side": "dialect" if w.side == "a" else "standard", "rank": w.rank, "word": w.word,
                         "z": w.z, "count_dialect": w.count_a, "count_standard": w.count_b, "prior": w.prior,
                         "significant": w.significant})
    return pd.DataFrame(rows, columns=["setting", "task", "model", "dialect", "side", "rank", "word", "z",
                                       "count_dialect", "count_standard", "prior", "significant"])


def marked_words_summary(table: pd.DataFrame, per_side: int = 5) -> pd.DataFrame:
    """One row per setting × task × model × dialect with its top significant words on each side (a compact
    view)."""
    rows = []
    for key, g in table.groupby(["setting", "task", "model", "dialect"], sort=True):
        def top(side: str, g: pd.DataFrame = g) -> str:
            s = g[(g.side == side) & g.significant.astype(bool)].sort_values("rank").head(per_side)
            return ", ".join(f"{w} ({z:+.1f})" for w, z in zip(s.word, s.z, strict=True))
        rows.append({"setting": key[0], "task": key[1], "model": key[2], "dialect": key[3],
                     "dialect_words": top("dialect"), "standard_words": top("standard")})
    return pd.DataFrame(rows, columns=["setting", "task", "model", "dialect", "dialect_words", "standard_words"])


MARKED_SUMMARY_LEGEND = {
    "setting": MARKED_WORDS_LEGEND["setting"],
    "task": MARKED_WORDS_LEGEND["task"], "model": MARKED_WORDS_LEGEND["model"],
    "dialect": MARKED_WORDS_LEGEND["dialect"],
    "dialect_words": "significant words (|z| > 1.96) marking the dialect writers' profiles, with z",
    "standard_words": "significant words marking the standard writers' profiles, with z",
}


def marked_words_sections(groups: Iterable[MarkedWordsInput], out_dir: Path, *, prefix: str, top: int = 10,
                          min_count: int = 1) -> list[Section]:
    """The report section of German paper §6.1 / App. E: `<prefix>_marked_words.csv` (every top word with
    its z and counts) and a compact table of the significant words per task × model × dialect."""
    table = marked_words_table(groups, top=top, min_count=min_count)
    table.to_csv(out_dir / f"{prefix}_marked_words.csv", index=False)
    summary = marked_words_summary(table)
    return [Section(
        heading="Marked words in the generated profiles (German paper §6.1)", table=summary,
        legend=MARKED_SUMMARY_LEGEND, empty="none: no profiles to compare yet",
        text=f"Per setting × task × model × dialect: the words of the profiles written for the dialect writer "
             f"against those for the standard writer, by the weighted log-odds ratio with an informative Dirichlet "
             f"prior (Monroe et al. 2008; prior: the other tasks' profiles of both writers in the same setting). "
             f"The top {top} words per side with z and counts are in {prefix}_marked_words.csv.")]


__all__ = ["FAMILY_LEGEND", "MARKED_SUMMARY_LEGEND", "MARKED_WORDS_LEGEND", "REJECTION_LEGEND", "STAT_COLUMNS",
           "STAT_LEGEND", "MarkedWordsInput", "comparison_legend", "comparison_table", "family_table",
           "marked_words_inputs", "marked_words_sections", "marked_words_summary", "marked_words_table",
           "rejection_table", "stats_table"]
