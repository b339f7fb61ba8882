"""Issue 24 item 2: a numeric value outside its field's range is re-asked (`out_of_range: reask`, the default and
the papers' procedure) or clipped (`out_of_range: clip`: the original kept in `clipped`, flagged, sent to review),
per rubric and per field; the policy is part of a judge request's identity, never of its prompt or schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from dialectbias.errors import ConfigError
from dialectbias.judges import (
    CodeChecks,
    Rubric,
    evaluate_judgment,
    judge_answer,
    load_rubric,
    override_value,
    parse_structured,
    reevaluate_judgment,
    scoring_fingerprint,
)
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec

HUGE = 1023984765  # what llama.cpp's grammar let through for a 0–5 field (issue 24)


def rubric(**changes: Any) -> Rubric:
    data: dict[str, Any] = {
        "name": "ab", "score": "weighted_sum", "confidence": True,
        "fields": [{"name": "a", "type": "integer", "minimum": 0, "maximum": 5, "weight": 3},
                   {"name": "b", "type": "number", "minimum": 0, "maximum": 1, "weight": 1},
                   {"name": "ok", "type": "boolean"}],
        "ceilings": [{"field": "a", "max": 2, "when": {"field": "ok", "value": False}}]}
    return Rubric.model_validate(data | changes)


def answer(**values: Any) -> str:
    return json.dumps({"a": 4, "b": 0.5, "ok": True, "confidence": 4, **values})


def judged(r: Rubric, text: str, threshold: int = 2) -> Any:
    return evaluate_judgment(r, parse_structured(text, r.validator()), CodeChecks(), review_threshold=threshold)


def test_reask_is_the_default_and_an_out_of_range_value_fails_validation() -> None:
    r = rubric()
    assert r.out_of_range == "reask" and r.answer_rule() is None
    parsed = parse_structured(answer(a=HUGE), r.validator())
    assert (parsed.status, parsed.failure) == ("failed", "values")
    assert parsed.error == "a: Input should be less than or equal to 5"


def test_clip_clips_to_the_bound_keeps_the_original_and_sends_to_review() -> None:
    r = rubric(out_of_range="clip")
    values = judged(r, answer(a=HUGE, b=-0.25))
    assert values.parse_status == "ok" and values.score == pytest.approx(3 * 5 / 5 + 1 * 0 / 1)
    assert values.clipped == {"a": (HUGE, 5), "b": (-0.25, 0.0)}
    assert values.flags == [f"out of range: a {HUGE} clipped to 5", "out of range: b -0.25 clipped to 0"]
    assert values.flagged and values.needs_review and values.reason is not None
    assert values.parsed is not None and (values.parsed["a"], values.parsed["b"]) == (5, 0.0)
    assert isinstance(values.parsed["a"], int)
    # the judge's own answer is recoverable from what is stored
    assert judge_answer(values.parsed, values.clipped)["a"] == HUGE


def test_an_answer_in_range_is_untouched_under_clip() -> None:
    values = judged(rubric(out_of_range="clip"), answer())
    assert values.clipped == {} and values.flags == [] and not values.flagged and not values.needs_review
    assert values.score == pytest.approx(3 * 4 / 5 + 0.5)


def test_the_confidence_is_clipped_too_and_stored_clipped() -> None:
    values = judged(rubric(out_of_range="clip"), answer(confidence=HUGE))
    assert values.confidence == 5 and values.clipped == {"confidence": (HUGE, 5)}
    assert values.parsed is not None and values.parsed["confidence"] == 5
    assert values.flags == [f"out of range: confidence {HUGE} clipped to 5"] and values.needs_review
    low = judged(rubric(out_of_range="clip"), answer(confidence=-7))
    assert low.confidence == 1 and low.needs_review  # clipped to 1 ≤ the threshold, and flagged anyway


def test_a_non_numeric_invalid_answer_is_still_reasked_under_clip() -> None:
    r = rubric(out_of_range="clip")
    for text in (answer(a="five"), answer(a=2.5), answer(b=float("nan")), answer(b=float("inf")),
                 answer(confidence="high")):
        parsed = parse_structured(text, r.validator())
        assert (parsed.status, parsed.failure) == ("failed", "values"), text


def test_a_ceiling_reads_the_clipped_value_and_the_original_stays_the_judges() -> None:
    values = judged(rubric(out_of_range="clip"), answer(a=HUGE, ok=False))
    assert values.clipped == {"a": (HUGE, 2)}
    assert values.flags == [f"out of range: a {HUGE} clipped to 5", "ceiling: a 5 clipped to 2 (ok == false)"]
    assert values.parsed is not None and values.parsed["a"] == 2


def test_a_field_policy_overrides_the_rubrics() -> None:
    fields = [{"name": "a", "type": "integer", "minimum": 0, "maximum": 5, "weight": 3, "out_of_range": "reask"},
              {"name": "b", "type": "number", "minimum": 0, "maximum": 1, "weight": 1},
              {"name": "ok", "type": "boolean"}]
    r = rubric(out_of_range="clip", fields=fields)
    assert r.answer_rule() == "out_of_range clip: b, confidence"
    assert parse_structured(answer(a=HUGE), r.validator()).failure == "values"
    assert judged(r, answer(b=7)).clipped == {"b": (7, 1.0)}
    only_b = rubric(fields=[{**fields[0], "out_of_range": None}, {**fields[1], "out_of_range": "clip"}, fields[2]])
    assert only_b.answer_rule() == "out_of_range clip: b"
    assert parse_structured(answer(confidence=HUGE), only_b.validator()).failure == "values"


def test_a_one_sided_range_clips_at_its_bound() -> None:
    r = Rubric.model_validate({"name": "count", "score": "none", "out_of_range": "clip",
                               "fields": [{"name": "n", "type": "integer", "minimum": 0}]})
    values = evaluate_judgment(r, parse_structured('{"n": -3}', r.validator()), CodeChecks(), review_threshold=0)
    assert values.clipped == {"n": (-3, 0)}
    above = evaluate_judgment(r, parse_structured(f'{{"n": {HUGE}}}', r.validator()), CodeChecks(),
                              review_threshold=0)
    assert above.clipped == {} and above.parsed == {"n": HUGE}  # no maximum: nothing to clip to


def test_rubric_errors_name_the_key() -> None:
    with pytest.raises(ValidationError, match="out_of_range"):
        rubric(out_of_range="truncate")
    with pytest.raises(ValidationError, match=r"only integer and number fields take 'out_of_range'"):
        rubric(fields=[{"name": "ok", "type": "boolean", "out_of_range": "clip"}])
    with pytest.raises(ValidationError, match="n has no minimum or maximum to clip to"):
        Rubric.model_validate({"name": "x", "score": "none",
                               "fields": [{"name": "n", "type": "number", "out_of_range": "clip"}]})


def test_a_rubric_file_names_the_line_of_a_bad_policy(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("name: r\nscore: mean\nout_of_range: trim\nfields:\n"
                    "  - {name: a, type: integer, minimum: 0, maximum: 5}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_rubric(path)
    assert "line 3" in str(exc.value) and "out_of_range" in str(exc.value) and "'reask' or 'clip'" in str(exc.value)


def test_the_policy_changes_the_request_id_not_the_prompt_or_the_cache_key() -> None:
    reask, clip = load_rubric("rlaif"), load_rubric("rlaif").model_copy(update={"out_of_range": "clip"})
    assert reask.question() == clip.question() and reask.json_schema() == clip.json_schema()
    assert reask.scale_text() == clip.scale_text()
    judge = OpenAIModelConfig(id="j", model="m", base_url="http://127.0.0.1:1/v1")

    def spec(r: Rubric) -> RequestSpec:
        return RequestSpec(stage="judge", model=judge, item_id="q01", variant="sylhet", template="t",
                           messages=[{"role": "user", "content": "হ্যাঁ"}], json_schema=r.json_schema(),
                           answer_rule=r.answer_rule())

    a, b = spec(reask).to_row(), spec(clip).to_row()
    assert a["cache_key"] == b["cache_key"] and a["request_id"] != b["request_id"]
    # the default adds nothing: a store built before the policy existed keeps its request ids
    assert a["request_id"] == RequestSpec(stage="judge", model=judge, item_id="q01", variant="sylhet",
                                          template="t", messages=[{"role": "user", "content": "হ্যাঁ"}],
                                          json_schema=reask.json_schema()).request_id()


def test_a_stored_clipped_judgment_is_refused_under_reask_and_rescored_under_clip() -> None:
    clip = rubric(out_of_range="clip")
    stored = judged(clip, answer(a=HUGE))
    assert scoring_fingerprint(clip, review_threshold=2) != scoring_fingerprint(rubric(), review_threshold=2)
    # the default, said or not, leaves the fingerprint as it was before the policy existed: nothing re-scored
    assert scoring_fingerprint(rubric(out_of_range="reask")) == scoring_fingerprint(rubric())
    again = reevaluate_judgment(clip.model_copy(update={"ceilings": []}), stored.parse_status, stored.parsed,
                                stored.clipped, stored.reason, CodeChecks(), review_threshold=2)
    assert again.clipped == {"a": (HUGE, 5)} and again.score == stored.score
    refused = reevaluate_judgment(rubric(), stored.parse_status, stored.parsed, stored.clipped, stored.reason,
                                  CodeChecks(), review_threshold=2)
    assert refused.score is None and refused.needs_review
    assert refused.reason is not None and "does not fit the rubric 'ab' now" in refused.reason
    assert refused.parsed is not None and refused.parsed["a"] == HUGE  # kept as the judge gave it


def test_a_human_override_of_a_clipped_judgment_is_scored_from_the_humans_values() -> None:
    clip = rubric(out_of_range="clip")
    stored = judged(clip, answer(a=HUGE, confidence=HUGE))
    assert stored.parsed is not None
    value = override_value(clip, judge_answer(stored.parsed, stored.clipped), {"a": 1, "b": 1.0}, None)
    assert value["fields"] == {"a": 1, "b": 1.0} and value["score"] == pytest.approx(3 * 1 / 5 + 1)
    assert "clipped" not in value  # the human's values are in range: nothing clipped
    with pytest.raises(ValueError, match="a: 9 is outside 0–5"):  # a human's value is never clipped
        override_value(clip, judge_answer(stored.parsed, stored.clipped), {"a": 9, "b": 1.0}, None)
