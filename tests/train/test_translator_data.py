"""The LoRA generator's training examples (BanglaVerse App. C.1): the instruction text, the counted filters,
the grouped seeded held-out split and the prompt masking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialectbias.data import load_corpus
from dialectbias.errors import DataError
from dialectbias.train import (
    IGNORE,
    TranslatorTrainConfig,
    conversation_examples,
    encode_examples,
    instruction_prompt,
    pair_examples,
    split_examples,
)
from dialectbias.train._translator import select_examples
from tiny_llm import SENTENCES, write_corpus


def test_instruction_text_is_the_papers_format() -> None:
    assert instruction_prompt("Bengali", "Sylhet", "তুমি কী  খেয়েছো?\n") == (
        "Translate the following standard Bengali to Sylhet dialect: Standard Bengali: তুমি কী খেয়েছো? "
        "Sylhet dialect:")


def test_pairs_become_examples_with_the_registry_language(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "bn", identical=3))
    sel = pair_examples(corpus)
    assert len(sel.examples) == 2 * len(SENTENCES)
    assert sel.skipped == {"dialect text = standard text": 3}
    assert sel.per_dialect == {"sylhet": len(SENTENCES), "chittagong": len(SENTENCES)}
    first = next(e for e in sel.examples if e.dialect == "chittagong")
    std, _, ctg = SENTENCES[0]
    assert first.prompt == instruction_prompt("Bengali", "Chittagong", std)
    assert first.target == " " + ctg
    # German dialects say "standard German"
    de = tmp_path / "de"
    de.mkdir()
    (de / "p.csv").write_text("standard_text,dialect_text\nWie geht es dir?,Wia geht's da?\n", encoding="utf-8")
    (de / "c.yaml").write_text("name: de\nfiles:\n  - {path: p.csv, standard: standard_text, dialect_text: "
                               "dialect_text, dialect_value: low_german}\n", encoding="utf-8")
    (ex,) = pair_examples(load_corpus(de / "c.yaml")).examples
    assert ex.prompt == ("Translate the following standard German to Low German dialect: Standard German: "
                         "Wie geht es dir? Low German dialect:")
    # a dialect the corpus file adds to the registry takes its language from there
    (de / "c2.yaml").write_text("name: de\ndialects: {de: [berlinisch]}\nfiles:\n  - {path: p.csv, standard: "
                                "standard_text, dialect_text: dialect_text, dialect_value: berlinisch}\n",
                                encoding="utf-8")
    with pytest.raises(DataError, match="berlinisch"):
        pair_examples(load_corpus(de / "c2.yaml"))
    (ex,) = pair_examples(load_corpus(de / "c2.yaml"), extra={"de": ["berlinisch"]}).examples
    assert ex.prompt.startswith("Translate the following standard German to Berlinisch dialect:")
    selection, _ = select_examples(de / "c2.yaml", TranslatorTrainConfig(), None)  # what train-translator reads
    assert [e.prompt for e in selection.examples] == [ex.prompt]


def test_dialect_and_split_filters_are_counted(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path))
    sel = pair_examples(corpus, dialects=["sylhet"], splits=["train"])
    assert len(sel.examples) == len(SENTENCES)
    assert sel.skipped == {"other dialect (--dialect)": len(SENTENCES)}
    none = pair_examples(corpus, splits=["test"])
    assert not none.examples and none.skipped == {"other split (--split)": 2 * len(SENTENCES)}


def test_split_is_grouped_seeded_and_order_free(tmp_path: Path) -> None:
    examples = pair_examples(load_corpus(write_corpus(tmp_path))).examples
    train, held = split_examples(examples, 0.2, seed=0)
    assert len(held) == 2 * 2 and len(train) == 2 * 8  # 2 of 10 sentences, each with both dialects
    assert {e.group for e in train}.isdisjoint({e.group for e in held})
    standard = {e.group: e.prompt.split("Standard Bengali: ")[1].rsplit(" ", 2)[0] for e in examples}
    held_sentences = {standard[e.group] for e in held}
    assert len(held_sentences) == 2 and not held_sentences & {standard[e.group] for e in train}
    again = split_examples(list(reversed(examples)), 0.2, seed=0)
    assert [e.id for e in again[1]] == [e.id for e in held] and [e.id for e in again[0]] == [e.id for e in train]
    other = split_examples(examples, 0.2, seed=1)[1]
    assert {e.group for e in other} != {e.group for e in held}  # another seed, another draw (fixed here)
    assert split_examples(examples, 0.0, seed=0)[1] == []


def test_prompt_tokens_are_masked(tiny_base: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_base))
    examples = pair_examples(load_corpus(write_corpus(tmp_path))).examples[:3]
    enc = encode_examples(tok, examples, max_length=512)
    assert len(enc.rows) == 3 and enc.truncated == 0
    for e, row in zip(examples, enc.rows, strict=True):
        prompt = tok(e.prompt, add_special_tokens=True)["input_ids"]
        target = tok(e.target, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        assert row["input_ids"] == prompt + target
        assert row["labels"] == [IGNORE] * len(prompt) + target
        assert row["attention_mask"] == [1] * (len(prompt) + len(target))
        assert tok.decode([t for t in row["labels"] if t != IGNORE], skip_special_tokens=True) == e.target
    # a short max_length cuts targets and skips prompts that fill it, and counts both
    n_prompt = len(tok(examples[0].prompt)["input_ids"])
    cut = encode_examples(tok, examples[:1], max_length=n_prompt + 2)
    assert cut.truncated == 1 and cut.rows[0]["labels"][n_prompt:] == enc.rows[0]["labels"][n_prompt:n_prompt + 2]
    skipped = encode_examples(tok, examples[:1], max_length=n_prompt)
    assert not skipped.rows and sum(skipped.skipped.values()) == 1


def test_conversation_file(tmp_path: Path) -> None:
    path = tmp_path / "conv.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"user": "তুমি কিতা খাইছো?", "assistant": "আমি ভাত খাইছি।", "dialect": "sylhet"},
        {"user": "", "assistant": "খালি"}]) + "\n", encoding="utf-8")
    sel = conversation_examples(path)
    (ex,) = sel.examples
    assert ex.prompt == "User: তুমি কিতা খাইছো? Assistant:" and ex.target == " আমি ভাত খাইছি।"
    assert sum(sel.skipped.values()) == 1
    bad = tmp_path / "conv.csv"
    bad.write_text("question,answer\na,b\n", encoding="utf-8")
    with pytest.raises(DataError, match="missing column"):
        conversation_examples(bad)
