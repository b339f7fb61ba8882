"""Re-scoring a stored judgment with the rubric and settings as they are now (issue 19 items 1–2): the judge's
parsed answer is the measurement, everything else is derived from it again."""

from __future__ import annotations

import pytest

from dialectbias.judges import (
    CheckSettings,
    CodeChecks,
    evaluate_judgment,
    load_rubric,
    override_value,
    parse_rubric,
    parse_structured,
    reevaluate_judgment,
    rescore_override,
    scoring_fingerprint,
)

FAFB = """\
name: fafb
fields:
  - {name: fa, type: integer, minimum: 0, maximum: 5, weight: 3}
  - {name: fb, type: integer, minimum: 0, maximum: 5, weight: 1}
score: weighted_sum
confidence: true
"""
CEILING = "ceilings: [{field: fa, max: 2, when: {field: fb, op: '>=', value: 4}}]\n"
ANSWER = '{"fa": 5, "fb": 5, "confidence": 2}'


def _stored(rubric_text: str, threshold: int = 3) -> dict:
    rubric = parse_rubric(rubric_text, "r.yaml")
    v = evaluate_judgment(rubric, parse_structured(ANSWER, rubric.validator()), CodeChecks(),
                          review_threshold=threshold)
    return {"parse_status": v.parse_status, "parsed": v.parsed, "reason": v.reason,
            "clipped": {k: list(pair) for k, pair in v.clipped.items()}}


def test_new_weights_give_the_new_score() -> None:
    stored = _stored(FAFB)
    flat = parse_rubric(FAFB.replace("weight: 3", "weight: 1"), "r.yaml")
    v = reevaluate_judgment(flat, **stored, code=CodeChecks(), review_threshold=3)
    assert (v.score, v.parse_status, v.confidence) == (2.0, "ok", 2)


def test_a_removed_ceiling_restores_the_judges_value() -> None:
    stored = _stored(FAFB + CEILING)
    assert stored["parsed"]["fa"] == 2 and stored["clipped"] == {"fa": [5, 2]}
    v = reevaluate_judgment(parse_rubric(FAFB, "r.yaml"), **stored, code=CodeChecks(), review_threshold=1)
    assert (v.score, v.parsed["fa"], v.clipped, v.flagged, v.needs_review) == (4.0, 5, {}, False, False)


def test_the_review_threshold_is_read_now() -> None:
    stored = _stored(FAFB, threshold=1)
    rubric = parse_rubric(FAFB, "r.yaml")
    assert not reevaluate_judgment(rubric, **stored, code=CodeChecks(), review_threshold=1).needs_review
    assert reevaluate_judgment(rubric, **stored, code=CodeChecks(), review_threshold=3).needs_review


def test_an_unparsed_answer_stays_unscored_with_its_error() -> None:
    v = reevaluate_judgment(parse_rubric(FAFB, "r.yaml"), "failed", None, {}, "invalid JSON", CodeChecks(),
                            review_threshold=3)
    assert (v.score, v.parse_status, v.needs_review, v.reason) == (None, "failed", True, "invalid JSON")


def test_a_stored_answer_the_rubric_no_longer_accepts_is_unscored_and_says_why() -> None:
    stored = _stored(FAFB)
    other = parse_rubric(FAFB.replace("maximum: 5, weight: 1", "maximum: 4, weight: 1"), "r.yaml")
    v = reevaluate_judgment(other, **stored, code=CodeChecks(), review_threshold=3)
    assert v.score is None and v.parse_status == "ok" and v.needs_review and v.parsed == {**stored["parsed"]}
    # a ceiling's clip is undone in what is kept: the judge's own values
    capped = _stored(FAFB + CEILING)
    kept = reevaluate_judgment(other, **capped, code=CodeChecks(), review_threshold=3)
    assert kept.parsed is not None and kept.parsed["fa"] == 5 and kept.clipped == {}
    assert v.reason is not None and v.reason.startswith("the stored answer does not fit the rubric 'fafb' now (fb:")


def test_the_fingerprint_changes_with_what_the_values_derive_from() -> None:
    rubric = parse_rubric(FAFB, "r.yaml")
    base = scoring_fingerprint(rubric, review_threshold=3, checks=CheckSettings())
    assert base == scoring_fingerprint(parse_rubric(FAFB, "r.yaml"), review_threshold=3, checks=CheckSettings())
    assert base != scoring_fingerprint(parse_rubric(FAFB.replace("weight: 3", "weight: 2"), "r.yaml"),
                                       review_threshold=3, checks=CheckSettings())
    assert base != scoring_fingerprint(parse_rubric(FAFB + CEILING, "r.yaml"), review_threshold=3,
                                       checks=CheckSettings())
    assert base != scoring_fingerprint(rubric, review_threshold=4, checks=CheckSettings())
    assert base != scoring_fingerprint(rubric, review_threshold=3, checks=CheckSettings(threshold=0.7))


def test_the_question_leaves_out_how_the_answer_is_scored() -> None:
    rubric = parse_rubric(FAFB, "r.yaml")
    mean = parse_rubric(FAFB.replace(", weight: 3", "").replace(", weight: 1", "").replace(
        "weighted_sum", "mean") + CEILING, "r.yaml")
    assert rubric.question() == mean.question()
    assert rubric.question() != parse_rubric(FAFB.replace("maximum: 5, weight: 1", "maximum: 9, weight: 1"),
                                             "r.yaml").question()
    rlaif = load_rubric("rlaif")
    reweighted = rlaif.model_copy(update={"fields": [f.model_copy(update={"weight": 1.0}) if f.numeric else f
                                                     for f in rlaif.fields]})
    assert reweighted != rlaif and reweighted.question() == rlaif.question()


def test_an_override_is_rescored_from_the_humans_values() -> None:
    capped = parse_rubric(FAFB + CEILING, "r.yaml")
    stored = override_value(capped, {"fa": 5, "fb": 5}, {"fa": 4, "fb": 5}, None)
    assert stored["fields"] == {"fa": 2, "fb": 5} and stored["clipped"] == {"fa": [4, 2]}
    again = rescore_override(parse_rubric(FAFB.replace("weight: 3", "weight: 1"), "r.yaml"), {}, stored)
    assert again == {"rubric": "fafb", "fields": {"fa": 4, "fb": 5}, "score": pytest.approx(1.8),
                     "script_valid": None}
    assert rescore_override(capped, {"fa": 5, "fb": 5}, stored) == stored


def test_an_override_saying_not_in_the_script_keeps_the_lowest_score() -> None:
    rubric = parse_rubric(FAFB, "r.yaml")
    stored = override_value(rubric, {}, None, False)
    assert stored["score"] == 0.0
    again = rescore_override(parse_rubric(FAFB.replace("minimum: 0, maximum: 5, weight: 3",
                                                       "minimum: 0, maximum: 5, weight: 2"), "r.yaml"), {}, stored)
    assert again["score"] == 0.0 and again["script_valid"] is False and again["fields"] == {"fa": 0, "fb": 0}
