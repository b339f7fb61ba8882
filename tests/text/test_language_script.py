"""Language-constraint violations: is an answer in its language's script? (BanglaVerse §6, App. H; SPEC §4 P5)"""

from __future__ import annotations

import pytest

from dialectbias.text import (
    LANGUAGE_SCRIPTS,
    dominant_script,
    language_verdict,
    register_language_script,
    script_for_language,
    script_violation,
)

BN_CAPTION = "ছবিতে কৃষক গরুর হাল দিয়ে জমি চাষ করছেন, যা গ্রামীণ কৃষির ঐতিহ্য।"
HI_CAPTION = "तस्वीर में एक किसान बैलों से खेत जोत रहा है, जो ग्रामीण कृषि की परंपरा है।"
UR_CAPTION = "تصویر میں ایک کسان بیلوں کے ساتھ کھیت میں ہل چلا رہا ہے۔"
EN_CAPTION = "A farmer is ploughing the field with oxen, a tradition of rural agriculture."


@pytest.mark.parametrize(
    ("language", "script"),
    [("standard", "bengali"), ("bengali", "bengali"), ("bn", "bengali"), ("Sylhet", "bengali"),
     ("chittagong", "bengali"), ("hindi", "devanagari"), ("hi", "devanagari"), ("urdu", "urdu"),
     ("english", "latin"), ("en", "latin"), ("bavarian", "german")],
)
def test_script_for_language_maps_languages_and_dialects(language: str, script: str) -> None:
    assert script_for_language(language) == script


def test_standard_follows_the_benchmarks_standard_language() -> None:
    assert script_for_language("standard", standard="german") == "german"


def test_experiment_dialect_additions_map_to_their_language() -> None:
    assert script_for_language("dhakaiya", extra={"bn": ["dhakaiya"]}) == "bengali"


def test_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"'klingon'.*register_language_script"):
        script_for_language("klingon")


def test_registered_language_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(LANGUAGE_SCRIPTS, "nepali", "latin")  # removed again after the test
    register_language_script("nepali", "devanagari")
    assert script_violation("यो एउटा किसान हो।", "nepali") is False
    with pytest.raises(ValueError, match="unknown script"):
        register_language_script("x", "klingon")


# Real-looking model outputs: (answer, requested language, violation?)
OUTPUTS = [
    (BN_CAPTION, "standard", False),
    ("হেই জাগাত মেলা মাইনষে থাহে, বেক্কে ধান চাষ করে।", "noakhali", False),
    ("batsman", "standard", True),  # App. H Sports_010: Gemma3-4B answered in English
    ("The image shows a farmer ploughing a field with oxen.", "bengali", True),
    ("chobite ekta krishok hal chash korche", "sylhet", True),  # romanized Bengali
    ("**উত্তর:** মিডফিল্ডার", "standard", False),  # markdown
    ('Index: 2, Answer: "মিডফিল্ডার"', "standard", False),  # VQA scaffolding is a short tolerated term
    ("১৯৭১ সালে বাংলাদেশ স্বাধীন হয়।", "standard", False),
    ("- ফুচকা\n- চটপটি\n- ঝালমুড়ি", "bengali", False),  # markdown list
    ("এটি একটি Bangladesh Premier League ম্যাচের ছবি।", "standard", False),  # proper noun
    ("तस्वीर में बैलों से खेत जोतता किसान", "standard", True),  # Hindi where Bengali was asked
    (HI_CAPTION, "hindi", False),
    ("तस्वीर में एक cricket खिलाड़ी बल्लेबाज़ी कर रहा है।", "hindi", False),
    ("yeh ek kisan hai jo khet jot raha hai", "hindi", True),  # romanized Hindi
    ("ছবিতে একজন কৃষক", "hindi", True),  # Bengali where Hindi was asked
    (UR_CAPTION, "urdu", False),
    ("۱۹۷۱ میں بنگلہ دیش آزاد ہوا۔", "urdu", False),  # Extended Arabic-Indic digits inside Urdu text
    ("**جواب:** ٹیپو سلطان", "urdu", False),  # Urdu-specific letter ٹ, markdown
    ("तस्वीर में एक किसान", "urdu", True),  # Devanagari where Urdu was asked
    ("The farmer is ploughing.", "urdu", True),
    (EN_CAPTION, "english", False),
    ("The dish is **fuchka** (ফুচকা), a popular street food in Dhaka.", "english", False),
    ("ছবিতে কৃষক গরুর হাল দিয়ে জমি চাষ করছেন", "english", True),
]


@pytest.mark.parametrize(("text", "language", "violation"), OUTPUTS)
def test_violation_on_model_outputs(text: str, language: str, violation: bool) -> None:
    assert script_violation(text, language) is violation, language_verdict(text, language).reason


@pytest.mark.parametrize("text", ["", "   ", "42", "১৯৭১", "۱۹۷۱", "١٢٣", "१९७१", "🎉 !!", "**3**"])
@pytest.mark.parametrize("language", ["standard", "hindi", "urdu", "english"])
def test_no_letters_is_indeterminate_in_every_language(text: str, language: str) -> None:
    # digits of every script (Bengali, Extended Arabic-Indic, Arabic-Indic, Devanagari) are not letters
    assert script_violation(text, language) is None


def test_english_in_bengali_answer_below_and_above_threshold() -> None:
    # 'he is' holds grammar words, so it is not an embedded term and its 4 Latin letters count.
    # ঢাকা (ঢ া ক া) 4 Bengali vs 4 Latin → share 0.5 < 0.6: violation
    below = language_verdict("ঢাকা he is", "standard")
    assert (below.share, script_violation("ঢাকা he is", "standard")) == (0.5, True)
    # ঢাকা 4 + শহর 3 = 7 Bengali vs 4 Latin → 7/11 ≈ 0.64 ≥ 0.6: no violation
    above = language_verdict("ঢাকা শহর he is", "standard")
    assert above.share == pytest.approx(7 / 11)
    assert script_violation("ঢাকা শহর he is", "standard") is False
    # the threshold is the caller's: at 0.7 the same answer is a violation
    assert script_violation("ঢাকা শহর he is", "standard", threshold=0.7) is True


def test_technical_terms_rule_is_reused_for_hindi_and_urdu() -> None:
    # 'machine learning' is a two-word term: tolerated in Hindi as in Bengali; off with max_term_words=0
    hi = "यह machine learning का उदाहरण है"
    assert language_verdict(hi, "hindi").terms == ("machine learning",)
    assert script_violation(hi, "hindi") is False
    # यह 2 + का 2 + उदाहरण 6 + है 2 = 12 Devanagari vs 15 Latin → 12/27 < 0.6
    assert language_verdict(hi, "hindi", max_term_words=0).share == pytest.approx(12 / 27)
    assert script_violation(hi, "hindi", max_term_words=0) is True
    assert script_violation("یہ AI کی مثال ہے", "urdu") is False


def test_an_english_chain_of_thought_is_a_violation_pass_the_answer_only() -> None:
    cot = ('Step 1: The image shows a football player in a red jersey. Step 2: He plays in midfield. '
           'Final Answer: Index: 2, Answer: "মিডফিল্ডার"')
    assert script_violation(cot, "standard") is True
    assert script_violation("মিডফিল্ডার", "standard") is False


@pytest.mark.parametrize(
    ("text", "script"),
    [(BN_CAPTION, "bengali"), (HI_CAPTION, "devanagari"), (UR_CAPTION, "arabic"), (EN_CAPTION, "latin"),
     ("DNA হলো জীবের বংশগতির তথ্য", "bengali"), ("The dish is ফুচকা", "latin"),
     ("Это фотография", "cyrillic"), ("படம்", "tamil"), ("写真", "cjk"), ("Grüße", "latin"),
     ("cafe\u0301", "latin")],
)
def test_dominant_script(text: str, script: str) -> None:
    assert dominant_script(text) == script


@pytest.mark.parametrize("text", ["", "১৯৭১ ۱۹۷۱ 1971", "🎉", "**"])
def test_dominant_script_without_letters(text: str) -> None:
    assert dominant_script(text) is None


def test_urdu_in_arabic_presentation_forms() -> None:
    # کسان written with presentation-form letters (ﮐ ﺴ ﺎ ﻥ), as some Nastaliq text is: still Arabic script
    text = "\ufb90\ufeb4\ufe8e\ufee5"
    assert dominant_script(text) == "arabic"
    assert script_violation(text, "urdu") is False
    assert script_violation(text, "hindi") is True


def test_dominant_script_tie_goes_to_first_seen() -> None:
    assert dominant_script("ab কখ") == "latin"
    assert dominant_script("কখ ab") == "bengali"
