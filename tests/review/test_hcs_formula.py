"""The Human Consistency Score (BanglaVerse §4.3): one rating = decision accuracy (0–50) + reasoning
alignment (0–40) + explanation clarity (0–10); a judgment = the mean of its raters; a judge = the mean of its
judgments. Hand-computed values, and the queue's form refusing out-of-range points."""

from __future__ import annotations

import pytest

from dialectbias.review import HCS_COMPONENTS, AnnotationError, judgment_score, mean_scores, queue_kind
from dialectbias.review._kind_consistency import rating_total


def test_components_are_the_papers() -> None:
    assert [(name, top) for name, top, _ in HCS_COMPONENTS] == [
        ("decision_accuracy", 50), ("reasoning_alignment", 40), ("explanation_clarity", 10)]


def test_a_judgment_scores_the_mean_of_its_raters() -> None:
    s = judgment_score([{"decision_accuracy": 45, "reasoning_alignment": 35, "explanation_clarity": 9},
                        {"decision_accuracy": 40, "reasoning_alignment": 30, "explanation_clarity": 10}])
    assert s == pytest.approx({"decision_accuracy": 42.5, "reasoning_alignment": 32.5, "explanation_clarity": 9.5,
                               "hcs": 84.5})


def test_a_judge_scores_the_mean_of_its_judgments_each_counted_once() -> None:
    a = judgment_score([{"decision_accuracy": 45, "reasoning_alignment": 35, "explanation_clarity": 9},
                        {"decision_accuracy": 40, "reasoning_alignment": 30, "explanation_clarity": 10}])
    b = judgment_score([{"decision_accuracy": 50, "reasoning_alignment": 40, "explanation_clarity": 10}])
    # (84.5 + 100) / 2, not the mean of the three ratings ((89 + 80 + 100) / 3 = 89.67)
    assert mean_scores([a, b])["hcs"] == pytest.approx(92.25)
    assert rating_total({"decision_accuracy": 50, "reasoning_alignment": 0, "explanation_clarity": 3}) == 53
    assert rating_total({"decision_accuracy": 50, "reasoning_alignment": 41, "explanation_clarity": 3}) is None


def test_the_form_refuses_what_is_not_whole_points_in_range() -> None:
    kind = queue_kind("judge_consistency")
    with pytest.raises(AnnotationError) as info:
        kind.annotation(None, None, None, {"decision_accuracy": "4.5", "reasoning_alignment": 41,  # type: ignore[arg-type]
                                           "explanation_clarity": ""})
    assert info.value.problems == {"decision_accuracy": "4.5 is not a whole number of points",
                                   "reasoning_alignment": "41 is outside 0–40", "explanation_clarity": "missing"}
    assert kind.annotation(None, None, None, {"decision_accuracy": "50", "reasoning_alignment": 40.0,  # type: ignore[arg-type]
                                              "explanation_clarity": 0}) == {
        "decision_accuracy": 50, "reasoning_alignment": 40, "explanation_clarity": 0}
    with pytest.raises(ValueError, match="a judgment without ratings"):
        judgment_score([])
