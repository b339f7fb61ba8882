"""The RLAIF rubric (Bengali dialect-bias paper §3.3): score formula and the judge's JSON schema."""

from __future__ import annotations

import pytest

from dialectbias.judges import RLAIF_CATEGORIES, RlaifJudgment, rlaif_json_schema, rlaif_score

ORDER = ["chain_of_thought_reasoning", "script_valid", "refusal", "dialect_comprehension",
         "factual_correctness",
         "content_completeness", "response_clarity", "appropriate_length", "confidence"]


def test_paper_example() -> None:
    # weights 3.0, 2.5, 2.0, 1.5, 1.0: (3·0 + 2.5·1 + 2·5 + 1.5·4 + 1·5) / 5 = (0 + 2.5 + 10 + 6 + 5) / 5
    # = 23.5 / 5 = 4.7
    assert rlaif_score([0, 1, 5, 4, 5]) == pytest.approx(4.7)


def test_score_range() -> None:
    assert rlaif_score([5, 5, 5, 5, 5]) == pytest.approx(10.0)
    assert rlaif_score([0, 0, 0, 0, 0]) == 0.0


def test_each_weight() -> None:
    # one category at 5, the rest 0: score = weight
    for i, (_, weight) in enumerate(RLAIF_CATEGORIES):
        likert = [0] * 5
        likert[i] = 5
        assert rlaif_score(likert) == pytest.approx(weight)


@pytest.mark.parametrize("likert", [[0, 1, 5, 4], [0, 1, 5, 4, 5, 5], []])
def test_wrong_number_of_values(likert: list[int]) -> None:
    with pytest.raises(ValueError, match="expected 5 Likert values"):
        rlaif_score(likert)


@pytest.mark.parametrize("bad", [6, -1, 2.0, True, "3", None])
def test_values_must_be_integers_0_to_5(bad: object) -> None:
    with pytest.raises(ValueError, match="integers 0–5"):
        rlaif_score([0, 1, bad, 4, 5])  # type: ignore[list-item]


def test_judgment_likert_order_matches_the_weights() -> None:
    j = RlaifJudgment(chain_of_thought_reasoning="r", script_valid=True, refusal=False,
                      dialect_comprehension=0,
                      factual_correctness=1, content_completeness=5, response_clarity=4, appropriate_length=5,
                      confidence=3)
    likert = [getattr(j, name) for name, _ in RLAIF_CATEGORIES]
    assert likert == [0, 1, 5, 4, 5]
    assert rlaif_score(likert) == pytest.approx(4.7)


def test_schema_requires_every_field_reasoning_first_confidence_last() -> None:
    schema = rlaif_json_schema()
    assert list(schema["properties"]) == ORDER
    assert schema["required"] == ORDER
    assert schema["additionalProperties"] is False
    assert schema["type"] == "object"


def test_schema_field_types_and_bounds() -> None:
    props = rlaif_json_schema()["properties"]
    assert props["chain_of_thought_reasoning"]["type"] == "string"
    assert props["script_valid"]["type"] == props["refusal"]["type"] == "boolean"
    for name, _ in RLAIF_CATEGORIES:
        assert (props[name]["type"], props[name]["minimum"], props[name]["maximum"]) == ("integer", 0, 5)
    assert (props["confidence"]["minimum"], props["confidence"]["maximum"]) == (1, 5)
    assert all("title" not in p for p in props.values())

