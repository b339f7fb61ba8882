"""Script share and the deterministic script-validity verdict (SPEC §4 P3 Script validity)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectbias.text import check_script, script_share


def test_script_share_counts_vowel_signs_as_letters() -> None:
    # আ, ম, ি (vowel sign, Mc) → 3 letters, all Bengali
    assert script_share("আমি", "bengali") == (1.0, 3)


def test_script_share_mixed_text() -> None:
    # 3 Bengali + 3 Latin letters → 3/6
    assert script_share("আমি abc", "bengali") == (0.5, 6)


def test_script_share_ignores_digits() -> None:
    assert script_share("১২৩ 456 আমি", "bengali") == (1.0, 3)


def test_script_share_without_letters() -> None:
    assert script_share("123 ?!", "bengali") == (0.0, 0)


def test_german_is_latin_including_umlaut_and_eszett() -> None:
    assert script_share("Grüße", "german") == (1.0, 5)


@pytest.mark.parametrize(
    ("text", "script"), [("नमस्ते", "devanagari"), ("ٹھیک ہے", "arabic"), ("ٹھیک ہے", "urdu")]
)
def test_other_registered_scripts(text: str, script: str) -> None:
    assert script_share(text, script)[0] == 1.0


def test_unknown_script_raises() -> None:
    with pytest.raises(ValueError, match="klingon"):
        script_share("x", "klingon")


def test_bengali_answer_passes() -> None:
    assert check_script("ঢাকা বাংলাদেশের রাজধানী।").ok


def test_bengali_with_technical_terms_passes() -> None:
    v = check_script("DNA হলো জীবের বংশগতির তথ্য বহনকারী অণু। Python একটি প্রোগ্রামিং ভাষা।")
    assert (v.ok, v.share, v.terms) == (True, 1.0, ("DNA", "Python"))


def test_tolerance_is_what_lets_latin_heavy_answer_pass() -> None:
    # Latin letters: JavaScript 10 + TypeScript 10 = 20; Bengali: ও 1, দুটোই 5, ভাষা 4, যা 2,
    # ওয়েবে 6 (য় is য + nukta under NFC), চলে 3 = 21 → raw share 21/41 ≈ 0.51 < 0.6.
    # both Latin words are embedded terms → share 21/21 = 1.0
    text = "JavaScript ও TypeScript দুটোই ভাষা, যা ওয়েবে চলে"
    assert script_share(text, "bengali") == (pytest.approx(21 / 41), 41)
    assert check_script(text).ok


def test_lowercase_technical_terms_are_tolerated() -> None:
    # আমি 3 + করি 3 Bengali letters count; 'email check' (2 words, no grammar word) is an embedded term
    v = check_script("আমি email check করি")
    assert (v.status, v.share, v.terms) == ("ok", 1.0, ("email check",))


def test_latin_run_longer_than_max_term_words_counts_as_text() -> None:
    # ব্যবহার 7 + করা 3 + হয় 3 (হ য ়) = 13 Bengali; machine 7 learning 8 model 5 training 8 pipeline 8 = 36
    text = "machine learning model training pipeline ব্যবহার করা হয়"
    assert check_script(text).share == pytest.approx(13 / 49)
    assert check_script(text, max_term_words=5).ok


def test_english_grammar_word_breaks_a_term() -> None:
    # 'It is' has grammar words → counted: ঢাকা 4 Bengali vs It 2 + is 2 Latin → 4/8
    v = check_script("It is ঢাকা")
    assert (v.status, v.share, v.terms) == ("invalid", 0.5, ())


def test_connectors_only_inside_capitalised_names() -> None:
    assert check_script("Theory of Relativity আইনস্টাইনের আবিষ্কার").terms == ("Theory of Relativity",)
    assert check_script("the answer: ঢাকা").terms == ()


def test_acronyms_are_never_grammar_or_romanized_words() -> None:
    # 'IT', 'AR' look like 'it' and romanized 'ar' but are all-caps acronyms
    assert check_script("IT ও AR প্রযুক্তি").terms == ("IT", "AR")


def test_max_term_words_zero_turns_tolerance_off() -> None:
    # এটি 3 + একটি 4 Bengali, software 8 Latin → 7/15
    v = check_script("এটি একটি software।", max_term_words=0)
    assert (v.status, v.share) == ("invalid", pytest.approx(7 / 15))


@pytest.mark.parametrize("text", ["ami bhat khai", "Ami Bhat Khai"])
def test_romanized_bengali_is_clearly_invalid(text: str) -> None:
    v = check_script(text)
    assert (v.ok, v.clear, v.share, v.letters) == (False, True, 0.0, 11)
    assert "romanized bengali words: ami" in v.reason


def test_bare_latin_term_is_invalid_but_not_clear() -> None:
    v = check_script("Dhaka")
    assert (v.status, v.clear, v.reason) == ("invalid", False, "no bengali letters, only Latin terms: Dhaka")


@pytest.mark.parametrize("text", ["", "১২৩ 45 !?", "১৯৭১", "64", "৬৪"])
def test_no_letters_is_indeterminate(text: str) -> None:
    v = check_script(text)
    assert (v.status, v.ok, v.clear, v.letters) == ("indeterminate", None, False, 0)
    assert v.reason.startswith("no letters")


@pytest.mark.parametrize(("threshold", "ok"), [(0.5, True), (0.6, False)])
def test_threshold_is_configurable(threshold: float, ok: bool) -> None:
    # আমি 3 Bengali, নমস (Devanagari न म स) 3 never tolerated → share 3/6 = 0.5
    assert check_script("আমি नमस", threshold=threshold).ok is ok


def test_german_text_passes_german_check() -> None:
    assert check_script("Die Hauptstadt von Bangladesch ist Dhaka.", script="german").ok


def test_bengali_text_fails_german_check() -> None:
    v = check_script("ঢাকা বাংলাদেশের রাজধানী।", script="german")
    assert (v.ok, v.clear) == (False, True)


CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "script_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[f"{i:02d}-{c['kind']}" for i, c in enumerate(CASES)])
def test_case_table(case: dict[str, Any]) -> None:
    v = check_script(case["answer"])
    assert (v.status, v.clear) == (case["status"], case.get("clear", False)), v.reason


def test_case_table_covers_every_kind() -> None:
    kinds = " ".join(c["kind"] for c in CASES)
    assert len(CASES) >= 30
    for kind in ("bengali only", "lower-case term", "numbers only", "bengali digits", "romanized", "english with",
                 "devanagari", "urdu", "mixed", "empty", "whitespace", "emoji", "punctuation"):
        assert kind in kinds, kind
