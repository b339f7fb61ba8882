"""Lexical translation metrics (SPEC §4 P2): known values, agreement with sacrebleu's and jiwer's own functions,
the bootstrap over sentence statistics, and the normalisation."""

from __future__ import annotations

import math

import jiwer
import numpy as np
import pytest
import sacrebleu

from dialectbias.metrics._translation import (
    TextNormalization,
    bootstrap_corpus_score,
    corpus_score,
    sentence_scores,
    sentence_statistics,
)

HYPS = ["the cat sat on the mat", "a dog barks", "", "আমি ভাত খাই"]
REFS = ["the cat sat on a mat", "the dog barks", "hello world", "আমি ভাত খাইতাম"]


def test_wer_known_values() -> None:
    # 1 substitution of 6 words; 1 of 3; an empty hypothesis deletes both words; 1 of 3
    assert sentence_scores("wer", HYPS, REFS) == pytest.approx([100 / 6, 100 / 3, 100.0, 100 / 3])
    # corpus: (1 + 1 + 2 + 1) edits / (6 + 3 + 2 + 3) words
    assert corpus_score("wer", HYPS, REFS) == pytest.approx(100 * 5 / 14)
    assert corpus_score("wer", HYPS, REFS) == pytest.approx(100 * jiwer.wer(REFS, HYPS))
    # an insertion-heavy hypothesis exceeds 100
    assert sentence_scores("wer", ["a b c d"], ["x"]) == [400.0]


def test_bleu_and_chrf_match_sacrebleu() -> None:
    assert corpus_score("bleu", HYPS, REFS) == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)
    assert corpus_score("chrf", HYPS, REFS) == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)
    assert sentence_scores("bleu", HYPS, REFS) == pytest.approx(
        [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(HYPS, REFS, strict=True)])
    assert sentence_scores("chrf", HYPS, REFS) == pytest.approx(
        [sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(HYPS, REFS, strict=True)])
    assert corpus_score("bleu", ["a b c d e"], ["a b c d e"]) == pytest.approx(100.0)
    assert corpus_score("chrf", ["abc"], ["xyz"]) == 0.0


def test_bleu_hand_computed() -> None:
    # hypothesis = reference minus its last word: precisions 4/4, 3/3, 2/2, 1/1, brevity penalty exp(1 − 5/4)
    assert corpus_score("bleu", ["a b c d"], ["a b c d e"]) == pytest.approx(100 * math.exp(1 - 5 / 4))


def test_corpus_score_is_not_the_mean_of_sentence_scores() -> None:
    stats = sentence_statistics("wer", HYPS, REFS)
    assert stats.tolist() == [[1, 6], [1, 3], [2, 2], [1, 3]]
    assert corpus_score("wer", HYPS, REFS) != pytest.approx(np.mean(sentence_scores("wer", HYPS, REFS)))


def test_bootstrap_ci_is_seeded_and_brackets_the_score() -> None:
    hyps, refs = HYPS * 10, REFS * 10
    a = bootstrap_corpus_score("chrf", hyps, refs, n_resamples=300, seed=3)
    b = bootstrap_corpus_score("chrf", hyps, refs, n_resamples=300, seed=3)
    assert a == b and a.n == 40
    assert a.ci_low < a.score < a.ci_high
    assert a.score == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score)
    # resampling identical sentences: no spread at all
    same = bootstrap_corpus_score("wer", ["a b"] * 5, ["a c"] * 5, n_resamples=100)
    assert (same.score, same.ci_low, same.ci_high) == (50.0, 50.0, 50.0)
    one = bootstrap_corpus_score("bleu", ["a"], ["a"])
    assert one.n == 1 and math.isnan(one.ci_low)
    assert math.isnan(bootstrap_corpus_score("bleu", [], []).score)


def test_empty_reference_and_length_mismatch_are_refused() -> None:
    with pytest.raises(ValueError, match="empty reference"):
        corpus_score("bleu", ["a"], [" "])
    with pytest.raises(ValueError, match="one reference per hypothesis"):
        sentence_scores("wer", ["a", "b"], ["a"])


def test_normalization_default_and_options() -> None:
    default = TextNormalization()
    decomposed = "\u0995\u09c7\u09be"  # ক + ে + া: NFC composes the two vowel signs into ো (U+09CB)
    assert default.apply(f"  {decomposed}  ভাত\n খাই ") == "\u0995\u09cb ভাত খাই"
    assert default.describe() == "NFC, whitespace collapsed, stripped"
    assert default.apply("a\u200cb") == "a\u200cb"  # ZWNJ kept by default (it changes rendering)
    custom = TextNormalization(remove_zero_width=True, ascii_digits=True, lowercase=True)
    assert custom.apply("A\u200cB ৬৪") == "ab 64"
    assert "zero-width" in custom.describe() and "ASCII" in custom.describe()
    raw = TextNormalization(nfc=False, collapse_whitespace=False, strip=False)
    assert raw.apply(" a  b ") == " a  b " and raw.describe() == "none"
    # normalising before the metric changes WER: "আমি  ভাত" vs "আমি ভাত" only differ in spacing
    assert sentence_scores("wer", [default.apply("আমি  ভাত ")], [default.apply("আমি ভাত")]) == [0.0]
