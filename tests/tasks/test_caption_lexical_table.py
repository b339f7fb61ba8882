"""BLEU and ROUGE-L per model × variant × strategy × domain (caption_scores.csv's new columns): which
captions count (empty ones skipped or scored as empty), the `all` domain row, the NFC reference, and the
sentence-BLEU switch, by hand."""

from __future__ import annotations

import math
import unicodedata
from typing import Any

import pytest

from dialectbias.tasks.vlm._caption import CaptionOptions
from dialectbias.tasks.vlm._lexical import add_rouge_l, describe, lexical_table


def _row(caption: str, reference: str, domain: str = "food", status: str = "ok") -> dict[str, Any]:
    return {"model": "m", "variant": "standard", "strategy": "zero_shot", "domain": domain, "status": status,
            "caption": caption, "reference": reference}


def _table(rows: list[dict[str, Any]], **options: Any) -> dict[str, dict[str, Any]]:
    o = CaptionOptions(**options)
    add_rouge_l(rows, o)
    return {r["domain"]: r for r in lexical_table(rows, o).to_dict("records")}


def test_groups_and_the_all_row() -> None:
    rows = [_row("abcd", "abxd"), _row("ab", "abcd", "culture"), _row("x", "y", status="failed")]
    table = _table(rows)
    assert set(table) == {"food", "culture", "all"}
    assert table["food"]["rouge_l"] == pytest.approx(0.75) and table["food"]["rouge_l_n"] == 1
    assert table["all"]["rouge_l"] == pytest.approx((0.75 + 2 / 3) / 2) and table["all"]["bleu_n"] == 2
    assert rows[2]["rouge_l"] is None  # a failed request takes no part


def test_empty_captions_are_skipped_or_scored_as_empty() -> None:
    rows = [_row("abcd", "abxd"), _row("", "abcd")]
    skipped = _table([dict(r) for r in rows])["food"]
    assert (skipped["rouge_l"], skipped["rouge_l_n"], skipped["bleu_n"]) == (pytest.approx(0.75), 1, 1)
    zero = _table([dict(r) for r in rows], lexical_empty="zero")["food"]
    assert (zero["rouge_l"], zero["rouge_l_n"], zero["bleu_n"]) == (pytest.approx(0.375), 2, 2)


def test_a_group_without_scored_captions_has_no_value() -> None:
    table = _table([_row("", "abc")])
    assert math.isnan(table["food"]["bleu"]) and math.isnan(table["food"]["rouge_l"])
    assert table["food"]["bleu_n"] == 0


def test_the_reference_is_nfc_normalised_like_the_caption_unless_asked_not_to() -> None:
    caption = unicodedata.normalize("NFC", "ন\u09df")  # য় decomposes under NFC: ন য ়
    assert caption == "ন\u09af\u09bc"
    assert _table([_row(caption, "ন\u09df")])["food"]["rouge_l"] == 1.0
    # as stored: LCS ন = 1 of 3 and 2 code points: P = 1/3, R = 1/2, F = 0.4
    raw = _table([_row(caption, "ন\u09df")], lexical_nfc_reference=False)["food"]
    assert raw["rouge_l"] == pytest.approx(0.4)


def test_sentence_bleu_switch_and_description() -> None:
    rows = [_row("a b c d e", "a b c d f"), _row("w x y z", "w x y z")]
    one = (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25 * 100
    assert _table([dict(r) for r in rows])["food"]["bleu"] == pytest.approx((8 / 9 * 6 / 7 * 4 / 5 * 2 / 3) ** 0.25
                                                                            * 100)
    assert _table([dict(r) for r in rows], bleu_level="sentence")["food"]["bleu"] == pytest.approx((one + 100) / 2)
    assert describe(CaptionOptions()) == ("corpus BLEU (sacrebleu, tokenize 13a); ROUGE-L F over code points; "
                                          "empty captions skipped; references NFC")
