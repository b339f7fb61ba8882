"""Tables and plots of the association probe (German paper §3.3, §5–6, App. A.7, B–C; SPEC §4 P4).

Bias per model × setting × trait (bootstrap CI, one-sample t-test at p < 0.001, Cohen's d), naming vs
usage (Welch), per dialect and per topic, larger vs smaller model of a family, the noisy-text control
(dialect vs noise, Welch, with the token-length parity), and the rejection rate by our parser and by the
paper's own rule. The formulas are in `dialectbias.metrics`; the tables in `tasks/probes/_report.py`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dialectbias.dialects import control_variants, language_of
from dialectbias.errors import DataError
from dialectbias.report import ReportContent, Section, bias_ci_plot, heatmap, rate_plot
from dialectbias.store import Store
from dialectbias.tasks.probes._prefix import prefix_sections
from dialectbias.tasks.probes._report import (
    FAMILY_LEGEND,
    REJECTION_LEGEND,
    STAT_LEGEND,
    comparison_legend,
    comparison_table,
    family_table,
    rejection_table,
    stats_table,
)
from dialectbias.tasks.probes._topic_report import topic_sections, with_topics
from dialectbias.text import BUILTIN_TOKENIZERS, NOISY, TokenCounter, token_length_parity

if TYPE_CHECKING:
    from dialectbias.tasks.probes.association._task import AssociationTask

GROUPS = {"trait": ["model", "setting", "trait"], "dialect": ["model", "setting", "language", "dialect", "trait"]}
UNKNOWN_LANGUAGE = "—"
MAX_REJECTED_EXAMPLES = 10
DIALECT = "dialect"  # the condition of a row whose dialect writer shows real dialect text

BIAS_LEGEND = {**STAT_LEGEND, "n_accepted": "answers accepted by strict parsing: one 'adjective: writer' line per "
               "adjective", "bias": "mean bias in [−1, 1] over accepted answers: +1 = the dialect writer always "
               "gets the trait pole, 0 = no preference, −1 = the reverse; — = no accepted answer"}

PARITY_LEGEND = {
    "tokenizer": "whitespace: words split at spaces; words: word tokens without punctuation; hf:NAME: the token "
                 "ids of an `hf` model's tokenizer",
    "variant": "standard, a dialect, or noisy (the noised standard text)",
    "n_texts": "texts of that variant",
    "mean_tokens": "mean tokens per text",
    "ratio_to_standard": "Σ tokens / Σ tokens of the standard texts of the same items",
    "ratio_to_dialect": "Σ tokens / Σ tokens of the dialect texts of the same items (German paper App. C.2: "
                        "noise at p = 0.5 was chosen so noisy and dialect texts tokenise to similar lengths)",
}


def bias_table(scored: pd.DataFrame, by: list[str], n_resamples: int, seed: int) -> pd.DataFrame:
    """`stats_table` (mean bias, 95% bootstrap CI, one-sample t-test vs 0 with p < 0.001, Cohen's d; SPEC §4 P4
    Statistics, German paper §5) plus how many accepted answers had a zero denominator (flagged)."""
    table = stats_table(scored, by, n_resamples=n_resamples, seed=seed)
    flagged = [int(g.loc[g.accepted.astype(bool), "flagged"].astype(bool).sum())
               for _, g in scored.groupby(by, sort=True, dropna=False)]
    return table.assign(flagged=flagged) if len(table) else table.assign(flagged=pd.Series(dtype=int))


def _with_language(scored: pd.DataFrame, extra: dict[str, list[str]]) -> pd.DataFrame:
    """Fill `language` where the item named none (usage-setting items need no `language` field)."""
    known = scored.language.where(scored.language.notna() & (scored.language.astype(str) != ""))
    guessed = scored.dialect.map(lambda d: language_of(str(d), extra) or UNKNOWN_LANGUAGE)
    return scored.assign(language=known.fillna(guessed))


def _hf_counters(task: AssociationTask) -> tuple[dict[str, TokenCounter], list[str]]:
    """Token counters of the experiment's local models (`CAPABILITIES.local`: hf, vllm), loaded offline; problems
    become notes."""
    from dialectbias.build import hf_token_counter

    counters: dict[str, TokenCounter] = {}
    notes: list[str] = []
    for m in task.exp.models:
        if not m.CAPABILITIES.local:
            continue
        gguf = getattr(m, "gguf_file", None)
        path = Path(m.model) / gguf if gguf else Path(m.model)
        try:
            counters[f"hf:{m.id}"] = hf_token_counter(path)
        except DataError as exc:
            notes.append(f"{m.id}: {exc}")
    return counters, notes


def _parity(task: AssociationTask, store: Store) -> tuple[pd.DataFrame, list[str]]:
    """Token-length parity over the usage items' source texts (standard, dialects, noisy)."""
    by_source: dict[str, dict[str, str]] = {}
    for item in store.iter_items():
        if item.metadata.get("setting") != "usage":
            continue
        texts = by_source.setdefault(str(item.metadata.get("source_item", item.id)), {})
        texts.update({v: t for v, t in item.variants.items() if isinstance(t, str)})
    counters, notes = _hf_counters(task)
    rows = token_length_parity(list(by_source.values()), {**BUILTIN_TOKENIZERS, **counters})
    return pd.DataFrame(rows, columns=list(PARITY_LEGEND)), notes


def _annotations(table: pd.DataFrame, facet: str, x: str) -> dict[tuple[str, str], str]:
    return {(str(f), str(v)): "*" for f, v, sig in zip(table[facet], table[x], table.significant, strict=True)
            if bool(sig)}


def _write(table: pd.DataFrame, out_dir: Path, name: str) -> pd.DataFrame:
    table.to_csv(out_dir / name, index=False)
    return table


def _noise_sections(task: AssociationTask, store: Store, usage: pd.DataFrame, out_dir: Path, n_res: int,
                    seed: int, student: bool = False) -> list[Section]:
    """Figure 4: dialect usage bias vs the bias against noised standard text, per model × trait (Welch)."""
    controls = usage[usage.condition == NOISY]
    if controls.empty:
        return []
    per = _write(stats_table(usage, ["model", "condition", "trait"], n_resamples=n_res, seed=seed), out_dir,
                 "association_noise_bias.csv")
    vs = _write(comparison_table(usage, ["model", "trait"], "condition", DIALECT, NOISY, n_resamples=n_res,
                                 seed=seed, student=student), out_dir, "association_dialect_vs_noise.csv")
    png = bias_ci_plot(per, "association usage bias: dialect vs noisy text (* = p < 0.05, Welch)",
                       out_dir / "association_dialect_vs_noise", facet="model", series="condition",
                       annotations=_annotations(vs, "model", "trait"))
    parity, notes = _parity(task, store)
    _write(parity, out_dir, "association_token_lengths.csv")
    stronger = int((vs["diff"] > 0).sum())
    return [
        Section(heading="Noisy-text control: dialect vs noise (German paper Figure 4)", table=vs,
                text=f"The usage setting with the standard text against a noised copy of itself (`dialectbias build "
                     f"noise`) next to the standard text against its dialect version. Dialect bias is larger than "
                     f"noise bias in {stronger} of {len(vs)} model × trait cells; significant differences "
                     f"(p < 0.05, Welch) are starred in the plot. If the dialect bias were only a reaction to "
                     f"non-standard text, the two would not differ.",
                legend={"model": "the model's id", "trait": STAT_LEGEND["trait"],
                        **comparison_legend(DIALECT, NOISY, "dialect texts vs noisy texts")}),
        Section(heading="Bias per condition (dialect, noisy)", table=per, image_png=png,
                image_alt="dialect vs noise bias per model and trait",
                legend={**STAT_LEGEND, "condition": "dialect: real dialect text; noisy: the noised standard text"}),
        Section(heading="Token-length parity (German paper Figure 13)", table=parity,
                text="Mean tokens per text for each variant, and the ratios to the standard and to the dialect "
                     "texts of the same items. " + ("Tokenizers not loaded: " + "; ".join(notes) if notes else ""),
                legend=PARITY_LEGEND),
    ]


def _setting_sections(main: pd.DataFrame, out_dir: Path, n_res: int, seed: int, student: bool = False) -> list[Section]:
    """Naming vs usage per model × trait and across models (German paper Figure 2; Welch)."""
    if set(main.setting.dropna()) < {"naming", "usage"}:
        return []
    per_model = comparison_table(main, ["model", "trait"], "setting", "naming", "usage", n_resamples=n_res,
                                 seed=seed, student=student)
    pooled = comparison_table(main, ["trait"], "setting", "naming", "usage", n_resamples=n_res, seed=seed,
                              student=student)
    table = _write(pd.concat([per_model, pooled.assign(model="all models")[per_model.columns]],
                             ignore_index=True), out_dir, "association_naming_vs_usage.csv")
    return [Section(
        heading="Naming vs usage (German paper Figure 2)", table=table,
        text="Per model and trait, and over all models: the naming-setting bias against the usage-setting bias, "
             + ("Student's t-test (options.t_test: student, the paper's \"independent samples t-test\")." if student
                else "Welch's t-test (the paper says \"independent samples t-test\", i.e. Student's; Welch does not "
                     "assume equal variances, and the two settings differ in size and spread; options.t_test: "
                     "student restores the paper's)."),
        legend={"model": "the model's id, or all models pooled", "trait": STAT_LEGEND["trait"],
                **comparison_legend("naming", "usage", "naming setting vs usage setting")})]


def _size_sections(task: AssociationTask, main: pd.DataFrame, out_dir: Path, n_res: int,
                   seed: int, student: bool = False) -> list[Section]:
    sizes = _write(family_table(main, task.generation_models(), ["setting", "trait"], n_resamples=n_res, seed=seed,
                                student=student), out_dir, "association_model_size.csv")
    legend = {**FAMILY_LEGEND, "setting": STAT_LEGEND["setting"], "trait": STAT_LEGEND["trait"]}
    return [Section(heading="Larger vs smaller model of a family", table=sizes, legend=legend,
                    empty="none: give two or more models the same `family` and different `params_b` in the "
                          "experiment file",
                    text="The largest against the smallest model of each family (Welch's t-test, p < 0.05).")]


def _equal_option_sections(main: pd.DataFrame, out_dir: Path, n_res: int, seed: int) -> list[Section]:
    """The paper's two equal-option variants apart (App. B.3, `equal_option: separate`): rejection (none) and
    double assignment (both); the other tables pool them."""
    if "equal_option" not in main.columns or main.equal_option.dropna().nunique() < 2:
        return []
    table = _write(bias_table(main, ["model", "setting", "equal_option", "trait"], n_res, seed), out_dir,
                   "association_bias_by_equal_option.csv")
    return [Section(heading="Equal-option variants apart (German paper App. B.3)", table=table,
                    text="Each prompt was asked once with the rejection sentence (none) and once with the "
                         "double-assignment sentence (both); the other tables pool the two.",
                    legend={**BIAS_LEGEND, "equal_option": "none: 'If no one fits … None'; both: 'If both fit … "
                                                           "Both'"})]


def _rejection_sections(scored: pd.DataFrame, out_dir: Path) -> list[Section]:
    table = rejection_table(scored, ["model", "setting"])
    if scored.setting.nunique() > 1:  # Figure 8 pools the naming and usage answers of each model
        pooled = rejection_table(scored, ["model"]).assign(setting="all")[table.columns]
        table = pd.concat([table, pooled], ignore_index=True)
    _write(table, out_dir, "association_rejections.csv")
    labelled = table.assign(row=table.model + " · " + table.setting.astype(str))
    png = rate_plot(labelled, "association rejection rate (German paper Figure 8)", out_dir / "association_rejections",
                    x="row", values=("rejection_rate", "rejection_rate_paper_rule"),
                    labels=("the primary rule (options.parser)", "the paper's rule (PROCEDURES.md §1.4)"),
                    ylabel="rejected share")
    return [Section(heading="Rejection rate: ours and the paper's rule (German paper Figure 8)", table=table,
                    image_png=png, image_alt="rejection rates per model", legend=REJECTION_LEGEND,
                    text="Our parser tolerates formatting (list markers, bold, blank lines) and rejects wrong "
                         "content; the paper's script needs exactly 10 plain lines, counted without stripping the "
                         "reply (a trailing newline makes 11), and reads any of the trait's 40 list words. Both "
                         "rates are over every prompt answered, the noisy control included; mean_bias_paper_rule "
                         "is the script's own score (0 when a writer got no adjective).")]


def _wide(by_trait: pd.DataFrame, scored: pd.DataFrame, models: Sequence[str], traits: list[str]) -> pd.DataFrame:
    """`association_bias.csv`: one row per model (and setting, when the run has both), one column per trait."""
    settings = sorted(set(by_trait.setting.dropna()))
    index = ["model", "setting"] if len(settings) > 1 else ["model"]
    wide = by_trait.pivot_table(index=index, columns="trait", values="bias", aggfunc="first", dropna=False)
    order = [m for m in models if m in set(by_trait.model)]
    wide = wide.reindex(columns=traits)
    wide = wide.loc[sorted(wide.index, key=lambda k: (order.index(k[0] if isinstance(k, tuple) else k),
                                                       k[1:] if isinstance(k, tuple) else ()))]

    def rejection(key: Any) -> float:
        rows = scored[scored.model == (key[0] if isinstance(key, tuple) else key)]
        if isinstance(key, tuple):
            rows = rows[rows.setting == key[1]]
        return 1 - rows.accepted.mean() if len(rows) else math.nan

    wide.insert(0, "rejection_rate", [rejection(k) for k in wide.index])
    wide["avg"] = wide[traits].mean(axis=1)
    wide = wide.reset_index()
    wide.columns.name = None
    return wide


def _scored_frame(task: AssociationTask, store: Store, models: Sequence[str]) -> pd.DataFrame:
    scored = pd.DataFrame(list(task.scored_rows(store)))
    if scored.empty:
        return scored
    scored = scored[scored.model.isin(models)]
    if scored.empty:
        return scored
    scored = _with_language(scored, task.exp.dialects)
    domains: Mapping[str, Any] = {item.id: item.domain for item in store.iter_items()}
    controls = control_variants()
    scored = scored.assign(domain=scored.item_id.map(domains),
                           condition=[d if d in controls else DIALECT for d in scored.dialect],
                           bias=scored.bias.astype(float))
    return with_topics(task, store, scored)


def write_association_report(task: AssociationTask, store: Store, out_dir: Path) -> ReportContent:
    models = [m.id for m in task.generation_models()]
    o = task.options
    variant = " · equal-option variant (App. B.3: bias_fallback)" if o.allow_neutral else ""
    setting = "naming and usage settings" if o.setting == "both" else f"{o.setting} setting"
    title = f"{task.exp.name}: association probe ({setting}{variant})"
    scored = _scored_frame(task, store, models)
    if scored.empty:
        return ReportContent(title=title, sections=[Section(
            heading="No answers yet", text="No generation of the experiment's models has completed: run "
                                           "`dialectbias run` first.")])
    scored.to_csv(out_dir / "association_answers.csv", index=False)
    n_res, seed = o.n_resamples, task.exp.seed
    student = o.t_test == "student"  # Student's t, the paper's (options.t_test; docs/departures.md)
    main = scored[scored.condition == DIALECT]  # the noisy control has its own section
    by_trait = _write(bias_table(main, GROUPS["trait"], n_res, seed), out_dir, "association_bias_by_trait.csv")
    by_dialect = _write(bias_table(main, GROUPS["dialect"], n_res, seed), out_dir, "association_bias_by_dialect.csv")
    traits = [t for t in task.trait_names if t in set(by_trait.trait)] or task.trait_names
    _write(_wide(by_trait, main, models, traits), out_dir, "association_bias.csv")
    settings = sorted(set(by_trait.setting.dropna()))
    fig2 = bias_ci_plot(by_trait, "association bias per trait and model (95% bootstrap CI)",
                        out_dir / "association_bias_ci", facet="setting" if len(settings) > 1 else None)
    per_dialect = _write(bias_table(main, ["setting", "dialect", "trait"], n_res, seed), out_dir,
                         "association_bias_by_dialect_all_models.csv")
    fig5 = bias_ci_plot(per_dialect, "association bias per dialect, all models (95% bootstrap CI)",
                        out_dir / "association_bias_dialects", series="dialect",
                        facet="setting" if len(settings) > 1 else None)
    heat = by_dialect.assign(row=by_dialect.model + " · " + by_dialect.setting.astype(str) + " · "
                             + by_dialect.language + "/" + by_dialect.dialect)
    png = heatmap(heat.pivot_table(index="row", columns="trait", values="bias", aggfunc="first").reindex(
        columns=traits), "association bias (−1 … 1; >0 = stereotypical)", out_dir / "association_heatmap",
        vmin=-1, vmax=1, cmap="RdBu_r")
    rejected = scored[~scored.accepted.astype(bool)]
    examples = rejected.head(MAX_REJECTED_EXAMPLES)[["model", "item_id", "reject_reason"]].reset_index(drop=True)
    legend = {k: v for k, v in BIAS_LEGEND.items() if k not in ("language", "dialect", "domain")}
    usage = scored[scored.setting == "usage"]
    sections = [
        Section(heading="Bias per model and trait (German paper Figure 2)", table=by_trait, image_png=fig2,
                image_alt="bias per trait and model with 95% CIs",
                text=f"CI: 95% bootstrap ({n_res:,} resamples, seed {seed}); significant: one-sample t-test against 0, "
                     f"p < 0.001. Rejected answers (missing, extra or unknown adjectives or writers) are excluded "
                     f"from the bias and counted." + (" Equal-option variant: 'None'/'Both' answers are left out of "
                     "the counts and each shrinks the score, bias / (N_neutral + 1)." if o.allow_neutral else ""),
                legend=legend),
        *_setting_sections(main, out_dir, n_res, seed, student),
        *prefix_sections(main, out_dir, "association", n_resamples=n_res, seed=seed, student=student),
        Section(heading="Bias per model, dialect and trait", table=by_dialect, legend=BIAS_LEGEND),
        Section(heading="Bias per dialect over all models (German paper Figure 5)", table=per_dialect,
                image_png=fig5, image_alt="bias per dialect and trait", legend=BIAS_LEGEND),
        *topic_sections(task, store, main, out_dir, prefix="association", by_model=["model"], legend=BIAS_LEGEND,
                        table=lambda rows, by: bias_table(rows, by, n_res, seed)),
        *_size_sections(task, main, out_dir, n_res, seed, student),
        *_noise_sections(task, store, usage, out_dir, n_res, seed, student),
        *_rejection_sections(scored, out_dir),
        *_equal_option_sections(main, out_dir, n_res, seed),
        Section(heading="Heatmap", image_png=png, image_alt="bias heatmap"),
        Section(heading="Examples of rejected answers", table=examples,
                text=(f"The first {len(examples)} of {len(rejected)} rejected answers; all are in "
                      "association_answers.csv (accepted = False)." if len(rejected) else ""),
                empty="none: every answer passed strict parsing",
                legend={"model": "the model's id", "item_id": "the prompt's item",
                        "reject_reason": "why strict parsing rejected the answer (the offending lines)"}),
    ]
    accepted = main[main.accepted.astype(bool)]
    return ReportContent(title=title, sections=sections, metadata={
        "prompts answered": len(scored), "accepted": int(scored.accepted.astype(bool).sum()),
        "rejection rate": f"{1 - scored.accepted.astype(bool).mean():.3f}",
        "mean bias": f"{np.nanmean(accepted.bias):.3f}" if len(accepted) else "—",
        **({"noisy-control prompts": int((scored.condition == NOISY).sum())}
           if (scored.condition == NOISY).any() else {})})


__all__ = ["BIAS_LEGEND", "GROUPS", "bias_table", "write_association_report"]
