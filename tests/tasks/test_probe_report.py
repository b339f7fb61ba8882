"""Shared probe tables (tasks/probes/_report.py), by hand and scipy (the paper's rule: test_association_strict)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dialectbias.providers import ModelConfig
from dialectbias.tasks.probes._report import (
    MarkedWordsInput,
    comparison_table,
    family_table,
    marked_words_inputs,
    marked_words_sections,
    marked_words_table,
    rejection_table,
    stats_table,
)


def frame(rows: list[tuple[str, str, str, float | None]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "setting": s, "trait": "rural", "dialect": "bavarian", "bias": b,
                          "accepted": b is not None, "accepted_paper_rule": b is not None and b != 0.2}
                         for m, s, _, b in rows]).assign(bias=lambda d: d.bias.astype(float))


SCORED = frame([("m", "naming", "", v) for v in (1.0, 0.6, 0.2, 1.0, None)]
               + [("m", "usage", "", v) for v in (0.2, -0.2, 0.0, 0.6)])


def test_stats_table_by_hand() -> None:
    t = stats_table(SCORED, ["model", "setting"], n_resamples=500, seed=0).set_index("setting")
    naming = t.loc["naming"]
    assert (naming.n_prompts, naming.n_accepted) == (5, 4) and naming.rejection_rate == pytest.approx(0.2)
    assert naming.bias == pytest.approx(0.7)
    assert naming.p == pytest.approx(stats.ttest_1samp([1.0, 0.6, 0.2, 1.0], 0).pvalue)
    assert not naming.significant  # p ≈ 0.02 > 0.001
    assert naming.cohens_d == pytest.approx(0.7 / np.std([1.0, 0.6, 0.2, 1.0], ddof=1))


def test_comparison_table_matches_welch_and_skips_one_sided_groups() -> None:
    t = comparison_table(SCORED, ["model"], "setting", "naming", "usage", n_resamples=500, seed=0)
    row = t.iloc[0]
    ref = stats.ttest_ind([1.0, 0.6, 0.2, 1.0], [0.2, -0.2, 0.0, 0.6], equal_var=False)
    assert row.t == pytest.approx(ref.statistic) and row.p == pytest.approx(ref.pvalue)
    assert row["diff"] == pytest.approx(0.7 - 0.15) and (row.n_naming, row.n_usage) == (4, 4)
    only_naming = SCORED[SCORED.setting == "naming"]
    assert comparison_table(only_naming, ["model"], "setting", "naming", "usage", n_resamples=100, seed=0).empty


def test_family_table_picks_largest_and_smallest() -> None:
    scored = pd.concat([frame([(m, "usage", "", v) for v in vals]) for m, vals in
                        (("q72", (1.0, 0.8, 0.6)), ("q7", (0.2, 0.0, 0.4)), ("q14", (0.5, 0.5, 0.4)),
                         ("solo", (0.1, 0.2, 0.3)))], ignore_index=True)
    models = [ModelConfig(id="q72", provider="openai", model="x", family="qwen", params_b=72),
              ModelConfig(id="q7", provider="openai", model="x", family="qwen", params_b=7),
              ModelConfig(id="q14", provider="openai", model="x", family="qwen", params_b=14),
              ModelConfig(id="solo", provider="openai", model="x", family="other", params_b=3)]
    t = family_table(scored, models, ["setting", "trait"], n_resamples=200, seed=0)
    assert len(t) == 1
    row = t.iloc[0]
    assert (row.family, row.larger, row.smaller, row.params_larger, row.params_smaller) == ("qwen", "q72", "q7", 72, 7)
    assert row.p == pytest.approx(stats.ttest_ind([1.0, 0.8, 0.6], [0.2, 0.0, 0.4], equal_var=False).pvalue)
    assert family_table(scored, models[3:], ["setting"], n_resamples=100, seed=0).empty


def test_rejection_table_both_rules() -> None:
    t = rejection_table(SCORED).set_index("setting")
    assert t.loc["naming", "rejected"] == 1 and t.loc["naming", "rejection_rate"] == pytest.approx(0.2)
    # the paper rule here also rejects the 0.2 answers: naming 2 of 5, usage 1 of 4
    assert t.loc["naming", "rejected_paper_rule"] == 2 and t.loc["usage", "rejection_rate_paper_rule"] == 0.25
    assert "rejected_paper_rule" not in rejection_table(SCORED.drop(columns="accepted_paper_rule")).columns


def test_marked_words_table_and_section(tmp_path: Path) -> None:
    groups = [MarkedWordsInput(task="rural-1", model="m", dialect="bavarian",
                               dialect_texts=["farmer farmer fields village"] * 5,
                               standard_texts=["office city office manager"] * 5,
                               prior_texts=["farmer office city village manager fields"] * 3)]
    t = marked_words_table(groups, top=2)
    top_dialect = t[t.side == "dialect"].sort_values("rank").word.tolist()
    assert top_dialect[0] == "farmer" and t[t.side == "standard"].sort_values("rank").word.iloc[0] == "office"
    assert (t.z[t.side == "dialect"] > 0).all() and (t.z[t.side == "standard"] < 0).all()
    sections = marked_words_sections(groups, tmp_path, prefix="decision", top=2)
    assert (tmp_path / "decision_marked_words.csv").is_file()
    summary = sections[0].table
    assert summary is not None and "farmer" in summary.dialect_words.iloc[0]
    assert sections[0].unexplained_columns() == []


def test_marked_words_inputs_take_the_prior_from_the_other_tasks() -> None:
    profiles = pd.DataFrame([
        {"task": "rural-1", "model": "m", "dialect": "bar", "writer": "dialect", "text": "a farmer"},
        {"task": "rural-1", "model": "m", "dialect": "bar", "writer": "standard", "text": "a banker"},
        {"task": "rural-2", "model": "m", "dialect": "bar", "writer": "dialect", "text": "fields"},
        {"task": "rural-2", "model": "m", "dialect": "bar", "writer": "standard", "text": "towers"},
        {"task": "rural-2", "model": "other", "dialect": "bar", "writer": "dialect", "text": "ignored"},
        {"task": "rural-3", "model": "m", "dialect": "als", "writer": "dialect", "text": "one side only"},
    ])
    groups = {(g.task, g.model, g.dialect): g for g in marked_words_inputs(profiles)}
    assert set(groups) == {("rural-1", "m", "bar"), ("rural-2", "m", "bar")}  # rural-3 has no standard side
    g = groups[("rural-1", "m", "bar")]
    assert (g.dialect_texts, g.standard_texts) == (["a farmer"], ["a banker"])
    assert sorted(g.prior_texts) == ["fields", "one side only", "towers"]  # same model, other tasks
    with pytest.raises(ValueError, match="writer"):
        marked_words_inputs(profiles.drop(columns="writer"))


def test_marked_words_inputs_keep_the_settings_apart() -> None:
    profiles = pd.DataFrame([
        {"setting": s, "task": t, "model": "m", "dialect": "bar", "writer": w, "text": f"{s} {t} {w}"}
        for s in ("naming", "usage") for t in ("rural-1", "rural-2") for w in ("dialect", "standard")])
    groups = {(g.setting, g.task): g for g in marked_words_inputs(profiles)}
    assert set(groups) == {(s, t) for s in ("naming", "usage") for t in ("rural-1", "rural-2")}
    g = groups[("usage", "rural-1")]
    assert (g.dialect_texts, g.standard_texts) == (["usage rural-1 dialect"], ["usage rural-1 standard"])
    assert sorted(g.prior_texts) == ["usage rural-2 dialect", "usage rural-2 standard"]
    table = marked_words_table(groups.values(), top=1)
    assert set(table.setting) == {"naming", "usage"}
