"""Rubrics as values: schema, validator, scale text, ceilings and score derived from one declaration."""

from __future__ import annotations

import itertools
import json
import pickle
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from dialectbias.judges import (
    RLAIF_CATEGORIES,
    RlaifJudgment,
    Rubric,
    load_rubric,
    parse_structured,
    rlaif_score,
)

LIKERT = [name for name, _ in RLAIF_CATEGORIES]


def rlaif_answer(likert: list[int] | None = None, **changes: Any) -> dict[str, Any]:
    values = dict(zip(LIKERT, likert or [4, 3, 5, 2, 1], strict=True))
    return {"chain_of_thought_reasoning": "ঠিক আছে: the script is Bengali.", "script_valid": True,
            "refusal": False, **values, "confidence": 4, **changes}


def tf_answer(count: int, score: int, **changes: Any) -> dict[str, Any]:
    return {"chain_of_thought_reasoning": "step by step", "exempt_differences_found": "ভালা লাগে না/ভালালাগেনা",
            "inaccurate_words": "কই (should be কিতা)", "inaccuracy_count": count, "meaning_preserved": "partial",
            "score_integer": score, "score_rationale": "one inaccuracy", **changes}


def small_rubric(**changes: Any) -> dict[str, Any]:
    return {"name": "small", "score": "mean",
            "fields": [{"name": "a", "type": "integer", "minimum": 0, "maximum": 4},
                       {"name": "b", "type": "number", "minimum": 0, "maximum": 1}], **changes}


def problems(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    with pytest.raises(ValidationError) as info:
        Rubric.model_validate(data)
    return [(err["loc"], err["msg"].removeprefix("Value error, ")) for err in info.value.errors()]


# -- RLAIF as a rubric -------------------------------------------------------------------------


@pytest.mark.parametrize(("likert", "expected"), [([0, 1, 5, 4, 5], 4.7), ([5] * 5, 10.0), ([0] * 5, 0.0)])
def test_rlaif_rubric_score_hand_checked(likert: list[int], expected: float) -> None:
    # 3·0/5 + 2.5·1/5 + 2·5/5 + 1.5·4/5 + 1·5/5 = 0 + 0.5 + 2 + 1.2 + 1 = 4.7
    assert load_rubric("rlaif").evaluate(rlaif_answer(likert)).score == pytest.approx(expected)


def test_rlaif_rubric_score_equals_rlaif_score_on_every_likert_combination() -> None:
    rubric = load_rubric("rlaif")
    for likert in itertools.product(range(6), repeat=5):
        assert rubric.evaluate(rlaif_answer(list(likert))).score == rlaif_score(likert)


def test_rlaif_rubric_score_bounds_are_0_to_10() -> None:
    assert load_rubric("rlaif").score_bounds == (0.0, 10.0)


def test_rlaif_rubric_answer_order_is_the_papers() -> None:
    order = ["chain_of_thought_reasoning", "script_valid", "refusal", *LIKERT, "confidence"]
    rubric = load_rubric("rlaif")
    assert list(rubric.json_schema()["properties"]) == order
    assert list(rubric.validator().model_fields) == order


def test_rlaif_rubric_declares_its_code_checks_and_confidence() -> None:
    rubric = load_rubric("rlaif")
    assert rubric.checks == ("script", "refusal")
    result = rubric.evaluate(rlaif_answer(confidence=2))
    assert result.confidence == 2
    assert result.fields["script_valid"] is True and result.fields["refusal"] is False


# (label, answer, valid?): the paper's judgment (§3.3, App. B) — every key, Likert 0–5, confidence 1–5
RLAIF_CASES: list[tuple[str, dict[str, Any] | str, bool]] = [
    ("valid", rlaif_answer(), True),
    ("all zero, script invalid", rlaif_answer([0] * 5, script_valid=False, refusal=True, confidence=1), True),
    ("all five", rlaif_answer([5] * 5, confidence=5), True),
    ("likert above 5", rlaif_answer([6, 3, 5, 2, 1]), False),
    ("likert below 0", rlaif_answer([-1, 3, 5, 2, 1]), False),
    ("likert fractional", rlaif_answer([3.5, 3, 5, 2, 1]), False),  # type: ignore[list-item]
    ("confidence 0", rlaif_answer(confidence=0), False),
    ("confidence 6", rlaif_answer(confidence=6), False),
    ("extra key", rlaif_answer(overall=3), False),
    ("missing reasoning", {k: v for k, v in rlaif_answer().items() if k != "chain_of_thought_reasoning"}, False),
    ("missing confidence", {k: v for k, v in rlaif_answer().items() if k != "confidence"}, False),
    ("missing a likert field", {k: v for k, v in rlaif_answer().items() if k != "appropriate_length"}, False),
    ("likert as text", rlaif_answer(dialect_comprehension="high"), False),
    ("reasoning not text", rlaif_answer(chain_of_thought_reasoning=["a", "b"]), False),
    ("script_valid not a boolean", rlaif_answer(script_valid="maybe"), False),
    ("not an object", "[1, 2, 3]", False),
]


def _accepts(model: Any, case: dict[str, Any] | str) -> bool:
    try:
        model.model_validate_json(json.dumps(case) if isinstance(case, dict) else case)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize(("label", "case", "valid"), RLAIF_CASES, ids=[label for label, _, _ in RLAIF_CASES])
def test_rlaif_rubric_validator_accepts_the_papers_judgments_only(label: str, case: Any, valid: bool) -> None:
    assert _accepts(load_rubric("rlaif").validator(), case) == valid


@pytest.mark.parametrize(("label", "case", "valid"), RLAIF_CASES, ids=[label for label, _, _ in RLAIF_CASES])
def test_rlaif_rubric_json_schema_accepts_the_papers_judgments_only(label: str, case: Any, valid: bool) -> None:
    schema = load_rubric("rlaif").json_schema()
    Draft202012Validator.check_schema(schema)
    instance = json.loads(case) if isinstance(case, str) else case
    assert Draft202012Validator(schema).is_valid(instance) == valid


def test_rlaif_rubric_schema_is_strict() -> None:
    schema = load_rubric("rlaif").json_schema()
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])
    assert schema["properties"]["dialect_comprehension"]["minimum"] == 0
    assert schema["properties"]["dialect_comprehension"]["maximum"] == 5
    assert {k: v for k, v in schema["properties"]["confidence"].items() if k != "description"} == {
        "type": "integer", "minimum": 1, "maximum": 5}


def test_rlaif_rubric_parses_judge_output_like_rlaif_judgment() -> None:
    text = "```json\n" + json.dumps(rlaif_answer([0, 1, 5, 4, 5]), ensure_ascii=False) + "\n```"
    parsed = parse_structured(text, load_rubric("rlaif").validator())
    assert parsed.status == "repaired"
    assert parsed.value.model_dump() == rlaif_answer([0, 1, 5, 4, 5])
    assert load_rubric("rlaif").evaluate(parsed.value).score == pytest.approx(4.7)


def test_evaluate_accepts_a_validated_instance() -> None:
    judgment = RlaifJudgment.model_validate(rlaif_answer([0, 1, 5, 4, 5]))
    assert load_rubric("rlaif").evaluate(judgment).score == rlaif_score([0, 1, 5, 4, 5]) == pytest.approx(4.7)


def test_evaluate_rejects_an_invalid_mapping() -> None:
    with pytest.raises(ValidationError):
        load_rubric("rlaif").evaluate(rlaif_answer([6, 0, 0, 0, 0]))


# -- reasoning length bound ----------------------------------------------------------------------


def test_reasoning_comes_first_with_a_default_max_length_of_1500() -> None:
    rubric = Rubric.model_validate(small_rubric(reasoning=True))
    props = rubric.json_schema()["properties"]
    assert next(iter(props)) == "reasoning"
    assert props["reasoning"]["maxLength"] == 1500


def test_reasoning_max_chars_sets_max_length() -> None:
    rubric = Rubric.model_validate(small_rubric(reasoning=True, reasoning_field="why", reasoning_max_chars=300))
    assert rubric.json_schema()["properties"]["why"] == {
        "type": "string", "description": rubric.reasoning_description, "maxLength": 300}
    assert "why (text, at most 300 characters; write it FIRST)" in rubric.scale_text()


def test_schema_rejects_over_long_reasoning_but_the_validator_keeps_the_answer() -> None:
    rubric = load_rubric("rlaif")
    answer = rlaif_answer(chain_of_thought_reasoning="x" * 1501)
    assert not Draft202012Validator(rubric.json_schema()).is_valid(answer)
    assert rubric.evaluate(answer).score == rlaif_score([4, 3, 5, 2, 1])


# -- caption rubric (BanglaVerse) ----------------------------------------------------------------


def caption_answer(**changes: Any) -> dict[str, Any]:
    return {"relevance": 0.8, "clarity": 0.9, "conciseness": 0.7, "creativity": 0.4, "overall": 0.75,
            "explanation": "সঠিক বস্তু, তবে সাধারণ ভাষা।", **changes}


def test_caption_rubric_score_is_the_judges_overall() -> None:
    result = load_rubric("caption").evaluate(caption_answer())
    assert result.score == 0.75
    assert result.confidence is None and result.flags == [] and result.clipped == {}


@pytest.mark.parametrize("bad", [{"relevance": 1.2}, {"overall": -0.1}, {"clarity": "good"}, {"extra": 1}])
def test_caption_rubric_rejects_bad_answers(bad: dict[str, Any]) -> None:
    rubric = load_rubric("caption")
    answer = caption_answer(**bad)
    assert not _accepts(rubric.validator(), answer)
    assert not Draft202012Validator(rubric.json_schema()).is_valid(answer)


def test_caption_rubric_requires_the_explanation_last() -> None:
    rubric = load_rubric("caption")
    answer = {k: v for k, v in caption_answer().items() if k != "explanation"}
    assert not _accepts(rubric.validator(), answer)
    assert list(rubric.json_schema()["properties"])[-1] == "explanation"


def test_caption_rubric_accepts_integer_bounds_as_numbers() -> None:
    rubric = load_rubric("caption")
    answer = caption_answer(relevance=1, creativity=0)
    assert _accepts(rubric.validator(), answer)
    assert Draft202012Validator(rubric.json_schema()).is_valid(answer)


# -- ceilings (translation fidelity, SPEC §4 P2) -------------------------------------------------


@pytest.mark.parametrize(("count", "given", "final"), [
    (0, 10, 10), (1, 9, 7), (1, 7, 7), (1, 5, 5), (2, 8, 6), (3, 6, 4), (4, 5, 2), (9, 10, 2), (4, 1, 1)])
def test_translation_fidelity_ceilings(count: int, given: int, final: int) -> None:
    result = load_rubric("translation_fidelity").evaluate(tf_answer(count, given))
    assert result.fields["score_integer"] == final
    assert result.score == final


def test_a_clipped_value_is_recorded_with_its_original_and_flagged() -> None:
    result = load_rubric("translation_fidelity").evaluate(tf_answer(1, 9))
    assert result.clipped == {"score_integer": (9, 7)}
    assert result.flags == ["ceiling: score_integer 9 clipped to 7 (inaccuracy_count == 1)"]
    assert isinstance(result.fields["score_integer"], int)


def test_a_value_under_its_ceiling_is_neither_clipped_nor_flagged() -> None:
    result = load_rubric("translation_fidelity").evaluate(tf_answer(2, 6))
    assert result.clipped == {} and result.flags == []


def test_the_lowest_applicable_ceiling_wins_and_conditions_read_original_values() -> None:
    rubric = Rubric.model_validate(small_rubric(
        score="field", score_field="a",
        fields=[{"name": "a", "type": "integer", "minimum": 0, "maximum": 10},
                {"name": "flag", "type": "boolean"}],
        ceilings=[{"field": "a", "max": 8, "when": {"field": "flag", "value": True}},
                  {"field": "a", "max": 5, "when": {"field": "a", "op": ">", "value": 9}}]))
    result = rubric.evaluate({"a": 10, "flag": True})
    assert result.fields["a"] == 5 and result.clipped == {"a": (10, 5)}
    assert result.flags == ["ceiling: a 10 clipped to 8 (flag == true)", "ceiling: a 8 clipped to 5 (a > 9)"]


def test_a_ceiling_on_a_string_condition() -> None:
    rubric = load_rubric("translation_fidelity").model_copy(update={"ceilings": [
        {"field": "score_integer", "max": 3, "when": {"field": "meaning_preserved", "value": "no"}}]})
    assert rubric.evaluate(tf_answer(0, 9, meaning_preserved="no")).score == 3
    assert rubric.evaluate(tf_answer(0, 9, meaning_preserved="yes")).score == 9


def test_translation_fidelity_answer_order_follows_the_paper() -> None:
    assert list(load_rubric("translation_fidelity").json_schema()["properties"]) == [
        "chain_of_thought_reasoning", "exempt_differences_found", "inaccurate_words", "inaccuracy_count",
        "meaning_preserved", "score_integer", "score_rationale"]


def test_enum_field_accepts_only_its_values() -> None:
    rubric = load_rubric("translation_fidelity")
    assert not _accepts(rubric.validator(), tf_answer(0, 10, meaning_preserved="mostly"))
    assert rubric.json_schema()["properties"]["meaning_preserved"]["enum"] == ["yes", "partial", "no"]


# -- aggregates ------------------------------------------------------------------------------------


def test_mean_is_the_plain_mean_of_the_numeric_fields() -> None:
    rubric = Rubric.model_validate(small_rubric())
    assert rubric.evaluate({"a": 3, "b": 0.5}).score == pytest.approx(1.75)  # (3 + 0.5) / 2
    assert rubric.score_bounds == (0.0, 2.5)


def test_weighted_sum_divides_each_field_by_its_own_maximum() -> None:
    rubric = Rubric.model_validate(small_rubric(score="weighted_sum", fields=[
        {"name": "a", "type": "integer", "minimum": 0, "maximum": 4, "weight": 2},
        {"name": "b", "type": "number", "minimum": 0, "maximum": 1},
        {"name": "ok", "type": "boolean"}]))
    assert rubric.evaluate({"a": 3, "b": 0.5, "ok": False}).score == pytest.approx(2.0)  # 2·3/4 + 1·0.5/1
    assert rubric.score_bounds == (0.0, 3.0)


def test_score_none_gives_no_score() -> None:
    rubric = Rubric.model_validate(small_rubric(score="none"))
    assert rubric.evaluate({"a": 1, "b": 0.2}).score is None
    assert rubric.score_bounds is None


# -- derivations ----------------------------------------------------------------------------------


def test_scale_text_lists_every_key_with_range_and_anchors() -> None:
    text = load_rubric("rlaif").scale_text()
    assert "- dialect_comprehension (an integer from 0 to 5): The model understood the dialect question" in text
    assert "  0 = strongly disagree, 1 = disagree, 2 = somewhat disagree, 3 = somewhat agree, 4 = agree, " \
           "5 = strongly agree" in text
    assert "- script_valid (true or false)" in text
    assert text.index("chain_of_thought_reasoning") < text.index("script_valid") < text.index("- confidence")
    assert "  1 = very low (<25%)" in text


def test_schema_and_validator_are_cached_per_rubric() -> None:
    rubric = Rubric.model_validate(small_rubric())
    assert rubric.json_schema() is rubric.json_schema()
    assert rubric.validator() is rubric.validator()


def test_model_copy_with_an_update_derives_a_fresh_schema() -> None:
    rubric = Rubric.model_validate(small_rubric(reasoning=True))
    assert rubric.json_schema()["properties"]["reasoning"]["maxLength"] == 1500
    shorter = rubric.model_copy(update={"reasoning_max_chars": 200})
    assert shorter.json_schema()["properties"]["reasoning"]["maxLength"] == 200


def test_model_copy_with_an_update_is_validated() -> None:
    with pytest.raises(ValidationError):
        Rubric.model_validate(small_rubric()).model_copy(update={"checks": ["spelling"]})


def test_a_rubric_pickles_after_its_validator_was_built() -> None:
    rubric = load_rubric("translation_fidelity")
    rubric.validator()
    copy = pickle.loads(pickle.dumps(rubric))
    assert copy == rubric
    assert copy.evaluate(tf_answer(1, 9)).score == 7


def test_validator_is_named_after_the_rubric_and_forbids_extra_keys() -> None:
    model = load_rubric("translation_fidelity").validator()
    assert model.__name__ == "TranslationFidelityJudgment"
    assert model.model_config["extra"] == "forbid"


# -- validating the rubric itself --------------------------------------------------------------


def test_duplicate_field_names_are_rejected() -> None:
    fields = [{"name": "a", "type": "boolean"}, {"name": "a", "type": "boolean"}]
    assert problems(small_rubric(score="none", fields=fields)) == [
        (("fields", 1, "name"), "duplicate field name 'a' (also at fields.0.name)")]


def test_a_field_may_not_reuse_the_reasoning_name() -> None:
    fields = [{"name": "reasoning", "type": "boolean"}]
    assert problems(small_rubric(score="none", reasoning=True, fields=fields))[0][0] == ("fields", 0, "name")


def test_confidence_is_a_reserved_field_name() -> None:
    fields = [{"name": "confidence", "type": "integer", "minimum": 1, "maximum": 5}]
    assert problems(small_rubric(score="none", fields=fields)) == [
        (("fields", 0, "name"), "'confidence' is the confidence field's name: set `confidence: true`")]


def test_minimum_must_be_below_maximum() -> None:
    fields = [{"name": "a", "type": "integer", "minimum": 5, "maximum": 5}]
    assert problems(small_rubric(fields=fields)) == [
        (("fields", 0, "maximum"), "maximum (5) must be greater than minimum (5)")]


def test_anchors_must_lie_in_the_range() -> None:
    fields = [{"name": "a", "type": "integer", "minimum": 0, "maximum": 5, "anchors": {0: "no", 6: "beyond"}}]
    assert problems(small_rubric(fields=fields)) == [
        (("fields", 0, "anchors", "6"), "anchor 6 is outside the field's range 0–5")]


def test_weights_only_on_numeric_fields() -> None:
    fields = [{"name": "a", "type": "integer", "minimum": 0, "maximum": 5},
              {"name": "ok", "type": "boolean", "weight": 2}]
    assert problems(small_rubric(score="weighted_sum", fields=fields)) == [
        (("fields", 1, "weight"), "only integer and number fields take 'weight' (ok is boolean)")]


def test_weights_only_with_weighted_sum() -> None:
    fields = [{"name": "a", "type": "integer", "minimum": 0, "maximum": 5, "weight": 2}]
    assert problems(small_rubric(fields=fields)) == [
        (("fields", 0, "weight"), "weights are used by score: weighted_sum only (this rubric has score: mean)")]


def test_scored_fields_need_both_bounds() -> None:
    fields = [{"name": "n", "type": "integer", "minimum": 0}]
    assert problems(small_rubric(fields=fields)) == [
        (("fields", 0, "maximum"), "score: mean needs a maximum on every numeric field")]


def test_integer_fields_need_integer_bounds() -> None:
    fields = [{"name": "a", "type": "integer", "minimum": 0, "maximum": 4.5}]
    assert problems(small_rubric(fields=fields)) == [
        (("fields", 0, "maximum"), "an integer field needs an integer maximum, got 4.5")]


def test_score_field_must_name_a_bounded_numeric_field() -> None:
    assert problems(small_rubric(score="field")) == [
        (("score_field",), "score: field needs score_field, the field that is the score")]
    assert problems(small_rubric(score="field", score_field="c")) == [(("score_field",), "no field named 'c'")]


@pytest.mark.parametrize(("ceiling", "loc", "message"), [
    ({"field": "c", "max": 1, "when": {"field": "a", "value": 1}}, ("ceilings", 0, "field"), "no field named 'c'"),
    ({"field": "a", "max": 1, "when": {"field": "z", "value": 1}}, ("ceilings", 0, "when", "field"),
     "no field named 'z'"),
    ({"field": "a", "max": 9, "when": {"field": "b", "op": ">", "value": 0.5}}, ("ceilings", 0, "max"),
     "9 is outside a's range 0–4"),
    ({"field": "a", "max": 2.5, "when": {"field": "b", "value": 1}}, ("ceilings", 0, "max"),
     "a is an integer field: max must be an integer"),
    ({"field": "a", "max": 2, "when": {"field": "b", "value": "high"}}, ("ceilings", 0, "when", "value"),
     "b is number: compare it with a number"),
])
def test_bad_ceilings_are_rejected(ceiling: dict[str, Any], loc: tuple[Any, ...], message: str) -> None:
    assert problems(small_rubric(ceilings=[ceiling])) == [(loc, message)]


def test_unknown_checks_are_rejected() -> None:
    assert problems(small_rubric(checks=["script", "spelling"])) == [
        (("checks", 1), "unknown check 'spelling'; known: script, refusal, language")]


def test_reasoning_settings_without_reasoning_are_rejected() -> None:
    assert problems(small_rubric(reasoning_field="chain_of_thought_reasoning")) == [
        (("reasoning_field",), "reasoning_field needs `reasoning: true`")]


def test_confidence_anchors_without_confidence_are_rejected() -> None:
    assert problems(small_rubric(confidence_anchors={1: "low"})) == [
        (("confidence_anchors",), "confidence_anchors needs `confidence: true`")]


def test_unknown_keys_are_rejected() -> None:
    assert problems(small_rubric(wieght=1))[0][0] == ("wieght",)


def test_field_names_that_shadow_pydantic_attributes_are_rejected() -> None:
    fields = [{"name": "copy", "type": "boolean"}]
    assert problems(small_rubric(score="none", fields=fields))[0][0] == ("fields", 0, "name")
