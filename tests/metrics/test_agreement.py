"""Agreement metrics against hand-worked numbers (arithmetic in comments)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest

from dialectbias.metrics import (
    cohen_kappa,
    critical_bias_sensitivity,
    krippendorff_alpha,
    krippendorff_interval_alpha,
    lin_ccc,
    mean_abs_difference,
    pearson,
    spearman,
)
from dialectbias.metrics._agreement import AlphaLevel, KappaWeights

# Krippendorff (2011) example: 4 coders × 12 units, None = missing.
CLASSIC = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_lin_ccc_hand_example_uses_population_moments() -> None:
    # x=[1,2,3], y=[2,3,4]: means 2, 3; var_x = var_y = (1+0+1)/3 = 2/3; cov = 2/3
    # CCC = 2·(2/3) / (2/3 + 2/3 + (2−3)²) = (4/3)/(7/3) = 4/7  (sample moments would give 2/3)
    assert lin_ccc([1, 2, 3], [2, 3, 4]) == pytest.approx(4 / 7)


def test_lin_ccc_both_constant_and_equal_is_one() -> None:
    assert lin_ccc([3, 3, 3], [3, 3, 3]) == 1.0


def test_lin_ccc_constant_but_shifted_is_zero() -> None:
    # cov = 0, denominator = 0 + 0 + (3−5)² = 4 → 0/4
    assert lin_ccc([3, 3, 3], [5, 5, 5]) == 0.0


def test_lin_ccc_empty_is_nan() -> None:
    assert math.isnan(lin_ccc([], []))


def test_lin_ccc_length_mismatch_names_lengths() -> None:
    with pytest.raises(ValueError, match="3 and 2"):
        lin_ccc([1, 2, 3], [1, 2])


def test_cbs_hand_example() -> None:
    # T=4: C = rows 0,1 (primary 2, 3); secondary < 4: row0 yes (3), row1 no (5) → recall 1/2
    # MAE = (1+2+1+0)/4 = 1.0 → /10 = 0.1; CBS = 0.5 × (1 − 0.1) = 0.45
    assert critical_bias_sensitivity([2, 3, 5, 8], [3, 5, 4, 8]) == pytest.approx(0.45)


def test_cbs_is_none_when_no_critical_rows() -> None:
    assert critical_bias_sensitivity([4, 6, 9], [1, 2, 3]) is None


def test_cbs_threshold_is_strict() -> None:
    # primary 4.0 is not < 4 → C = {row1}; secondary 3 < 4 → recall 1
    # MAE = (0 + 1)/2 = 0.5 → 0.05; CBS = 1 × 0.95
    assert critical_bias_sensitivity([4.0, 2.0], [4.0, 3.0], min_pairs=2) == pytest.approx(0.95)


def test_cbs_custom_scale() -> None:
    # T=4: C = both rows; secondary 2 < 4 yes, 5 no → recall 0.5; MAE = (1+2)/2 = 1.5 → /5 = 0.3
    # CBS = 0.5 × 0.7 = 0.35
    assert critical_bias_sensitivity([1, 3], [2, 5], scale=5.0, min_pairs=2) == pytest.approx(0.35)


def test_pearson_hand_example() -> None:
    # dx = [−1,0,1], dy = [−1,1,0]: Σdxdy = 1, Σdx² = Σdy² = 2 → r = 1/2
    assert pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)


def test_spearman_is_one_for_monotone_nonlinear() -> None:
    assert spearman([1, 2, 3, 4], [1, 4, 9, 100]) == pytest.approx(1.0)


@pytest.mark.parametrize("fn", [pearson, spearman])
def test_correlation_of_constant_input_is_nan_without_warning(fn: Callable[..., float]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(fn([2, 2, 2], [1, 2, 3]))


@pytest.mark.parametrize("fn", [pearson, spearman])
def test_correlation_of_single_pair_is_nan(fn: Callable[..., float]) -> None:
    assert math.isnan(fn([1], [2]))


def test_mean_abs_difference_hand_example() -> None:
    # |1−2| + |2−2| + |3−5| = 3 → /3 = 1.0
    assert mean_abs_difference([1, 2, 3], [2, 2, 5]) == pytest.approx(1.0)


def test_mean_abs_difference_empty_is_nan() -> None:
    assert math.isnan(mean_abs_difference([], []))


@pytest.mark.parametrize(("weights", "expected"), [(None, 0.6), ("linear", 2 / 3), ("quadratic", 0.75)])
def test_cohen_kappa_hand_example(weights: KappaWeights, expected: float) -> None:
    # a=[1,2,3,1], b=[1,2,2,1]; marginals p_a=(.5,.25,.25), p_b=(.5,.5,0); only row 2 disagrees (3 vs 2)
    # unweighted: p_o = .75, p_e = .5·.5 + .25·.5 = .375 → (.75 − .375)/(1 − .375) = 0.6
    # linear, Σ|i−j|·p_a·p_b over (a,b) = (1,2) .25 + (2,1) .125 + (3,1) 2·.125 + (3,2) .125 = .75;
    #   observed Σw·O = 1·.25 → κ = 1 − .25/.75 = 2/3
    # quadratic: same cells with (i−j)²: .25 + .125 + 4·.125 + .125 = 1.0 → κ = 1 − .25/1 = 0.75
    assert cohen_kappa([1, 2, 3, 1], [1, 2, 2, 1], weights=weights) == pytest.approx(expected)


def test_cohen_kappa_rating_outside_labels_raises() -> None:
    with pytest.raises(ValueError, match="'x'"):
        cohen_kappa(["a", "x"], ["a", "b"], labels=["a", "b"])


def test_cohen_kappa_without_chance_disagreement_is_nan() -> None:
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(weights: KappaWeights) -> None:
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 6, 50).tolist(), rng.integers(0, 6, 50).tolist()
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(skm.cohen_kappa_score(a, b, weights=weights))


def test_krippendorff_nominal_hand_example_ignores_single_rating_units() -> None:
    # units (1,1), (1,2), (2,2); unit 4 has one rating → unpairable, ignored
    # o_11 = 2, o_12 = o_21 = 1, o_22 = 2; n_1 = n_2 = 3, n = 6
    # α = 1 − (n−1)·Σo·δ / Σ n_c·n_k·δ = 1 − 5·2 / (2·3·3) = 1 − 10/18 = 4/9
    assert krippendorff_alpha([[1, 1, 2, None], [1, 2, 2, 3]], "nominal") == pytest.approx(4 / 9)


@pytest.mark.parametrize(("level", "expected"), [("interval", 72 / 82), ("nominal", 16 / 26)])
def test_krippendorff_three_values_hand_example(level: AlphaLevel, expected: float) -> None:
    # units (1,1), (2,2), (3,4): o_11 = 2, o_22 = 2, o_34 = o_43 = 1; n_1=n_2=2, n_3=n_4=1, n = 6
    # interval: Σo·δ² = 2·1 = 2; Σn_c·n_k·δ² = 2·(4+8+18+2+8+1) = 82 → 1 − 5·2/82 = 72/82
    # nominal:  Σo·δ = 2;  Σn_c·n_k·δ = 36 − (4+4+1+1) = 26 → 1 − 10/26 = 16/26
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 4]], level) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("level", "expected"),
    # published values, also verified against the `krippendorff` PyPI package 0.9.0
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_classic_example(level: AlphaLevel, expected: float) -> None:
    assert krippendorff_alpha(CLASSIC, level) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_matches_reference_package_with_nan_missing(level: AlphaLevel) -> None:
    kd = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(7)
    data = rng.integers(1, 6, size=(3, 30)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    assert krippendorff_alpha(data.tolist(), level) == pytest.approx(
        kd.alpha(reliability_data=data, level_of_measurement=level))


def test_krippendorff_single_value_is_nan() -> None:
    assert math.isnan(krippendorff_alpha([[2, 2], [2, 2]]))


def test_krippendorff_no_pairable_unit_is_nan() -> None:
    assert math.isnan(krippendorff_alpha([[1, None], [None, 2]]))


# -- too few pairs: undefined, never a perfect score (issue 6.4) ------------------------------------


@pytest.mark.parametrize(("x", "y"), [([2], [2]), ([2, 7], [2, 7]), ([0], [9])])
def test_lin_ccc_on_fewer_than_three_pairs_is_undefined(x: list[int], y: list[int]) -> None:
    assert math.isnan(lin_ccc(x, y))


def test_lin_ccc_minimum_is_a_setting() -> None:
    # two equal pairs: var 6.25 each, cov 6.25, no shift → 12.5 / 12.5 = 1
    assert lin_ccc([2, 7], [2, 7], min_pairs=2) == 1.0
    assert math.isnan(lin_ccc([2, 7, 1, 4], [2, 7, 1, 4], min_pairs=5))


def test_cbs_on_fewer_than_three_pairs_is_undefined() -> None:
    assert critical_bias_sensitivity([1], [1]) is None
    assert critical_bias_sensitivity([1, 2], [1, 2]) is None
    # three pairs: C = all, recall 1, MAE 0 → 1.0
    assert critical_bias_sensitivity([1, 2, 3], [1, 2, 3]) == 1.0


def test_kappa_on_fewer_than_three_pairs_is_undefined() -> None:
    assert math.isnan(cohen_kappa([1, 2], [1, 2], weights="quadratic", labels=range(6)))
    # three identical pairs over labels 1, 2 → perfect agreement 1.0
    assert cohen_kappa([1, 2, 2], [1, 2, 2]) == 1.0


def test_alpha_on_fewer_than_three_pairable_units_is_undefined() -> None:
    assert math.isnan(krippendorff_alpha([[1, 3], [1, 3]], "interval"))
    # units (1,1), (3,3), (5,5): no disagreement → 1.0
    assert krippendorff_alpha([[1, 3, 5], [1, 3, 5]], "interval") == 1.0
    assert krippendorff_alpha([[1, 3], [2, 3]], "interval", min_pairs=2) == pytest.approx(8 / 11)


def test_krippendorff_ragged_rows_raise() -> None:
    with pytest.raises(ValueError, match="row lengths"):
        krippendorff_alpha([[1, 2, 3], [1, 2]])


def test_interval_alpha_closed_form_hand_checked() -> None:
    # units 0: (1, 2) and 1: (3, 3), unit 2 has one rating (not pairable): D_o = 2·2·0.5/1 + 0 = 2;
    # the pairable ratings 1, 2, 3, 3: SS = 2.75, D_e = 2·4·2.75 = 22; α = 1 − 3·2/22 = 8/11
    alpha, units = krippendorff_interval_alpha([0, 0, 1, 1, 2], [1.0, 2.0, 3.0, 3.0, 5.0], min_pairs=2)
    assert alpha == pytest.approx(8 / 11) and units == 2
    assert math.isnan(krippendorff_interval_alpha([0, 0, 1, 1], [1.0, 2.0, 3.0, 3.0])[0])  # 2 units < MIN_PAIRS
    assert krippendorff_interval_alpha([0, 1], [1.0, 2.0]) == (pytest.approx(math.nan, nan_ok=True), 0)
    with pytest.raises(ValueError, match="equal lengths"):
        krippendorff_interval_alpha([0, 0], [1.0])


def test_interval_alpha_closed_form_equals_the_coincidence_matrix() -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 11, (3, 40)).astype(float)  # raters × units
    data[rng.random(data.shape) < 0.25] = np.nan
    units = np.tile(np.arange(40), 3)
    alpha, n_units = krippendorff_interval_alpha(units, data.ravel())
    assert alpha == pytest.approx(krippendorff_alpha(data.tolist(), "interval"), rel=1e-12)
    assert n_units == int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
