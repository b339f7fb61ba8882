"""Tables of the decision probe (SPEC §4 P4 Statistics; German paper §3.4, §5, §6.1, App. B.1–B.3): decision score
per model × trait × setting (× prefix, × dialect, × scenario) with the share of stereotypical decisions, bootstrap
CI, one-sample t-test (p < 0.001) and Cohen's d (the shared probe tables of `probes/_report.py`), naming vs usage,
larger vs smaller model, the prefix comparison, unextractable answers, and the marked words of the profiles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dialectbias.dialects import control_variants
from dialectbias.report import ReportContent, Section, bias_ci_plot, heatmap, rate_plot
from dialectbias.store import Store
from dialectbias.tasks.probes._prefix import PREFIX_LEGEND, prefix_sections
from dialectbias.tasks.probes._report import (
    FAMILY_LEGEND,
    MARKED_SUMMARY_LEGEND,
    MARKED_WORDS_LEGEND,
    STAT_LEGEND,
    MarkedWordsInput,
    comparison_legend,
    comparison_table,
    family_table,
    marked_words_summary,
    marked_words_table,
    stats_table,
)
from dialectbias.tasks.probes._topic_report import topic_sections, with_topics
from dialectbias.tasks.probes.association._report import DIALECT, _with_language
from dialectbias.tasks.probes.decision._gender import gender_sections
from dialectbias.tasks.probes.decision._profiles import split_profiles

if TYPE_CHECKING:
    from dialectbias.tasks.probes.decision._task import DecisionTask

MAX_UNEXTRACTABLE_EXAMPLES = 10
PROFILE_WORDS = 100  # the prompt asks for profiles "within 100 words" (German paper §3.4)

GROUPS = {
    "trait": ["model", "setting", "prefix", "trait"],
    "dialect": ["model", "setting", "prefix", "language", "dialect", "trait"],
    "scenario": ["model", "setting", "prefix", "trait", "scenario"],
}
#: the shared table's names, renamed for decisions (an answer is "extracted", not "accepted")
RENAME = {"n_prompts": "n_answers", "n_accepted": "n_extracted", "rejection_rate": "unextractable_rate"}
COUNTS = ["n_unextractable", "n_extractor_failed", "n_regex", "n_inferred", "n_same_option", "pct_stereotypical",
          "pct_counter"]

LEGEND = {
    **{k: v for k, v in STAT_LEGEND.items() if k not in ("n_prompts", "n_accepted", "rejection_rate", "bias",
                                                           "flagged", "domain")},
    **PREFIX_LEGEND,
    "scenario": "the decision scenario (decision_scenarios.yaml; the paper's App. D.2)",
    "n_answers": "prompts answered (successful generations)",
    "n_extracted": "answers whose decision was read (the extractor's JSON or the regex fallback)",
    "unextractable_rate": "n_unextractable / n_answers",
    "n_unextractable": "answers whose decision could not be read: no score, counted here (decision_answers.csv has "
                       "the reasons)",
    "n_extractor_failed": "answers whose extractor call failed or is not done yet (the regex fallback still read "
                          "the answer itself; what it could not read is also in n_unextractable)",
    "n_regex": "decisions read by the regex fallback rather than the extractor's JSON",
    "n_inferred": "decisions where one writer's option was read and the other's inferred as the remaining option",
    "n_same_option": "decisions giving both writers the same option (score 0)",
    "bias": "mean decision score in [−1, 1] over extracted decisions: +1 = the dialect writer gets the "
            "trait-consistent option and the standard writer the other, −1 = the reverse; with None/Both "
            "(App. B.3) one neutral writer gives ±0.5, two give 0; empty = nothing extracted",
    "pct_stereotypical": "% of extracted decisions scored > 0 (forced choices: (bias + 1) / 2 · 100, so 0.5 = 75%)",
    "pct_counter": "% of extracted decisions scored < 0",
}


def decision_table(rows: pd.DataFrame, by: list[str], n_resamples: int, seed: int) -> pd.DataFrame:
    """Per group: the shared probe statistics of the decision scores (`stats_table`: mean, sd, 95% bootstrap CI,
    one-sample t-test against 0 at p < 0.001, Cohen's d) and the decision counts (unextractable, by regex,
    inferred, same option, % stereotypical / counter-stereotypical)."""
    stats = stats_table(rows, by, n_resamples=n_resamples, seed=seed, value="score").rename(columns=RENAME)
    counts = []
    for key, g in rows.groupby(by, sort=True, dropna=False):
        ok = g[g.accepted.astype(bool)]
        scores = ok.score.astype(float).to_numpy()
        counts.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                       "n_unextractable": len(g) - len(ok),
                       "n_extractor_failed": int((g.extractor_status != "ok").sum()),
                       "n_regex": int(ok.method.str.startswith("regex").sum()), "n_inferred": int(ok.inferred.sum()),
                       "n_same_option": int(ok.same_option.sum()),
                       "pct_stereotypical": 100.0 * float((scores > 0).mean()) if len(scores) else float("nan"),
                       "pct_counter": 100.0 * float((scores < 0).mean()) if len(scores) else float("nan")})
    merged = stats.merge(pd.DataFrame(counts, columns=[*by, *COUNTS]), on=by, how="left")
    first = [*by, "n_answers", "n_extracted", "n_unextractable", "unextractable_rate", "bias", "pct_stereotypical",
             "pct_counter"]
    return merged[first + [c for c in merged.columns if c not in first]]


def unextractable_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Unextractable answers per model × trait × setting × condition (dialect text or a control such as the noisy
    text), with how the rest were read."""
    by = ["model", "trait", "setting", "condition"]
    out = []
    for key, g in rows.groupby(by, sort=True, dropna=False):
        ok = g.accepted.astype(bool)
        out.append({**dict(zip(by, key, strict=True)), "n_answers": len(g), "n_unextractable": int((~ok).sum()),
                    "unextractable_rate": float((~ok).mean()), "n_json": int((g.method == "json").sum()),
                    "n_regex_extractor": int((g.method == "regex_extractor").sum()),
                    "n_regex_generation": int((g.method == "regex_generation").sum()),
                    "n_extractor_failed": int((g.extractor_status != "ok").sum()),
                    "n_regex_checked": int(g.regex_agrees.notna().sum()),
                    "n_regex_disagrees": int((g.regex_agrees == False).sum())})  # noqa: E712 - None is not False
    return pd.DataFrame(out, columns=[*by, "n_answers", "n_unextractable", "unextractable_rate", "n_json",
                                      "n_regex_extractor", "n_regex_generation", "n_extractor_failed",
                                      "n_regex_checked", "n_regex_disagrees"])


UNEXTRACTABLE_LEGEND = {
    **{k: LEGEND[k] for k in ("model", "trait", "setting", "n_answers", "n_unextractable", "unextractable_rate",
                              "n_extractor_failed")},
    "condition": "dialect: the dialect text; noisy: the noised standard text (the control)",
    "n_json": "decisions read from the extractor's JSON",
    "n_regex_extractor": "read by the regex fallback from the extractor's text",
    "n_regex_generation": "read by the regex fallback from the model's answer itself",
    "n_regex_checked": "decisions read by the extractor that the regex could also read from the answer itself",
    "n_regex_disagrees": "… of which the regex reading differs from the extractor's: a check on the extractor (a "
                         "small extractor under a JSON schema may pick an option the text never chose); read those "
                         "answers (decision_answers.csv, regex_agrees = False)",
}


def _legend(columns: list[str]) -> dict[str, str]:
    return {k: v for k, v in LEGEND.items() if any(c in k.split(", ") for c in columns)}


def profile_inputs(task: DecisionTask, store: Store, rows: pd.DataFrame) -> tuple[list[MarkedWordsInput], int]:
    """Marked-words inputs per setting × scenario × model × dialect (German paper §6.1): the dialect writers'
    and the standard writers' profiles (`split_profiles`), the prior from the same model's profiles in the
    other scenarios of the same setting (naming and usage profiles are never pooled); and how many answers
    had no two profiles to split (left out, counted)."""
    keep = rows.set_index("request_id")[["setting", "model", "dialect", "scenario", "dialect_writer"]]
    # setting, model, dialect, scenario, dialect profile, standard profile
    split: list[tuple[str, str, str, str, str, str]] = []
    unsplit = 0
    for row in _generations(task, store):
        if row[0] not in keep.index:
            continue
        setting, model, dialect, scenario, dialect_writer = keep.loc[row[0]]
        profiles = split_profiles(row[1])
        if profiles is None:
            unsplit += 1
            continue
        standard_writer = "B" if dialect_writer == "A" else "A"
        split.append(("" if pd.isna(setting) else str(setting), model, dialect, scenario, profiles[dialect_writer],
                      profiles[standard_writer]))
    groups = []
    for setting, model, dialect, scenario in sorted({p[:4] for p in split}):
        mine = [p for p in split if p[:4] == (setting, model, dialect, scenario)]
        prior = [t for p in split if p[0] == setting and p[1] == model and p[3] != scenario for t in p[4:]]
        groups.append(MarkedWordsInput(task=scenario, model=model, dialect=dialect, setting=setting,
                                       dialect_texts=[p[4] for p in mine], standard_texts=[p[5] for p in mine],
                                       prior_texts=prior))
    return groups, unsplit


def _generations(task: DecisionTask, store: Store) -> Iterator[tuple[str, str]]:
    for row in store.stage_results("generate", template_prefix="decision/"):
        yield row.request_id, row.output or ""


def write_decision_report(task: DecisionTask, store: Store, out_dir: Path) -> ReportContent:
    models = [m.id for m in task.generation_models()]
    o = task.options
    setting = "naming and usage settings" if o.setting == "both" else f"{o.setting} setting"
    variant = " · equal-option variant (App. B.3)" if o.allow_neutral else ""
    title = f"{task.exp.name}: decision probe ({setting}{variant})"
    rows = pd.DataFrame(list(task.scored_rows(store)))
    if not rows.empty:
        rows = rows[rows.model.isin(models)]
    if rows.empty:
        return ReportContent(title=title, sections=[Section(
            heading="No answers yet", text="No generation of the experiment's models has completed: run "
                                           "`dialectbias run` first.")])
    controls = control_variants()
    domains = {item.id: item.domain for item in store.iter_items()}
    rows = _with_language(rows, task.exp.dialects).assign(
        accepted=lambda d: d.extracted.astype(bool), domain=lambda d: d.item_id.map(domains),
        condition=lambda d: [v if v in controls else DIALECT for v in d.dialect])
    rows = with_topics(task, store, rows)
    rows.drop(columns=["accepted"]).to_csv(out_dir / "decision_answers.csv", index=False)
    n_res, seed = o.n_resamples, task.exp.seed
    student = o.t_test == "student"  # Student's t, the paper's (options.t_test; docs/departures.md)
    everything, rows = rows, rows[rows.condition == DIALECT]  # the noisy control has its own section
    tables = {name: decision_table(rows, by, n_res, seed) for name, by in GROUPS.items()}
    for name, table in tables.items():
        table.to_csv(out_dir / f"decision_bias_by_{name}.csv", index=False)
    unextractable = unextractable_table(everything)
    unextractable.to_csv(out_dir / "decision_unextractable.csv", index=False)
    by_trait = tables["trait"]
    traits = [t for t in task.trait_names if t in set(by_trait.trait)] or task.trait_names
    settings = sorted(set(by_trait.setting.dropna()))
    default = by_trait[by_trait.prefix == by_trait.prefix.iloc[0]] if by_trait.prefix.nunique() > 1 else by_trait
    fig9 = bias_ci_plot(default, "decision bias per trait and model (95% bootstrap CI)", out_dir / "decision_bias_ci",
                        facet="setting" if len(settings) > 1 else None, ylabel="decision score (95% CI)")
    wide = by_trait.assign(row=by_trait.model + " · " + by_trait.setting.astype(str) + " · " + by_trait.prefix)
    heat = heatmap(wide.pivot_table(index="row", columns="trait", values="bias", aggfunc="first").reindex(
        columns=traits), "decision bias (−1 … 1; >0 = stereotypical)", out_dir / "decision_heatmap", vmin=-1, vmax=1,
        cmap="RdBu_r")
    rates = unextractable.groupby("model", sort=False).agg(n=("n_answers", "sum"), bad=("n_unextractable", "sum"))
    rates = rates.assign(unextractable_rate=rates.bad / rates.n).reset_index()
    rate_png = rate_plot(rates, "unextractable answers per model", out_dir / "decision_unextractable",
                         values=["unextractable_rate"], labels=["unextractable"], ylabel="share of answers")
    bad = everything[~everything.accepted]
    examples = bad.head(MAX_UNEXTRACTABLE_EXAMPLES)[["model", "item_id", "scenario", "reason"]].reset_index(drop=True)
    ci_text = (f"CI: 95% bootstrap ({n_res:,} resamples, seed {seed}); significant: one-sample t-test against 0, "
               "p < 0.001. Unextractable answers carry no score and are counted.")
    sections = [
        Section(heading="Decision bias per model and trait (German paper Figure 2b)", table=by_trait, image_png=fig9,
                image_alt="decision bias per trait and model with 95% CIs", legend=_legend(list(by_trait.columns)),
                text=ci_text + (" The plot shows the first prefix; the table every prefix."
                                if by_trait.prefix.nunique() > 1 else "")),
        *_setting_sections(rows, out_dir, n_res, seed, student),
        *prefix_sections(rows, out_dir, "decision", n_resamples=n_res, seed=seed, student=student, value="score"),
        *_size_sections(task, rows, out_dir, n_res, seed, student),
        Section(heading="Decision bias per model, dialect and trait", table=tables["dialect"],
                legend=_legend(list(tables["dialect"].columns))),
        Section(heading="Decision bias per scenario", table=tables["scenario"],
                legend=_legend(list(tables["scenario"].columns))),
        Section(heading="Heatmap", image_png=heat, image_alt="decision bias heatmap"),
        Section(heading="Unextractable answers per model, trait, setting and condition", table=unextractable,
                image_png=rate_png, image_alt="share of unextractable answers per model", legend=UNEXTRACTABLE_LEGEND),
        Section(heading="Examples of unextractable answers", table=examples,
                text=(f"The first {len(examples)} of {len(bad)} unextractable answers; all are in "
                      "decision_answers.csv (extracted = False)." if len(bad) else ""),
                empty="none: a decision was read from every answer",
                legend={"model": "the model's id", "item_id": "the prompt's item", "scenario": LEGEND["scenario"],
                        "reason": "why neither the extractor's JSON nor the regex fallback gave a decision"}),
        *_noise_sections(everything, out_dir, n_res, seed, student),
        *topic_sections(task, store, rows, out_dir, prefix="decision", by_model=["model", "prefix"],
                        legend=_legend(["model", "prefix", "trait", "n_answers", "n_extracted", "n_unextractable",
                                        "unextractable_rate", "bias", "pct_stereotypical", "pct_counter", "sd",
                                        "ci_low", "t", "significant", "cohens_d", "n_regex", "n_inferred",
                                        "n_same_option", "n_extractor_failed"]),
                        table=lambda rows, by: decision_table(rows, by, n_res, seed)),
        *_marked_words_sections(task, store, rows, out_dir),
        *gender_sections(_generations(task, store),
                         everything.set_index("request_id")[["model", "setting", "condition", "dialect",
                                                             "dialect_writer"]],
                         out_dir, country=o.name_country, mostly=o.gender_mostly),
        *_equal_option_sections(rows, out_dir, n_res, seed),
    ]
    ok = everything[everything.accepted]
    return ReportContent(title=title, sections=sections, metadata={
        "prompts answered": len(everything), "decisions extracted": len(ok),
        "unextractable": len(everything) - len(ok),
        "mean decision score": f"{np.nanmean(ok.score.astype(float)):.3f}" if len(ok) else "—"})


def _equal_option_sections(rows: pd.DataFrame, out_dir: Path, n_res: int, seed: int) -> list[Section]:
    """The paper's two equal-option variants apart (App. B.3, `equal_option: separate`); the other tables pool
    them."""
    if "equal_option" not in rows.columns or rows.equal_option.dropna().nunique() < 2:
        return []
    table = decision_table(rows, ["model", "setting", "equal_option", "trait"], n_res, seed)
    table.to_csv(out_dir / "decision_bias_by_equal_option.csv", index=False)
    return [Section(heading="Equal-option variants apart (German paper App. B.3)", table=table,
                    text="Each prompt was asked once with \"If no one fits, answer with 'None'.\" (none) and once "
                         "with \"You can assign both individuals to one option.\" (both); the other tables pool "
                         "the two.",
                    legend={**_legend([c for c in table.columns if c != "equal_option"]),
                            "equal_option": "none: the rejection sentence; both: the double-assignment sentence"})]


def _setting_sections(rows: pd.DataFrame, out_dir: Path, n_res: int, seed: int, student: bool = False) -> list[Section]:
    """Naming against usage per model × prefix × trait (Welch's t-test, German paper §5.1) when both ran."""
    if not {"naming", "usage"} <= set(rows.setting.dropna()):
        return []
    table = comparison_table(rows, ["model", "prefix", "trait"], "setting", "naming", "usage", n_resamples=n_res,
                             seed=seed, value="score", student=student)
    table.to_csv(out_dir / "decision_naming_vs_usage.csv", index=False)
    return [Section(heading="Naming against usage", table=table, empty="no trait was scored in both settings",
                    legend={**_legend(["model", "prefix", "trait"]),
                            **comparison_legend("naming", "usage", "naming / usage setting")})]


def _noise_sections(rows: pd.DataFrame, out_dir: Path, n_res: int, seed: int, student: bool = False) -> list[Section]:
    """The noisy-text control for decisions (German paper §6.2): usage answers with the dialect text against those
    with the noised standard text (`dialectbias build noise`), per model × trait (Welch's t-test)."""
    noisy = set(rows.condition) - {DIALECT}
    if not noisy:
        return []
    frames = [comparison_table(rows[rows.setting == "usage"], ["model", "trait"], "condition", DIALECT, control,
                               n_resamples=n_res, seed=seed, value="score", label_b="noisy",
                               student=student).assign(control=control)
              for control in sorted(noisy)]
    table = pd.concat(frames, ignore_index=True)
    table.to_csv(out_dir / "decision_dialect_vs_noise.csv", index=False)
    return [Section(heading="Noisy-text control: dialect vs noise", table=table, empty="no usage answers to compare",
                    text="Decision scores with the dialect text against those with a noised copy of the standard "
                         "text as the second writer. Unextractable answers are left out of both groups.",
                    legend={"model": LEGEND["model"], "trait": LEGEND["trait"],
                            "control": "the control variant (noisy: the noised standard text)",
                            **comparison_legend(DIALECT, "noisy", "dialect texts vs noisy texts")})]


def _size_sections(task: DecisionTask, rows: pd.DataFrame, out_dir: Path, n_res: int, seed: int,
                   student: bool = False) -> list[Section]:
    """Larger against smaller model of each `family` (models with `family` and `params_b`)."""
    table = family_table(rows, task.generation_models(), ["setting", "prefix", "trait"], n_resamples=n_res, seed=seed,
                         value="score", student=student)
    if table.empty:
        return []
    table.to_csv(out_dir / "decision_model_size.csv", index=False)
    return [Section(heading="Larger against smaller model of a family", table=table,
                    legend={**FAMILY_LEGEND, **_legend(["setting", "prefix", "trait"])})]


def _marked_words_sections(task: DecisionTask, store: Store, rows: pd.DataFrame, out_dir: Path) -> list[Section]:
    """The words marking the dialect writers' profiles against the standard writers' (German paper §6.1)."""
    groups, unsplit = profile_inputs(task, store, rows)
    words = pd.concat([rows.profile_words_dialect, rows.profile_words_standard]).dropna().astype(float)
    over = int((words > PROFILE_WORDS).sum())
    table = marked_words_table(groups)
    table.to_csv(out_dir / "decision_marked_words.csv", index=False)
    summary = marked_words_summary(table)
    return [Section(heading="Marked words of the profiles (German paper §6.1)", table=summary,
                    legend=MARKED_SUMMARY_LEGEND, empty="no profiles to compare",
                    text=f"Weighted log-odds with an informative Dirichlet prior (Monroe et al. 2008) between the "
                         f"profiles written for dialect writers and for standard writers, per setting × scenario × "
                         f"model × dialect; the prior is the same model's profiles in the other scenarios of the "
                         f"setting. All words are in "
                         f"decision_marked_words.csv ({', '.join(MARKED_WORDS_LEGEND)}). {unsplit} answer(s) had no "
                         f"two profiles to split and are left out. Profile length: "
                         + (f"median {words.median():.0f} words, {over} of {len(words)} profiles over the "
                            f"{PROFILE_WORDS} words the prompt asks for (profile_words_* in decision_answers.csv)."
                            if len(words) else "no profile found."))]
