"""Question sets from templates (SPEC §4 P1): Bengali genitive, templates, topic files, stable ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectbias.build import PAPER_DOMAINS, QUESTION_TYPES, build_questions, genitive, load_topics
from dialectbias.errors import DataError


def topics_from(tmp_path: Path, text: str, name: str = "topics.yaml") -> dict:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_topics(path)


@pytest.mark.parametrize(("word", "expected"), [
    ("হৃৎপিণ্ড", "হৃৎপিণ্ডের"),     # consonant
    ("মাথা", "মাথার"),              # vowel sign
    ("রাজধানী", "রাজধানীর"),
    ("জীবাণু", "জীবাণুর"),
    ("বই", "বইয়ের"),               # independent ই
    ("ওয়াই-ফাই", "ওয়াই-ফাইয়ের"),
    ("ডিএনএ", "ডিএনএ-র"),           # abbreviation ending in a vowel letter
    ("সৌরজগৎ", "সৌরজগতের"),        # khanda ta
    ("রং", "রঙের"),                  # anusvara
    ("হৃদয়", "হৃদয়ের"),            # য় as one code point
    ("হৃদয\u09bc", "হৃদয\u09bcের"),  # য় as য + nukta
    ("DNA", "DNA-এর"),
    ("টাইপ ২", "টাইপ ২-এর"),
])
def test_genitive(word: str, expected: str) -> None:
    assert genitive(word) == expected


def test_every_template_form(tmp_path: Path) -> None:
    topics = topics_from(tmp_path, """
T:
  definitional: [অ্যালগরিদম, {topic: গণতন্ত্র, form: called}, {topic: নগরায়ণ, form: meaning}]
  contrasting: [[অ্যাসিড, ক্ষার], {a: ভর, b: ওজন}]
  factual: [{context: বাংলাদেশ, topic: জাতীয় ফুল}, {context: সৌরজগৎ, topic: গ্রহ, form: number},
            {topic: মানবদেহের হাড়, form: number}]
  functional: [থার্মোমিটার, {topic: হৃৎপিণ্ড, form: function}]
""")
    texts = [(q.question_type, q.text) for q in build_questions(topics)]
    assert texts == [
        ("definitional", "অ্যালগরিদম কী?"), ("definitional", "গণতন্ত্র কাকে বলে?"),
        ("definitional", "নগরায়ণ বলতে কী বোঝায়?"),
        ("contrasting", "অ্যাসিড এবং ক্ষারের মধ্যে প্রধান পার্থক্য কী?"),
        ("contrasting", "ভর এবং ওজনের মধ্যে প্রধান পার্থক্য কী?"),
        ("factual", "বাংলাদেশের জাতীয় ফুলের নাম কী?"), ("factual", "সৌরজগতের গ্রহের সংখ্যা কত?"),
        ("factual", "মানবদেহের হাড়ের সংখ্যা কত?"),
        ("functional", "থার্মোমিটার কী কাজে ব্যবহৃত হয়?"), ("functional", "হৃৎপিণ্ডের প্রধান কাজ কী?"),
    ]


def test_packaged_topics_cover_the_papers_domains_and_types() -> None:
    topics = load_topics()
    assert tuple(topics) == PAPER_DOMAINS
    questions = list(build_questions(topics))
    for domain in PAPER_DOMAINS:
        for qtype in QUESTION_TYPES:
            assert sum(q.domain == domain and q.question_type == qtype for q in questions) >= 4
    ids = [q.id for q in questions]
    assert len(set(ids)) == len(ids) and len({q.text for q in questions}) == len(questions)
    assert all(q.text.endswith("?") for q in questions)


def test_ids_are_stable_when_topic_lists_grow(tmp_path: Path) -> None:
    small = {q.text: q.id for q in build_questions(topics_from(tmp_path, "T:\n  definitional: [ক, খ]\n"))}
    big = {q.text: q.id for q in build_questions(topics_from(tmp_path, "T:\n  definitional: [গ, ক, খ, ক]\n"))}
    assert small.items() <= big.items() and len(big) == 3  # duplicates dropped
    assert small["ক কী?"].startswith("t.definitional.")


def test_per_type_is_a_seeded_sample_in_file_order() -> None:
    topics = load_topics()
    a = [q.id for q in build_questions(topics, per_type=2, seed=1)]
    b = [q.id for q in build_questions(topics, per_type=2, seed=1)]
    c = [q.id for q in build_questions(topics, per_type=2, seed=2)]
    assert a == b and a != c and len(a) == 2 * 4 * 6
    full = [q.id for q in build_questions(topics)]
    assert a == [i for i in full if i in set(a)]


@pytest.mark.parametrize(("text", "message"), [
    ("- a\n- b\n", "expected a mapping of domain name"),
    ("T: [a]\n", "  - T: expected a mapping with keys definitional"),
    ("T:\n  contrasting: [[ক, খ, গ]]\n", "T.contrasting: Value error, a pair needs exactly two topics"),
    ("T:\n  factual: [{context: বাংলাদেশ}]\n", "T.factual.0.topic: Field required"),
    ("T:\n  functional: [{topic: '  '}]\n", "T.functional.0.topic: Value error, empty text"),
    ("T:\n  definitional: [{topic: ক, from: what}]\n", "T.definitional.0.from: unknown key"),
])
def test_yaml_topic_errors_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "topics.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_topics(path)
    assert str(path) in str(info.value) and message in str(info.value)


@pytest.mark.parametrize(("rows", "message"), [
    ("domain,question_type,topic,colour\n", ":1: unknown column(s) colour"),
    ("domain,topic\n", ":1: missing column(s) question_type"),
    ("domain,question_type,topic,topic_b\nT,contrasting,ক,\n", ":2: column topic_b: a contrasting question"),
    ("domain,question_type,topic,context\nT,definitional,ক,বাংলাদেশ\n", ":2: column context: only factual"),
    ("domain,question_type,topic,form\nT,functional,ক,why\n", ":2: column form: Input should be 'use'"),
    ("domain,question_type,topic\nT,factual,\n", ":2: column topic: empty"),
])
def test_csv_topic_errors_name_the_line_and_column(tmp_path: Path, rows: str, message: str) -> None:
    path = tmp_path / "topics.csv"
    path.write_text(rows, encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_topics(path)
    assert f"{path}{message}" in str(info.value)


def test_other_file_types_are_refused(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("x", encoding="utf-8")
    with pytest.raises(DataError, match=r"t\.txt: expected a \.yaml"):
        load_topics(tmp_path / "t.txt")
    with pytest.raises(DataError, match="file not found"):
        load_topics(tmp_path / "none.yaml")
