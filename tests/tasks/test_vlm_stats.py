"""BanglaVerse statistics with hand-computed values (issue 12.5): accuracy, Wald CI, Table 3 deltas, the
paired t-test, f(d), judge correlations, violations."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest
from scipy import stats

from dialectbias.tasks.vlm._stats import (
    accuracy_table,
    deltas,
    domain_difficulty,
    judge_correlations,
    mean_table,
    paired_standard_vs_dialects,
    violation_table,
    with_wald,
)


def _row(model: str, variant: str, domain: str, correct: bool, status: str = "ok", strategy: str = "zero_shot"
         ) -> dict[str, Any]:
    return {"model": model, "variant": variant, "strategy": strategy, "domain": domain, "correct": correct,
            "status": status}


def test_accuracy_table_per_domain_and_all_in_percent_unrounded() -> None:
    rows = [_row("m", "standard", "food", c) for c in (True, True, False)] + \
           [_row("m", "standard", "sports", c) for c in (True, False, False)] + \
           [_row("m", "standard", "sports", False, status="failed")]  # failed: not in n
    table = accuracy_table(rows)
    assert list(table.columns) == ["model", "variant", "strategy", "domain", "n", "accuracy"]
    got = {r.domain: (r.n, r.accuracy) for r in table.itertuples()}
    assert got["food"] == (3, pytest.approx(200 / 3))
    assert got["sports"] == (3, pytest.approx(100 / 3))
    assert got["all"] == (6, pytest.approx(50.0))
    assert table.iloc[-1]["domain"] == "all"  # the all row after the domains
    ci = with_wald(table)
    assert ci.loc[ci.domain == "all", ["ci_low", "ci_high"]].iloc[0].tolist() == pytest.approx(
        [50 - 1.96 * math.sqrt(0.25 / 6) * 100, 50 + 1.96 * math.sqrt(0.25 / 6) * 100])


def test_deltas_vs_standard_and_dialect_mean() -> None:
    table = pd.DataFrame({"model": ["m"] * 4, "strategy": ["cot"] * 4,
                          "variant": ["standard", "sylhet", "chittagong", "english"],
                          "accuracy": [60.0, 50.0, 40.0, 70.0]})
    out = deltas(table, "accuracy").set_index("variant")
    assert out.loc["dialect_mean", "accuracy"] == 45.0
    assert out["delta"].to_dict() == {"standard": 0.0, "sylhet": -10.0, "chittagong": -20.0, "english": 10.0,
                                      "dialect_mean": -15.0}


def test_paired_test_over_model_domain_conditions_matches_scipy() -> None:
    cells = []  # standard vs the mean of sylhet and rangpur, per (model, domain)
    values = {("a", "food"): (80, 70, 60), ("a", "sports"): (50, 45, 40), ("b", "food"): (60, 62, 50),
              ("b", "sports"): (30, 20, 30)}
    for (model, domain), (std, syl, ran) in values.items():
        for variant, v in (("standard", std), ("sylhet", syl), ("rangpur", ran), ("english", 99)):
            cells.append({"model": model, "variant": variant, "strategy": "zero_shot", "domain": domain, "acc": v})
    cells.append({"model": "a", "variant": "standard", "strategy": "zero_shot", "domain": "all", "acc": 1})
    out = paired_standard_vs_dialects(pd.DataFrame(cells), "acc").iloc[0]
    std = [80, 50, 60, 30]
    dia = [65, 42.5, 56, 25]
    expected = stats.ttest_rel(std, dia)
    assert out["conditions"] == 4
    assert out["mean_diff"] == pytest.approx(sum(s - d for s, d in zip(std, dia, strict=True)) / 4)
    assert (out["t"], out["p"]) == pytest.approx((expected.statistic, expected.pvalue))
    few = paired_standard_vs_dialects(pd.DataFrame(cells), "acc", min_conditions=5).iloc[0]
    assert math.isnan(few["t"]) and few["conditions"] == 4


def test_domain_difficulty_fd_and_rank() -> None:
    vqa = pd.DataFrame({"zero_shot": [60.0, 40.0], "cot": [70.0, 45.0]}, index=["food", "politics"])
    caption = pd.Series({"food": 0.5, "politics": 0.3})
    out = domain_difficulty(vqa, caption)
    # food: (100 − 70) + (100 − 50) = 80; politics: (100 − 45) + (100 − 30) = 125
    assert out[["rank", "domain", "f_d"]].values.tolist() == [[1, "food", 80.0], [2, "politics", 125.0]]
    assert not out["partial"].any()
    partial = domain_difficulty(vqa, None)
    assert partial["f_d"].tolist() == [30.0, 55.0] and partial["partial"].all()


def test_judge_correlations_per_variant_match_scipy() -> None:
    a = [0.1, 0.5, 0.9, 0.4, 0.7]
    b = [0.2, 0.4, 0.8, 0.5, 0.9]
    rows = [{"variant": "standard" if i < 3 else "hindi", "judge:x": x, "judge:y": y} for i, (x, y) in
            enumerate(zip(a, b, strict=True))]
    rows.append({"variant": "hindi", "judge:x": 0.3, "judge:y": None})  # judged by one only: left out
    out = judge_correlations(rows, ["x", "y"]).set_index("variant")
    assert out.loc["all", "n"] == 5
    assert out.loc["all", "pearson"] == pytest.approx(stats.pearsonr(a, b).statistic)
    assert out.loc["all", "spearman"] == pytest.approx(stats.spearmanr(a, b).statistic)
    assert out.loc["standard", "pearson"] == pytest.approx(stats.pearsonr(a[:3], b[:3]).statistic)
    assert out.loc["hindi", "n"] == 2


def test_violation_table_counts_checked_answers() -> None:
    rows = [{"model": "m", "variant": "hindi", "status": "ok", "violation": v} for v in (True, False, None)]
    rows.append({"model": "m", "variant": "hindi", "status": "failed", "violation": None})
    out = violation_table(rows).iloc[0]
    assert (out["answers"], out["checked"], out["violations"], out["rate"]) == (3, 2, 1, 0.5)


def test_mean_table_counts_each_column() -> None:
    rows = [{"model": "m", "variant": "standard", "strategy": "zero_shot", "domain": d, "status": "ok", "s": s}
            for d, s in (("food", 0.2), ("food", None), ("sports", 0.6))]
    out = mean_table(rows, ["s"]).set_index("domain")
    assert out.loc["food", ["n", "s", "s_n"]].tolist() == [2, 0.2, 1]
    assert out.loc["all", ["n", "s", "s_n"]].tolist() == [3, pytest.approx(0.4), 2]
