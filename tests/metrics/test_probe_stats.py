"""Probe statistics against scipy and hand computation; marked words on real German text."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from scipy import stats

from dialectbias.metrics import (
    bias_vs_zero,
    compare_groups,
    marked_words,
    two_sample_bootstrap_ci,
)
from shared_data import GERMAN, shared_path


def test_bias_vs_zero_matches_scipy_and_hand_values() -> None:
    values = [1.0, 0.2, 0.6, 0.8, -0.2, 1.0]
    r = bias_vs_zero(values, n_resamples=2000, seed=1)
    ref = stats.ttest_1samp(values, 0.0)
    assert r.n == 6 and r.mean == pytest.approx(3.4 / 6)
    assert r.t == pytest.approx(ref.statistic) and r.p == pytest.approx(ref.pvalue)
    sd = float(np.std(values, ddof=1))
    assert r.sd == pytest.approx(sd) and r.cohens_d == pytest.approx((3.4 / 6) / sd)
    assert r.significant is bool(ref.pvalue < 0.001)  # p ≈ 0.014: not significant at the paper's 0.001
    assert r.significant is False and r.ci_low < r.mean < r.ci_high


def test_bias_vs_zero_significance_at_0001_and_nan_dropped() -> None:
    values = [0.9, 1.0, 0.8, 1.0, 0.9, 1.0, 0.8, 0.9, float("nan")]
    r = bias_vs_zero(values, n_resamples=500)
    assert r.n == 8 and r.p < 0.001 and r.significant
    short = bias_vs_zero([0.5])
    assert short.n == 1 and short.mean == 0.5 and math.isnan(short.t) and not short.significant
    assert math.isnan(short.ci_low) and math.isnan(short.cohens_d)


def test_compare_groups_is_welch_with_pooled_d() -> None:
    a = [1.0, 0.8, 0.6, 1.0, 0.4, 0.9, 1.0]
    b = [0.2, -0.4, 0.0, 0.6, -0.2]
    r = compare_groups(a, b, n_resamples=2000, seed=3)
    welch = stats.ttest_ind(a, b, equal_var=False)
    assert r.t == pytest.approx(welch.statistic) and r.p == pytest.approx(welch.pvalue)
    student = stats.ttest_ind(a, b, equal_var=True)
    assert r.p != pytest.approx(student.pvalue)  # not Student's test
    # pooled sd = sqrt((6·s_a² + 4·s_b²) / 10)
    pooled = math.sqrt((6 * np.var(a, ddof=1) + 4 * np.var(b, ddof=1)) / 10)
    assert r.cohens_d == pytest.approx((np.mean(a) - np.mean(b)) / pooled)
    assert r.diff == pytest.approx(np.mean(a) - np.mean(b)) and r.n_a == 7 and r.n_b == 5
    assert r.significant is bool(welch.pvalue < 0.05) and r.significant
    assert r.ci_low < r.diff < r.ci_high


def test_two_sample_bootstrap_ci_agrees_with_scipy_bootstrap() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.5, 0.4, 300), rng.normal(0.2, 0.6, 200)
    ours = two_sample_bootstrap_ci(a, b, n_resamples=5000, seed=1)
    ref = stats.bootstrap((a, b), lambda x, y, axis: x.mean(axis) - y.mean(axis), n_resamples=5000,
                          method="percentile", random_state=2, vectorized=True)
    assert ours == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), abs=0.015)
    assert two_sample_bootstrap_ci([1, 1, 1], [0, 0]) == (1.0, 1.0)  # constant groups: a point
    assert all(math.isnan(v) for v in two_sample_bootstrap_ci([1.0, 2.0], [3.0]))
    assert two_sample_bootstrap_ci(a, b, seed=4) == two_sample_bootstrap_ci(a, b, seed=4)


def test_marked_words_hand_example() -> None:
    # a: "x x y", b: "y y z"; prior "x y z w" → α = 1 each, α_0 = 4; n_a = n_b = 3
    # x: δ = ln(3/(3+4−2−1)) − ln(1/(3+4−0−1)) = ln(3/4) − ln(1/6) = ln 4.5; σ = √(1/3 + 1) → z = 1.3026
    words = marked_words(["x x y"], ["y y z"], ["x y z w"], top=2)
    by = {(m.side, m.word): m for m in words}
    assert by[("a", "x")].z == pytest.approx(math.log(4.5) / math.sqrt(4 / 3))
    assert by[("a", "x")].rank == 1 and by[("a", "x")].count_a == 2 and by[("a", "x")].count_b == 0
    assert {m.word for m in words if m.side == "b"} == {"z", "y"}
    assert not any(m.significant for m in words)  # 3 words per side cannot reach |z| > 1.96
    assert marked_words([], ["a"], ["a"]) == []


def test_marked_words_on_the_german_parallel_texts() -> None:
    pairs = shared_path(*GERMAN, "parallel_pairs.csv")
    with pairs.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["used_in_tasks"] == "True"]
    als = [r for r in rows if r["language"] == "als"]
    others = [r for r in rows if r["language"] != "als"]
    prior = [r["standard_text"] for r in others] + [r["dialect_text"] for r in others]
    words = marked_words([r["dialect_text"] for r in als], [r["standard_text"] for r in als], prior, top=10,
                         significant_only=True)
    side_a = [m.word for m in words if m.side == "a"]
    side_b = [m.word for m in words if m.side == "b"]
    # Alemannic function words mark the dialect texts, their standard forms the translations
    assert {"isch", "vo", "dr"} <= set(side_a)
    assert {"der", "ein"} <= set(side_b)
    assert all(m.z > 1.96 for m in words if m.side == "a") and all(m.z < -1.96 for m in words if m.side == "b")
