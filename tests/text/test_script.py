"""Script share and the deterministic script-validity verdict (SPEC §4 P3 Script validity)."""

from __future__ import annotations

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
    assert (v.ok, v.share) == (True, 1.0)


def test_tolerance_is_what_lets_latin_heavy_answer_pass() -> None:
    # Latin letters: JavaScript 10 + TypeScript 10 = 20; Bengali: ও 1, দুটোই 5, ভাষা 4, যা 2,
    # ওয়েবে 6 (য় is য + nukta under NFC), চলে 3 = 21 → raw share 21/41 ≈ 0.51 < 0.6.
    # 2 of 8 word tokens (25% ≤ 30%) are tolerated → share 21/21 = 1.0
    text = "JavaScript ও TypeScript দুটোই ভাষা, যা ওয়েবে চলে"
    assert script_share(text, "bengali") == (pytest.approx(21 / 41), 41)
    assert check_script(text).ok


def test_too_many_latin_tokens_are_not_tolerated() -> None:
    # Python, JavaScript are 2 of 4 tokens (50% > 30%) → raw share (ও 1 + শিখুন 5)/22 = 6/22
    v = check_script("Python ও JavaScript শিখুন")
    assert (v.ok, v.share) == (False, pytest.approx(6 / 22))


def test_lowercase_english_words_are_not_tolerated() -> None:
    # আমি 3 + করি 3 Bengali, email 5 + check 5 Latin → 6/16
    assert check_script("আমি email check করি").share == pytest.approx(6 / 16)


@pytest.mark.parametrize("text", ["ami bhat khai", "Ami Bhat Khai"])
def test_romanized_bengali_fails(text: str) -> None:
    v = check_script(text)
    assert (v.ok, v.share, v.letters) == (False, 0.0, 11)


@pytest.mark.parametrize("text", ["", "১২৩ 45 !?"])
def test_no_letters_is_not_ok(text: str) -> None:
    v = check_script(text)
    assert (v.ok, v.letters, v.reason) == (False, 0, "no letters")


@pytest.mark.parametrize(("threshold", "ok"), [(0.5, True), (0.6, False)])
def test_threshold_is_configurable(threshold: float, ok: bool) -> None:
    # share 3/6 = 0.5 (lowercase 'abc' is not tolerated)
    assert check_script("আমি abc", threshold=threshold).ok is ok


def test_german_text_passes_german_check() -> None:
    assert check_script("Die Hauptstadt von Bangladesch ist Dhaka.", script="german").ok


def test_bengali_text_fails_german_check() -> None:
    assert not check_script("ঢাকা বাংলাদেশের রাজধানী।", script="german").ok
