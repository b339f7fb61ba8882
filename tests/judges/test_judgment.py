"""`evaluate_judgment`: one record for any rubric (issue 8 item 2): ceilings, code-only checks, review."""

from __future__ import annotations

import json

from dialectbias.judges import CodeChecks, evaluate_judgment, load_rubric, parse_rubric, parse_structured, run_checks
from dialectbias.text import check_script

FIDELITY = load_rubric("translation_fidelity")
ANSWER = {"chain_of_thought_reasoning": "…", "exempt_differences_found": "", "inaccurate_words": "a, b",
          "inaccuracy_count": 2, "meaning_preserved": "partial", "score_integer": 9, "score_rationale": "…"}


def test_a_ceiling_clips_records_flags_and_sends_to_review() -> None:
    parsed = parse_structured(json.dumps(ANSWER), FIDELITY.validator())
    v = evaluate_judgment(FIDELITY, parsed, CodeChecks(), review_threshold=3)
    assert (v.score, v.parsed["score_integer"], v.clipped) == (6.0, 6, {"score_integer": (9, 6)})
    assert v.flagged and v.needs_review and not v.zeroed
    assert v.reason == "review: ceiling: score_integer 9 clipped to 6 (inaccuracy_count == 2)"


def test_code_checks_without_judge_fields_flag_and_never_zero() -> None:
    rubric = parse_rubric("name: plain\nfields: [{name: quality, type: integer, minimum: 0, maximum: 4}]\n"
                          "score: mean\nchecks: [script, refusal]\n", "plain.yaml")
    parsed = parse_structured('{"quality": 4}', rubric.validator())
    v = evaluate_judgment(rubric, parsed, run_checks(rubric.checks, "ami bhalo achi"), review_threshold=3)
    assert (v.score, v.zeroed, v.flagged, v.needs_review) == (4.0, False, True, True)
    assert v.flags == ["script: code says invalid (" + check_script("ami bhalo achi").reason
                       + "); the rubric has no judge verdict"]
    assert v.checks["refusal"] is None and v.checks["script"]["status"] == "invalid"


def test_unparsed_is_unscored_with_the_error() -> None:
    rubric = load_rubric("rlaif")
    v = evaluate_judgment(rubric, parse_structured("nope", rubric.validator()), CodeChecks(), review_threshold=3)
    assert (v.score, v.parse_status, v.needs_review, v.parsed) == (None, "failed", True, None)
    assert v.reason == "invalid JSON: Expecting value at position 0"
