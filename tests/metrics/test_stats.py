"""Bootstrap CIs, tests and effect sizes against hand-worked numbers (arithmetic in comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from dialectbias.metrics import _stats as stats_module
from dialectbias.metrics import (
    bootstrap_ci,
    cluster_bootstrap_cis,
    cohens_d,
    holm_adjust,
    independent_ttest,
    one_sample_ttest,
    paired_bootstrap_ci,
    paired_test,
    paired_tests,
    wald_ci,
)


def test_bootstrap_ci_is_reproducible_for_a_seed() -> None:
    values = [1.0, 4.0, 2.0, 8.0, 5.0]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)


def test_bootstrap_ci_of_constant_values_is_a_point() -> None:
    assert bootstrap_ci([5, 5, 5]) == (5.0, 5.0)


def test_bootstrap_ci_of_mean_matches_normal_theory_for_large_n() -> None:
    # mean ± 1.96·sd/√n; with n = 400 the percentile bootstrap agrees to ~0.01
    values = np.random.default_rng(0).normal(0.0, 1.0, 400)
    half = 1.96 * values.std(ddof=1) / math.sqrt(400)
    lo, hi = bootstrap_ci(values)
    assert (lo, hi) == pytest.approx((values.mean() - half, values.mean() + half), abs=0.01)


def test_bootstrap_ci_short_input_is_nan() -> None:
    assert all(math.isnan(v) for v in bootstrap_ci([3.0]))


def test_bootstrap_ci_statistic_without_axis_falls_back_to_loop() -> None:
    values = [1.0, 7.0, 3.0, 2.0]
    assert bootstrap_ci(values, statistic=lambda v: float(np.max(v)), n_resamples=500) == bootstrap_ci(
        values, statistic=np.max, n_resamples=500)


def test_bootstrap_ci_chunking_does_not_change_result(monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.arange(10.0)
    whole = bootstrap_ci(values, n_resamples=1000)
    monkeypatch.setattr(stats_module, "_CHUNK_ELEMENTS", 70)  # blocks of 7 resamples
    assert bootstrap_ci(values, n_resamples=1000) == whole


def test_bootstrap_ci_rejects_bad_confidence() -> None:
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1, 2, 3], confidence=95)


def test_paired_bootstrap_ci_of_constant_difference() -> None:
    # x − y = [2, 2, 2, 2] → every resampled mean is 2
    assert paired_bootstrap_ci([3, 4, 5, 6], [1, 2, 3, 4]) == (2.0, 2.0)


def test_paired_bootstrap_ci_length_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="3 and 2"):
        paired_bootstrap_ci([1, 2, 3], [1, 2])


def test_paired_test_hand_example() -> None:
    # d = [1,2,3,4]: mean 2.5, sd = √((2.25+.25+.25+2.25)/3) = √(5/3); t = 2.5/(√(5/3)/2) = 3.87298
    # Wilcoxon: all differences positive → W⁻ = 0, exact two-sided p = 2/2⁴ = 0.125
    r = paired_test([2, 4, 6, 8], [1, 2, 3, 4])
    assert (r.n, r.mean_diff, r.t_statistic, r.wilcoxon_statistic, r.wilcoxon_pvalue) == pytest.approx(
        (4, 2.5, 3.872983, 0.0, 0.125))


def test_paired_test_all_zero_differences_gives_p_one() -> None:
    r = paired_test([1, 2, 3], [1, 2, 3])
    assert (r.t_statistic, r.t_pvalue, r.wilcoxon_statistic, r.wilcoxon_pvalue) == (0.0, 1.0, 0.0, 1.0)


def test_paired_test_single_pair_is_nan_but_reports_mean_diff() -> None:
    r = paired_test([5], [2])
    assert (r.n, r.mean_diff) == (1, 3.0)
    assert all(math.isnan(v) for v in (r.t_statistic, r.t_pvalue, r.wilcoxon_statistic, r.wilcoxon_pvalue))


def test_paired_test_empty_mean_diff_is_nan() -> None:
    assert math.isnan(paired_test([], []).mean_diff)


def test_one_sample_ttest_hand_example() -> None:
    # [1,2,3]: mean 2, sd 1 → t = 2/(1/√3) = 2√3 = 3.4641; df 2 has closed form p = 1 − t/√(t²+2)
    # = 1 − 3.4641/√14 = 1 − 0.92582 = 0.07418
    t, p = one_sample_ttest([1, 2, 3])
    assert (t, p) == pytest.approx((3.464102, 0.074180), abs=1e-5)


def test_one_sample_ttest_short_input_is_nan() -> None:
    assert all(math.isnan(v) for v in one_sample_ttest([1.0]))


def test_one_sample_ttest_all_at_popmean_gives_p_one() -> None:
    assert one_sample_ttest([2, 2, 2], popmean=2.0) == (0.0, 1.0)


def test_independent_ttest_is_welch() -> None:
    # x: mean 3, var 2.5, n 5; y: mean 20, var 200, n 2
    # Welch t = −17/√(2.5/5 + 200/2) = −17/√100.5 = −1.69576 (Student's pooled t would be −3.1352)
    t, _ = independent_ttest([1, 2, 3, 4, 5], [10, 30])
    assert t == pytest.approx(-1.695757, abs=1e-5)


def test_independent_ttest_short_sample_is_nan() -> None:
    assert all(math.isnan(v) for v in independent_ttest([1.0], [1.0, 2.0]))


def test_cohens_d_one_sample() -> None:
    # mean 2 / sd(ddof=1) 1
    assert cohens_d([1, 2, 3]) == pytest.approx(2.0)


def test_cohens_d_two_samples_pooled_sd() -> None:
    # x=[1,3]: mean 2, var 2; y=[2,4,6]: mean 4, var 4; pooled = √((1·2 + 2·4)/3) = √(10/3) = 1.825742
    # d = (2 − 4)/1.825742 = −1.095445
    assert cohens_d([1, 3], [2, 4, 6]) == pytest.approx(-1.095445, abs=1e-6)


@pytest.mark.parametrize(
    ("x", "y"), [([1.0], None), ([2, 2, 2], None), ([1.0], [1.0, 2.0]), ([1, 1], [1, 1])]
)
def test_cohens_d_undefined_is_nan(x: list[float], y: list[float] | None) -> None:
    assert math.isnan(cohens_d(x, y))


def test_cluster_bootstrap_with_one_observation_per_cluster_is_bootstrap_ci() -> None:
    values = np.array([2.0, 5.0, 3.0, 9.0, 4.0, 4.5])
    (ci,) = cluster_bootstrap_cis(values[:, None], np.ones((6, 1)), [[0]], n_resamples=999, seed=7)
    assert (ci.ci_low, ci.ci_high) == pytest.approx(bootstrap_ci(values, np.mean, n_resamples=999, seed=7))
    assert ci.n == 6 and ci.mean == pytest.approx(values.mean()) and ci.ci_low <= ci.mean <= ci.ci_high


def test_cluster_bootstrap_group_is_the_macro_mean_and_short_groups_have_no_interval() -> None:
    sums = np.array([[1.0, 4.0], [3.0, 0.0]])
    counts = np.array([[1.0, 2.0], [1.0, 0.0]])
    both, single = cluster_bootstrap_cis(sums, counts, [[0, 1], [1]], n_resamples=50)
    assert both.mean == pytest.approx((2.0 + 2.0) / 2) and both.n == 4
    assert single.n == 2 and not math.isnan(single.ci_low)  # two observations, both in one item
    (lone,) = cluster_bootstrap_cis(np.array([[5.0]]), np.array([[1.0]]), [[0]], n_resamples=50)
    assert lone.mean == 5.0 and math.isnan(lone.ci_low)


# -- paired tests of many columns, Holm, Wald (moved from the qa_bias and vlm task modules) ---------------


def test_paired_tests_equal_paired_test_and_scipy_per_column() -> None:
    rng = np.random.default_rng(0)
    n, k = 120, 12
    x = rng.integers(0, 21, (n, k)) / 2.0
    y = x + rng.integers(-3, 4, (n, k)) / 2.0
    x[rng.random((n, k)) < 0.1] = np.nan
    x[:100, 1] = np.nan  # ≤ 50 pairs: scipy's exact/permutation path via paired_test
    y[:, 2] = x[:, 2]  # all differences zero
    y[:, 3] = x[:, 3] + 0.5  # constant difference
    got = paired_tests(x, y)
    for j in range(k):
        ok = ~np.isnan(x[:, j]) & ~np.isnan(y[:, j])
        want = paired_test(x[ok, j], y[ok, j])
        assert got.n[j] == want.n
        for c in ("mean_diff", "t_statistic", "t_pvalue", "wilcoxon_statistic", "wilcoxon_pvalue"):
            assert getattr(got, c)[j] == pytest.approx(getattr(want, c), rel=1e-9, abs=1e-300), (j, c)
        if j not in (2, 3):
            assert got.t_pvalue[j] == pytest.approx(scipy_stats.ttest_rel(x[ok, j], y[ok, j]).pvalue, rel=1e-9)
            w = scipy_stats.wilcoxon(x[ok, j] - y[ok, j])
            assert got.wilcoxon_pvalue[j] == pytest.approx(w.pvalue, rel=1e-9)


def test_wilcoxon_normal_approximation_hand_checked() -> None:
    # d = 1, −2, 3, 3: ranks of |d| 1, 2, 3.5, 3.5 → R+ = 8, R− = 2; n = 4, E = n(n+1)/4 = 5;
    # var = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 = 7.5 − 6/48 = 7.375; z = 3/√7.375 = 1.104686; p = 2Φ(−z) = 0.269294
    stat, p = stats_module._wilcoxon_normal(np.array([[1.0], [-2.0], [3.0], [3.0]]), np.ones((4, 1), bool))
    assert stat[0] == 2.0 and p[0] == pytest.approx(0.269294, abs=1e-6)
    want = scipy_stats.wilcoxon([1.0, -2.0, 3.0, 3.0], method="approx", correction=False)
    assert p[0] == pytest.approx(want.pvalue, rel=1e-12)


def test_holm_hand_checked() -> None:
    # sorted 0.01, 0.03, 0.04 → 3·0.01, 2·0.03, max(0.06, 1·0.04)
    assert holm_adjust(np.array([0.01, 0.04, 0.03, np.nan])).tolist()[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert math.isnan(holm_adjust(np.array([0.5, np.nan]))[1])
    assert holm_adjust(np.array([0.6, 0.7])).tolist() == [1.0, 1.0]


def test_wald_ci_known_values() -> None:
    lo, hi = wald_ci(0.5, 100)  # 0.5 ± 1.96 · sqrt(0.25 / 100) = 0.5 ± 0.098
    assert (lo, hi) == pytest.approx((0.402, 0.598))
    lo, hi = wald_ci(0.6, 75)  # sqrt(0.24 / 75) = 0.0565685; × 1.96 = 0.1108743
    assert (lo, hi) == pytest.approx((0.6 - 0.1108743, 0.6 + 0.1108743), abs=1e-7)
    assert wald_ci(1.0, 10) == (1.0, 1.0)
    assert all(math.isnan(v) for v in wald_ci(0.5, 0))
