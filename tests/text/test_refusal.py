"""Refusal patterns per language, matched only near the start of a response."""

from __future__ import annotations

import pytest

from dialectbias.text import detect_refusal


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("আমি দুঃখিত, এই বিষয়ে তথ্য নেই।", "bn_sorry"),
        ("দু:খিত, জানি না।", "bn_sorry"),
        ("আমি এই প্রশ্নের উত্তর দিতে পারছি না।", "bn_cannot_answer"),
        ("এর উত্তর দিতে পারব না।", "bn_cannot_answer"),
        ("আমি বুঝতে পারছি না আপনি কী জানতে চাইছেন।", "bn_dont_understand"),
        ("এ বিষয়ে সাহায্য করতে পারছি না।", "bn_cannot_help"),
        ("আমি একটি এআই ভাষা মডেল।", "bn_as_an_ai"),
    ],
)
def test_bengali_refusals(text: str, name: str) -> None:
    assert detect_refusal(text) == name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I can't help with that request.", "en_cant_help"),
        ("I cannot answer this question.", "en_cannot_answer"),
        ("As an AI, I have no opinions.", "en_as_an_ai"),
        ("I'm sorry, but that is not something I know.", "en_sorry_but"),
        ("I am unable to determine that.", "en_unable"),
        ("I don't understand the question.", "en_dont_understand"),
    ],
)
def test_english_refusals(text: str, name: str) -> None:
    assert detect_refusal(text) == name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Es tut mir leid, dazu habe ich keine Informationen.", "de_sorry"),
        ("Ich kann diese Frage leider nicht beantworten.", "de_cannot"),
    ],
)
def test_german_refusals(text: str, name: str) -> None:
    assert detect_refusal(text) == name


def test_match_is_case_insensitive() -> None:
    assert detect_refusal("I CANNOT ANSWER THAT.") == "en_cannot_answer"


def test_curly_apostrophe_matches() -> None:
    assert detect_refusal("I can\u2019t help with that.") == "en_cant_help"


def test_zero_width_chars_do_not_hide_a_refusal() -> None:
    assert detect_refusal("আমি দুঃ\u200cখিত") == "bn_sorry"


def test_earliest_pattern_wins() -> None:
    # 'as an ai' starts at 0, 'i cannot answer' later
    assert detect_refusal("As an AI, I cannot answer that.") == "en_as_an_ai"


@pytest.mark.parametrize(
    "text",
    [
        "ঢাকা বাংলাদেশের রাজধানী।",
        "এই প্রশ্নের উত্তর হলো ঢাকা।",
        "The capital is Dhaka.",
        "Die Hauptstadt ist Dhaka.",
        "",
    ],
)
def test_answers_are_not_refusals(text: str) -> None:
    assert detect_refusal(text) is None


def test_refusal_phrase_after_the_window_is_ignored() -> None:
    text = "ঢাকা বাংলাদেশের রাজধানী। " * 10 + "কেউ বলতে পারে 'আমি দুঃখিত'।"  # আমি starts at char 265 (25 × 10 + 15)
    assert detect_refusal(text) is None


def test_window_is_configurable() -> None:
    text = "ঢাকা বাংলাদেশের রাজধানী। " * 10 + "আমি দুঃখিত"
    assert detect_refusal(text, window=400) == "bn_sorry"
