"""Query normalisation on real Vashantor strings (SPEC §4 P1): NFC, digits, whitespace, zero-width characters,
`[[SHORT]]` under 4 tokens. Expected outputs written out by hand, code point by code point where NFC matters.

The strings are copied from ../shared/data/vashantor (file and row named per case); the last test checks that
they are still there verbatim."""

from __future__ import annotations

import csv

import pytest

from dialectbias.text import SHORT_TAG, match_key, match_tokens, normalize_query
from shared_data import VASHANTOR, shared_path

NUKTA = "\u09bc"  # NFC splits precomposed য় (U+09DF) and ড় (U+09DC) into base + nukta (composition exclusions)

# (file, row, column, original text, hand-checked match key)
CASES = [
    # Bengali digit ৮ to ASCII, trailing space stripped, precomposed য় (U+09DF) decomposed
    ("Train/Barishal Train Translation.csv", 287, "standard_text", "আজকে প্রা\u09df ৮ দিন পানি নেই ",
     "আজকে প্রা" + "য" + NUKTA + " 8 দিন পানি নেই"),
    # a leading ZWJ dropped; the row mixes decomposed য় (য + nukta) and one precomposed U+09DF: one form after
    ("Train/Barishal Train Translation.csv", 59, "dialect_text",
     "\u200dকমব\u09af\u09bcসী এউক্কা পোলা বা\u09af\u09bcরা\u09af\u09bc ফুডপাতে দৌ\u09a1\u09bcাইতে\u09dfাছে",
     "কমব" + "য" + NUKTA + "সী এউক্কা পোলা বা" + "য" + NUKTA + "রা" + "য" + NUKTA + " ফুডপাতে দৌ" + "ড" + NUKTA
     + "াইতে" + "য" + NUKTA + "াছে"),
    # a ZWNJ after a vowel sign dropped
    ("Train/Chittagong Train Translation.csv", 1491, "dialect_text", "আই আগে নো\u200c চাই", "আই আগে নো চাই"),
    # double space collapsed; precomposed ড় (U+09DC) decomposed
    ("Test/Barishal Test Translation.csv", 3, "standard_text", "আমার ব\u09dc  বোনের আজকে মন ভালো নেই",
     "আমার ব" + "ড" + NUKTA + " বোনের আজকে মন ভালো নেই"),
]


@pytest.mark.parametrize(("source", "row", "column", "text", "expected"), CASES)
def test_match_key_of_real_vashantor_strings(source: str, row: int, column: str, text: str, expected: str) -> None:
    assert match_key(text) == expected


def test_match_key_is_idempotent_and_keeps_the_original() -> None:
    text = CASES[1][3]
    key = match_key(text)
    assert match_key(key) == key
    assert text.startswith("\u200d")  # the caller's string is untouched


def test_match_key_casefolds_latin_inside_bengali() -> None:
    assert match_key("আমার  Wi-Fi\u200b নাই") == "আমার wi-fi নাই"


def test_digits_can_go_to_bengali() -> None:
    assert match_key("আজকে প্রায় 8 দিন", digits="bengali").endswith("৮ দিন")


def test_tokens_keep_vowel_signs_and_nukta() -> None:
    assert match_tokens(CASES[0][3]) == ["আজকে", "প্রা" + "য" + NUKTA, "8", "দিন", "পানি", "নেই"]


def test_a_three_token_query_is_short_and_tagged() -> None:
    # Train/Sylhet row 2: "কেমন আছো ?" has two tokens
    q = normalize_query("কেমন আছো ?")
    assert q.tokens == ("কেমন", "আছো")
    assert q.short
    assert q.tagged == f"কেমন আছো ? {SHORT_TAG}"


def test_a_four_token_query_is_not_short() -> None:
    q = normalize_query("আই আগে নো\u200c চাই")
    assert q.tokens == ("আই", "আগে", "নো", "চাই")
    assert not q.short
    assert q.tagged == "আই আগে নো চাই"


def test_short_threshold_is_configurable() -> None:
    assert normalize_query("আই আগে নো চাই", short_tokens=5).short


def test_the_cases_are_real_vashantor_rows() -> None:
    vashantor = shared_path(*VASHANTOR, why="the provenance check needs it")
    for source, row, column, text, _ in CASES:
        with (vashantor / source).open(encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
        assert rows[row - 2][column] == text, (source, row)
