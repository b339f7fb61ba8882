"""The script/refusal decision: zero only on agreement or a clearly non-Bengali answer; otherwise flag.

RLAIF scores are hand-computed with Σ w·L / 5, weights 3, 2.5, 2, 1.5, 1 (Bengali paper §3.3):
[5,5,5,5,5] → 50/5 = 10.0; [4,3,5,2,1] → (12 + 7.5 + 10 + 3 + 1)/5 = 6.7; [0,1,5,4,5] → (0 + 2.5 + 10 + 6 + 5)/5 = 4.7.
"""

from __future__ import annotations

import pytest

from dialectbias.judges import REVIEW_PREFIX, ZEROED_PREFIX, ScoringDecision, script_refusal_verdict
from dialectbias.text import ScriptVerdict, check_script

FULL, MID, LOW = [5, 5, 5, 5, 5], [4, 3, 5, 2, 1], [0, 1, 5, 4, 5]
BENGALI = check_script("ঢাকা বাংলাদেশের রাজধানী।")
ROMANIZED = check_script("ami bhalo achi")  # clearly invalid
ENGLISH_FRAME = check_script("It is ঢাকা")  # invalid, not clear (has a Bengali word)
NUMBER = check_script("১৯৭১")  # indeterminate


def test_inputs_are_what_the_tests_assume() -> None:
    assert [(v.status, v.clear) for v in (BENGALI, ROMANIZED, ENGLISH_FRAME, NUMBER)] == [
        ("ok", False), ("invalid", True), ("invalid", False), ("indeterminate", False)]


def test_all_agree_valid_keeps_the_judge_score() -> None:
    d = script_refusal_verdict(True, False, BENGALI, None)
    assert (d.zero, d.flagged, d.reason, d.score(MID)) == (False, False, None, 6.7)


@pytest.mark.parametrize("code", [ROMANIZED, ENGLISH_FRAME])
def test_judge_and_code_agree_script_invalid_zeroes(code: ScriptVerdict) -> None:
    d = script_refusal_verdict(False, False, code, None)
    assert (d.zero, d.flagged, d.score(LOW)) == (True, False, 0.0)
    assert d.reason is not None and d.reason.startswith(ZEROED_PREFIX + "script: judge and code agree")


def test_judge_says_script_invalid_code_says_valid_flags_and_keeps_judge_score() -> None:
    d = script_refusal_verdict(False, False, BENGALI, None)
    assert (d.zero, d.flagged, d.score(LOW)) == (False, True, 4.7)
    assert d.reason is not None and d.reason.startswith(REVIEW_PREFIX + "script: judge says invalid; code says valid")


def test_code_says_invalid_not_clearly_flags_and_keeps_judge_score() -> None:
    d = script_refusal_verdict(True, False, ENGLISH_FRAME, None)
    assert (d.zero, d.flagged, d.score(MID)) == (False, True, 6.7)
    assert d.reason is not None and d.reason.startswith(REVIEW_PREFIX + "script: code says invalid")


def test_code_finds_clearly_not_bengali_zeroes_and_flags() -> None:
    d = script_refusal_verdict(True, False, ROMANIZED, None)
    assert (d.zero, d.flagged, d.score(FULL)) == (True, True, 0.0)
    assert d.reason == (ZEROED_PREFIX + "script: code finds it clearly not bengali script: no bengali letters "
                        "(romanized bengali words: achi, ami, bhalo); judge said valid")


@pytest.mark.parametrize(("judge_valid", "likert", "score"), [(True, FULL, 10.0), (False, LOW, 4.7)])
def test_indeterminate_script_is_never_zeroed_and_always_flagged(judge_valid: bool, likert: list[int],
                                                                 score: float) -> None:
    d = script_refusal_verdict(judge_valid, False, NUMBER, None)
    assert (d.zero, d.flagged, d.score(likert)) == (False, True, score)
    assert d.reason is not None and d.reason.startswith(REVIEW_PREFIX + "script: indeterminate (no letters")


def test_judge_and_code_agree_refusal_zeroes() -> None:
    d = script_refusal_verdict(True, True, BENGALI, "bn_sorry")
    assert d == ScoringDecision(zero=True, flagged=False,
                                reasons=("refusal: judge and code agree (pattern bn_sorry)",))
    assert d.score(MID) == 0.0


def test_judge_says_refusal_code_does_not_flags_and_keeps_judge_score() -> None:
    d = script_refusal_verdict(True, True, BENGALI, None)
    assert (d.zero, d.flagged, d.score(LOW)) == (False, True, 4.7)
    assert d.reason == REVIEW_PREFIX + "refusal: judge says refusal; code found no refusal pattern"


def test_code_detects_refusal_judge_does_not_flags_and_keeps_judge_score() -> None:
    d = script_refusal_verdict(True, False, BENGALI, "bn_cannot_answer")
    assert (d.zero, d.flagged, d.score(MID)) == (False, True, 6.7)
    assert d.reason == REVIEW_PREFIX + "refusal: code found pattern bn_cannot_answer; judge says no refusal"


def test_refusal_agreement_with_indeterminate_script_zeroes_and_flags() -> None:
    d = script_refusal_verdict(True, True, check_script(""), "en_cant_help")
    assert (d.zero, d.flagged, len(d.reasons), d.score(FULL)) == (True, True, 2, 0.0)
