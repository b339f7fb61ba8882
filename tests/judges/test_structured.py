"""Structured judge output: validate, repair, or fail with a reason (never a silent score)."""

from __future__ import annotations

import json

import pytest

from dialectbias.judges import RlaifJudgment, parse_structured, reask_messages

VALID = {"chain_of_thought_reasoning": "লিপি বাংলা; প্রশ্ন বোঝা গেছে।", "script_valid": True, "refusal": False,
         "dialect_comprehension": 4, "factual_correctness": 3, "content_completeness": 5,
         "response_clarity": 2,
         "appropriate_length": 1, "confidence": 4}
TEXT = json.dumps(VALID, ensure_ascii=False)


def parse(text: str):
    return parse_structured(text, RlaifJudgment)


def test_valid_json_is_ok() -> None:
    result = parse(TEXT)
    assert result.status == "ok" and result.error is None
    assert result.value == RlaifJudgment(**VALID)


def test_surrounding_whitespace_is_still_ok() -> None:
    assert parse(f"\n  {TEXT}\n").status == "ok"


@pytest.mark.parametrize("text", [f"```json\n{TEXT}\n```", f"```\n{TEXT}\n```"])
def test_code_fence_is_repaired(text: str) -> None:
    result = parse(text)
    assert result.status == "repaired"
    assert result.value == RlaifJudgment(**VALID)


def test_text_around_the_object_is_repaired() -> None:
    result = parse(f"এখানে আমার রায়: {TEXT} ধন্যবাদ।")
    assert result.status == "repaired" and result.value == RlaifJudgment(**VALID)


def test_trailing_comma_is_repaired() -> None:
    result = parse(TEXT[:-1] + ",\n}")
    assert result.status == "repaired" and result.value == RlaifJudgment(**VALID)


def test_truncated_json_fails_with_the_reason() -> None:
    result = parse(TEXT[: len(TEXT) // 2])
    assert result.status == "failed" and result.value is None
    assert result.error is not None and result.error.startswith("invalid JSON")


def test_out_of_range_likert_fails_naming_the_field() -> None:
    result = parse(json.dumps({**VALID, "factual_correctness": 6}))
    assert result.status == "failed" and result.value is None
    assert result.error is not None and result.error.startswith("factual_correctness:")


def test_confidence_zero_fails() -> None:
    result = parse(json.dumps({**VALID, "confidence": 0}))
    assert result.status == "failed" and result.error is not None and result.error.startswith("confidence:")


def test_missing_field_fails() -> None:
    result = parse(json.dumps({k: v for k, v in VALID.items() if k != "confidence"}))
    assert result.status == "failed" and "confidence" in (result.error or "")


def test_extra_field_fails() -> None:
    assert parse(json.dumps({**VALID, "score": 7})).status == "failed"


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_output_fails(text: str) -> None:
    assert parse(text).model_dump() == {"value": None, "status": "failed", "error": "empty output", "failure": "parse"}


def test_prose_without_json_fails() -> None:
    result = parse("Sure! Here is my verdict: {score: five, reasoning: 'looks fine'")
    assert result.status == "failed" and result.error is not None


def test_reask_keeps_the_conversation_and_names_the_error() -> None:
    original = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    messages = reask_messages(original, "bad", "invalid JSON: x")
    assert messages[:2] == original
    assert messages[2] == {"role": "assistant", "content": "bad"}
    assert messages[3]["role"] == "user" and "invalid JSON: x" in messages[3]["content"]
    assert original == [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]  # not mutated
