"""Normalisation for matching and tokenisation that keeps Bengali combining marks."""

from __future__ import annotations

import pytest

from dialectbias.text import normalize_text, tokenize


def test_normalize_composes_to_nfc() -> None:
    # ক + ে (U+09C7) + া (U+09BE) composes to ক + ো (U+09CB)
    assert normalize_text("ক\u09c7\u09be") == "ক\u09cb"


def test_normalize_bengali_digits_to_ascii_by_default() -> None:
    assert normalize_text("৪৫ টাকা") == "45 টাকা"


def test_normalize_ascii_digits_to_bengali() -> None:
    assert normalize_text("Room 12", digits="bengali") == "Room ১২"


def test_normalize_keep_digits() -> None:
    assert normalize_text("১২ 34", digits="keep") == "১২ 34"


def test_normalize_rejects_unknown_digit_mode() -> None:
    with pytest.raises(ValueError, match="digits"):
        normalize_text("x", digits="roman")  # type: ignore[arg-type]


@pytest.mark.parametrize("zw", ["\u200b", "\u200c", "\u200d", "\ufeff", "\u2060"])
def test_normalize_removes_zero_width_characters(zw: str) -> None:
    assert normalize_text(f"র{zw}্য") == "র্য"


def test_normalize_collapses_and_strips_whitespace() -> None:
    assert normalize_text("  a\t\n b\u00a0 c ") == "a b c"


def test_tokenize_keeps_bengali_vowel_signs_and_drops_danda() -> None:
    assert tokenize("আমি ভাত খাই।") == ["আমি", "ভাত", "খাই"]


def test_tokenize_splits_on_double_danda_and_punctuation() -> None:
    assert tokenize("এক॥দুই, (তিন)!") == ["এক", "দুই", "তিন"]


def test_tokenize_keeps_numbers_as_tokens() -> None:
    assert tokenize("১২৩ kg, 4.5") == ["১২৩", "kg", "4", "5"]


def test_tokenize_keeps_zwj_inside_a_word() -> None:
    assert tokenize("র\u200d্যাব এসেছে") == ["র\u200d্যাব", "এসেছে"]


def test_tokenize_splits_hyphenated_latin() -> None:
    assert tokenize("Wi-Fi") == ["Wi", "Fi"]
