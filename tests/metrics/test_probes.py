"""Probe formulas (German paper §3.3, §3.4, App. B.3, §6.1) against the paper's examples and hand computation."""

from __future__ import annotations

import math

import pytest

from dialectbias.metrics import (
    association_bias,
    decision_score,
    fallback_bias,
    log_odds_dirichlet,
    stereotypical_share,
)


def test_association_bias_paper_examples() -> None:
    # §3.3: 5/5 + 5/5 − 1 = 1 (fully stereotypical); 2/5 + 3/5 − 1 = 0; 0/5 + 0/5 − 1 = −1 (mirror)
    assert association_bias(5, 0, 0, 5) == 1.0
    assert association_bias(2, 3, 2, 3) == pytest.approx(0.0)
    assert association_bias(0, 5, 5, 0) == -1.0


def test_association_bias_uneven_split() -> None:
    # dialect: 3 trait, 1 opposite → 3/4; standard: 2 trait, 4 opposite → 4/6; 0.75 + 0.6667 − 1 = 0.41667
    assert association_bias(3, 1, 2, 4) == pytest.approx(0.75 + 4 / 6 - 1)


def test_association_bias_empty_writer_term_is_half() -> None:
    # the standard writer got nothing: its term is 0.5 → 4/4 + 0.5 − 1 = 0.5
    assert association_bias(4, 0, 0, 0) == 0.5
    assert association_bias(0, 0, 0, 0) == 0.0


def test_association_bias_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="≥ 0"):
        association_bias(-1, 0, 0, 5)


def test_fallback_bias_shrinks_by_neutral_count() -> None:
    # App. B.3: bias / (N_neutral + 1)
    assert fallback_bias(1.0, 0) == 1.0
    assert fallback_bias(1.0, 1) == 0.5
    assert fallback_bias(-0.6, 2) == pytest.approx(-0.2)
    with pytest.raises(ValueError):
        fallback_bias(0.5, -1)


def test_decision_score_forced_choice() -> None:
    # §3.4: +1 stereotypical (dialect writer gets the trait option), −1 counter-stereotypical
    assert decision_score("trait", "opposite") == 1.0
    assert decision_score("opposite", "trait") == -1.0
    assert decision_score("trait", "trait") == 0.0  # same option for both: no preference shown


def test_decision_score_equal_option_rule() -> None:
    # App. B.3: both neutral → 0; one neutral → ±0.5 by the other assignment
    assert decision_score("none", "both") == 0.0
    assert decision_score("both", "both") == 0.0
    assert decision_score("none", "opposite") == 0.5   # standard writer got the stereotypical (opposite) option
    assert decision_score("none", "trait") == -0.5
    assert decision_score("trait", "both") == 0.5
    assert decision_score("opposite", "none") == -0.5


def test_decision_score_rejects_unknown_choice() -> None:
    with pytest.raises(ValueError, match="dialect choice"):
        decision_score("rural", "opposite")  # type: ignore[arg-type]


def test_decision_mean_half_is_75_percent_stereotypical() -> None:
    # §3.4: a mean of 0.5 = 75 stereotypical and 25 counter-stereotypical decisions out of 100
    scores = [decision_score("trait", "opposite")] * 75 + [decision_score("opposite", "trait")] * 25
    mean = sum(scores) / len(scores)
    assert mean == 0.5
    assert stereotypical_share(mean) == 0.75
    with pytest.raises(ValueError):
        stereotypical_share(1.5)


def test_log_odds_symmetric_hand_example() -> None:
    # a = {x: 3, y: 1}, b = {x: 1, y: 3}, α = {x: 2, y: 2}: n_a = n_b = 4, α_0 = 4
    # x: δ = ln((3+2)/(4+4−3−2)) − ln((1+2)/(4+4−1−2)) = ln(5/3) − ln(3/5) = 2 ln(5/3) = 1.0216512
    #    σ² = 1/5 + 1/3 = 0.5333333 → z = 1.0216512 / 0.7302967 = 1.3989536; y mirrors it
    z = log_odds_dirichlet({"x": 3, "y": 1}, {"x": 1, "y": 3}, {"x": 2, "y": 2})
    assert z["x"] == pytest.approx(1.3989536, abs=1e-6)
    assert z["y"] == pytest.approx(-1.3989536, abs=1e-6)


def test_log_odds_word_missing_from_prior_gets_alpha_one() -> None:
    # a = {x: 2, y: 1}, b = {y: 1}, prior = {y: 3}; x is not in the prior → α_x = 1, α_0 = 4; n_a = 3, n_b = 1
    # x: δ = ln(3/(3+4−2−1)) − ln(1/(1+4−0−1)) = ln(3/4) − ln(1/4) = ln 3; σ = √(1/3 + 1) → z = 0.9514262
    # y: δ = ln(4/(3+4−1−3)) − ln(4/(1+4−1−3)) = ln(4/3) − ln 4 = −ln 3; σ = √(1/4 + 1/4) → z = −1.5536724
    z = log_odds_dirichlet({"x": 2, "y": 1}, {"y": 1}, {"y": 3})
    assert z["x"] == pytest.approx(math.log(3) / math.sqrt(4 / 3))
    assert z["y"] == pytest.approx(-math.log(3) / math.sqrt(0.5))
    assert set(z) == {"x", "y"}


def test_log_odds_is_antisymmetric_and_prior_only_words_are_not_returned() -> None:
    a, b, prior = {"p": 5, "q": 2, "r": 1}, {"p": 1, "q": 2, "s": 4}, {"p": 10, "q": 10, "r": 3, "s": 3, "t": 50}
    ab, ba = log_odds_dirichlet(a, b, prior), log_odds_dirichlet(b, a, prior)
    assert set(ab) == {"p", "q", "r", "s"}
    for w in ab:
        assert ab[w] == pytest.approx(-ba[w])
    assert ab["p"] > 0 > ab["s"]


def test_log_odds_single_word_vocabulary_is_nan_and_bad_input_raises() -> None:
    assert math.isnan(log_odds_dirichlet({"x": 1}, {"x": 2}, {"x": 1})["x"])
    with pytest.raises(ValueError, match="counts_a"):
        log_odds_dirichlet({"x": -1}, {"x": 2}, {})
    with pytest.raises(ValueError, match="missing_prior"):
        log_odds_dirichlet({"x": 1}, {"x": 2}, {}, missing_prior=0)
