"""VQA answer parsing on real-looking outputs in Bengali, Hindi, Urdu and English (issue 12.4, 12.6)."""

from __future__ import annotations

import pytest

from dialectbias.tasks.vlm._parse import clean_caption, match_option, parse_vqa

BN = ["ভুনা খিচুড়ি", "পান্তা ভাত", "চাপ", "পোলাও"]
HI = ["भुनी खिचड़ी", "पंता भात", "चाप", "पुलाव"]
UR = ["بھنی کھچڑی", "پنتا بھات", "چاپ", "پلاؤ"]
EN = ["Bhuna khichuri", "Panta bhat", "Chap", "Polao"]

COT_BN = """Reasoning_En:
Step 1: The image shows a bowl of rice soaked in water with green chillies and onion. Index: 0 looked likely at first.
Step 2: Soaked rice matches "পান্তা ভাত".
Step 3: Khichuri is yellow, chap is meat, polao is dry rice.
Step 4: The dish is panta bhat.

Final Answer: Index: 1, Answer: "পান্তা ভাত"
"""


@pytest.mark.parametrize(("output", "options", "index", "rule", "conflict"), [
    # the exact format, in each language
    ('Index: 1, Answer: "পান্তা ভাত"', BN, 1, "index+text", False),
    ('Index: 1, Answer: "पंता भात"', HI, 1, "index+text", False),
    ('Index: 1, Answer: "پنتا بھات"', UR, 1, "index+text", False),
    ('Index: 1, Answer: "Panta bhat"', EN, 1, "index+text", False),
    # bold / markdown, Bengali digits
    ('**Index:** ১, **Answer:** "পান্তা ভাত"', BN, 1, "index+text", False),
    ('`Index: 3`, Answer: **"पुलाव"**', HI, 3, "index+text", False),
    ("## Answer\n- Index: 2\n- Answer: “چاپ”", UR, 2, "index+text", False),
    # chain of thought: the final answer wins over an index mentioned in the reasoning
    (COT_BN, BN, 1, "index+text", False),
    ("Reasoning_En:\nStep 1: A plate of pulao.\nStep 4: Option 3.\n\n**Final Answer:** Index: 3, Answer: \"Polao\"",
     EN, 3, "index+text", False),
    # missing index: the quoted text decides (exact, normalised, fuzzy)
    ('Answer: "পান্তা ভাত"', BN, 1, "text_exact", False),
    ('Answer: "  panta BHAT. "', EN, 1, "text_normalized", False),
    ('Answer: "पंता  भात"', HI, 1, "text_normalized", False),  # double space
    ('Answer: "پنتا بھاتا"', UR, 1, "text_fuzzy", False),
    ("পান্তা ভাত", BN, 1, "text_exact", False),
    ("উত্তর: পোলাও", BN, 3, "text_exact", False),
    # wrong index with the right text: the text wins (text_wins, the default)
    ('Index: 0, Answer: "পান্তা ভাত"', BN, 1, "text_exact", True),
    ('Index: 2, Answer: "पुलाव"', HI, 3, "text_exact", True),
    # index only
    ("Index: 2", UR, 2, "index", False),
    ("2", EN, 2, "index", False),
    ('Index: 1, Answer: "something else entirely"', EN, 1, "index", False),
])
def test_parse_vqa_reads_the_answer(output: str, options: list[str], index: int, rule: str, conflict: bool) -> None:
    parsed = parse_vqa(output, options)
    assert (parsed.index, parsed.rule, parsed.conflict) == (index, rule, conflict)
    assert parsed.parsed


@pytest.mark.parametrize(("output", "options"), [
    ("I cannot identify the dish in this image.", EN),
    ("দুঃখিত, আমি নিশ্চিত নই।\nছবিটি অস্পষ্ট।", BN),
    ("Index: 7", HI),  # out of range, no text
    ("Reasoning_En:\nStep 1: unclear.\n\nFinal Answer: I am not sure.", UR),
    ("", BN),
])
def test_unparseable_answers_have_no_index(output: str, options: list[str]) -> None:
    parsed = parse_vqa(output, options)
    assert parsed.index is None and parsed.rule == "none" and not parsed.parsed


def test_option_digits_match_as_written_while_index_digits_are_read_in_any_script() -> None:
    places = ["১ম স্থান", "২য় স্থান", "৩য় স্থান", "অংশগ্রহণ"]
    parsed = parse_vqa('Index: ১, Answer: "২য় স্থান"', places)
    assert (parsed.index, parsed.rule, parsed.text_match) == (1, "index+text", "exact")
    assert parse_vqa("सूचकांक: ३", HI).index == 3
    assert parse_vqa("انڈیکس: ۲", UR).index == 2


def test_index_first_lets_the_index_win_and_records_the_conflict() -> None:
    parsed = parse_vqa('Index: 0, Answer: "পান্তা ভাত"', BN, rule="index_first")
    assert (parsed.index, parsed.rule, parsed.conflict, parsed.text_index) == (0, "index", True, 1)


def test_index_first_falls_back_to_the_text_when_the_index_is_missing() -> None:
    assert parse_vqa('Answer: "চাপ"', BN, rule="index_first").index == 2


def test_what_was_read_is_kept() -> None:
    parsed = parse_vqa('Index: 0, Answer: "পান্তা ভাত"', BN)
    assert (parsed.raw_index, parsed.raw_text, parsed.text_match) == (0, "পান্তা ভাত", "exact")


def test_fuzzy_match_needs_the_cutoff_and_a_unique_best() -> None:
    assert match_option("Panta bhaat", EN) == (1, "fuzzy")
    assert match_option("Panta bhaat", EN, fuzzy_cutoff=0.99) == (None, None)
    assert match_option("ab", ["ax", "ay"]) == (None, None)  # two options tie


def test_clean_caption_strips_labels_quotes_and_markdown() -> None:
    assert clean_caption('**Caption:** "গরম গরম ভুনা খিচুড়ি।"') == "গরম গরম ভুনা খিচুড়ি।"
    assert clean_caption("कैप्शन: नदी के किनारे लोग।") == "नदी के किनारे लोग।"
    assert clean_caption("  دریا کے کنارے لوگ۔ ") == "دریا کے کنارے لوگ۔"
