"""Post-processing of translator outputs on realistic Bengali (and Hindi, Urdu, English) answers."""

from __future__ import annotations

import pytest

from dialectbias.tasks.translate._post import CleanContext, clean_list, clean_text, numbered, prompt_lines

SOURCE = "তুমি কী খেয়েছো?"
TRANSLATION = "তুমি কিতা খাইছো?"
PROMPT = """Translate Standard Bengali into the Sylhet dialect of Bengali.

Standard Bengali: আমি বাজারে যাচ্ছি।
Sylhet dialect: আমি বাজারো যাইরাম।

Standard Bengali: তুমি কী খেয়েছো?
Sylhet dialect:"""
LABELS = ("Standard Bengali:", "Sylhet dialect:")
CTX = CleanContext(script="bengali", labels=LABELS, prompt_lines=prompt_lines(PROMPT, exclude=[SOURCE]))


@pytest.mark.parametrize("output", [
    TRANSLATION,
    f"  {TRANSLATION}\n",
    f'"{TRANSLATION}"',
    f"“{TRANSLATION}”",
    f"‘{TRANSLATION}’",
    f"**{TRANSLATION}**",
    f'"**{TRANSLATION}**"',
    f"Sylhet dialect: {TRANSLATION}",
    f"**Sylhet dialect:** {TRANSLATION}",
    f"সিলেটি অনুবাদ: {TRANSLATION}",
    f"অনুবাদ: {TRANSLATION}",
    f"Here is the translation in Sylhet dialect:\n\n{TRANSLATION}",
    f"Sure! Here's the Sylheti version:\n{TRANSLATION}",
    f"{TRANSLATION}\n\nExplanation: 'কী' becomes 'কিতা' and 'খেয়েছো' becomes 'খাইছো' in Sylheti.",
    f"{TRANSLATION}\n(Note: Sylheti uses কিতা for কী.)",
    f"{TRANSLATION} (What did you eat?)",
    f"{TRANSLATION}\nব্যাখ্যা: সিলেটিতে 'কী' হয় 'কিতা'।",
    f"<think>The user wants Sylheti. কী → কিতা.</think>\n{TRANSLATION}",
    f"```\n{TRANSLATION}\n```",
    f"Standard Bengali: {SOURCE}\nSylhet dialect: {TRANSLATION}",
    f"{TRANSLATION}\n\nStandard Bengali: আমি বাজারে যাচ্ছি।\nSylhet dialect: আমি বাজারো যাইরাম।",
    f"Sylhet dialect:\n{TRANSLATION}",
    f"Sylheti: {TRANSLATION}",
    f"**Sylheti:** {TRANSLATION}",
    f"সিলেটি উপভাষায়: {TRANSLATION}",
    f"Output:\n\"{TRANSLATION}\"",
], ids=lambda s: s[:30])
def test_wrappers_labels_explanations_and_echoes_are_stripped(output: str) -> None:
    cleaned = clean_text(output, SOURCE, CTX)
    assert cleaned.ok, cleaned
    assert cleaned.text == TRANSLATION


def test_a_closing_quote_before_the_danda_is_removed() -> None:
    cleaned = clean_text("“আমি বাজারো যাইরাম”।", "আমি বাজারে যাচ্ছি।", CTX)
    assert cleaned.text == "আমি বাজারো যাইরাম।"


def test_an_apostrophe_inside_is_not_taken_for_quotes() -> None:
    text = "'আমি' আর 'তুমি' একলগে যাইমু"
    assert clean_text(text, "'আমি' আর 'তুমি' একসাথে যাব", CTX).text == text


def test_embedded_english_terms_are_kept() -> None:
    text = "তুমার phone-ও charge আছে নি?"
    assert clean_text(text, "তোমার ফোনে চার্জ আছে কি?", CTX).text == text


@pytest.mark.parametrize(("output", "status"), [
    ("", "empty"),
    ("   \n\n", "empty"),
    ("<think>I am not sure how to translate this.</think>", "empty"),
    ('""', "empty"),
    ("Tumi kita khaiso?", "wrong_script"),
    ("What did you eat?", "wrong_script"),
    ("I'm sorry, I cannot translate into the Sylhet dialect.", "wrong_script"),
    ("तुमने क्या खाया?", "wrong_script"),
    (SOURCE, "echo"),
    (f'"{SOURCE}"', "echo"),
    (f"Sylhet dialect: {SOURCE}", "echo"),
    ("Standard Bengali: আমি বাজারে যাচ্ছি।\nSylhet dialect: আমি বাজারো যাইরাম।", "echo"),
    ("Translate Standard Bengali into the Sylhet dialect of Bengali.", "echo"),
    ("তুমি কী খেয়ে", "echo"),  # SmolLM2-135M: the source, cut off
    ("Standard Bengali: তুমি কী খেয়েছো?\nSylhet dialect:\nতুমি কী খে", "echo"),
], ids=lambda s: str(s)[:30])
def test_failures_are_named_never_returned_as_text(output: str, status: str) -> None:
    cleaned = clean_text(output, SOURCE, CTX)
    assert cleaned.status == status, cleaned
    assert cleaned.text is None and cleaned.reason


def test_an_unchanged_source_is_accepted_when_asked() -> None:
    ctx = CleanContext(script="bengali", labels=LABELS, prompt_lines=CTX.prompt_lines, accept_unchanged=True)
    assert clean_text(SOURCE, SOURCE, ctx).text == SOURCE


def test_a_multi_line_source_keeps_as_many_lines() -> None:
    source = "আমি বাড়ি যাব।\nতুমি কোথায় যাবে?"
    out = "আমি বাড়িত যাইমু।\nতুমি কুনানো যাইবায়?\nNote: both lines are Sylheti."
    assert clean_text(out, source, CTX).text == "আমি বাড়িত যাইমু।\nতুমি কুনানো যাইবায়?"


def test_extra_lines_of_a_one_line_source_are_dropped_and_noted() -> None:
    cleaned = clean_text(f"{TRANSLATION}\nতুমি কিতা খাইলায়?", SOURCE, CTX)
    assert cleaned.text == TRANSLATION and "dropped 1 extra line(s)" in cleaned.notes


@pytest.mark.parametrize(("script", "output"), [
    ("devanagari", "तुमने क्या खाया?"),
    ("arabic", "تم نے کیا کھایا؟"),
    ("latin", "What did you eat?"),
])
def test_other_target_scripts(script: str, output: str) -> None:
    ctx = CleanContext(script=script, labels=("Bengali:", "Translation:"))
    assert clean_text(f"Translation: {output}", SOURCE, ctx).text == output
    assert clean_text(TRANSLATION, SOURCE, ctx).status == "wrong_script"


def test_a_latin_target_keeps_its_preamble_free_sentence() -> None:
    ctx = CleanContext(script="latin", labels=("English:",))
    assert clean_text("Here is the English translation:\nWhat did you eat?", SOURCE, ctx).text == "What did you eat?"


@pytest.mark.parametrize("text", ["I have a cough.", "Meaning is everything.", "Okay, let's go.", "Note the time."])
def test_an_english_sentence_that_starts_like_a_note_is_kept(text: str) -> None:
    ctx = CleanContext(script="latin", labels=("Bengali:", "English:"))
    assert clean_text(text, "আমার কাশি আছে।", ctx).text == text
    assert clean_text(f"Note: literal translation.\n{text}", "আমার কাশি আছে।", ctx).text == text


# -- list fields (VQA options) ------------------------------------------------------------------------

OPTIONS = ["ইলিশ মাছ", "রুই মাছ", "১৯৭১", "পাঙ্গাস মাছ"]
DIALECT_OPTIONS = ["ইলিশ মাছ", "রুই মাছ", "১৯৭১", "পাঙাশ মাছ"]


def test_numbered_round_trip() -> None:
    assert numbered(OPTIONS) == "1. ইলিশ মাছ\n2. রুই মাছ\n3. ১৯৭১\n4. পাঙ্গাস মাছ"


@pytest.mark.parametrize("output", [
    "1. ইলিশ মাছ\n2. রুই মাছ\n3. ১৯৭১\n4. পাঙাশ মাছ",
    "১. ইলিশ মাছ\n২. রুই মাছ\n৩. ১৯৭১\n৪. পাঙাশ মাছ",
    "Sylhet dialect:\n1) \"ইলিশ মাছ\"\n2) রুই মাছ\n3) ১৯৭১\n4) **পাঙাশ মাছ**\n\nNote: names of fish rarely change.",
    "1. ইলিশ মাছ\n2. রুই মাছ\n3. ১৯৭১\n4. পাঙ্গাস মাছ\n\nSylhet:\n1. ইলিশ মাছ\n2. রুই মাছ\n3. ১৯৭১\n4. পাঙাশ মাছ",
    "ইলিশ মাছ\nরুই মাছ\n১৯৭১\nপাঙাশ মাছ",
], ids=["ascii", "bengali-digits", "labels-quotes-note", "echo-then-translation", "unnumbered"])
def test_list_outputs_stay_aligned(output: str) -> None:
    cleaned = clean_list(output, OPTIONS, CTX)
    assert cleaned.ok, cleaned
    assert cleaned.text == DIALECT_OPTIONS


@pytest.mark.parametrize(("output", "status"), [
    ("1. ইলিশ মাছ\n2. রুই মাছ\n4. পাঙাশ মাছ", "misaligned"),
    ("1. ইলিশ মাছ\n2. রুই মাছ\n3. ১৯৭১\n4. পাঙাশ মাছ\n5. বোয়াল মাছ", "misaligned"),
    ("ইলিশ মাছ, রুই মাছ, ১৯৭১, পাঙাশ মাছ", "misaligned"),
    ("1. ইলিশ মাছ\n2. Rui fish\n3. ১৯৭১\n4. পাঙাশ মাছ", "wrong_script"),
    ("", "empty"),
])
def test_list_failures(output: str, status: str) -> None:
    cleaned = clean_list(output, OPTIONS, CTX)
    assert cleaned.status == status, cleaned
    assert cleaned.text is None


def test_a_number_only_element_is_not_script_checked() -> None:
    cleaned = clean_list("1. 64\n2. ৬৫", ["64", "৬৫"], CTX)
    assert cleaned.text == ["64", "৬৫"]


@pytest.mark.parametrize("output", [
    "Bairisch: Wia geht's da?", "Bavarian dialect: Wia geht's da?", "„Wia geht's da?“",
    "Wia geht's da?\n\nExplanation: 'Wia' is Bavarian for 'Wie'."])
def test_a_german_dialect_target(output: str) -> None:
    ctx = CleanContext(script="latin", labels=("Standard German:", "Bavarian dialect:"))
    assert clean_text(output, "Wie geht es dir?", ctx).text == "Wia geht's da?"
    assert clean_text("Wie geht es dir?", "Wie geht es dir?", ctx).status == "echo"


def test_a_colon_of_the_source_is_kept() -> None:
    source = "সময়: সকাল আটটা"
    assert clean_text("সময়: সকাল আটটা বাজে", source, CTX).text == "সময়: সকাল আটটা বাজে"
