"""Caption BLEU and character-level ROUGE-L (BanglaVerse §4.3; the released scorer per PROCEDURES.md §2),
checked against values computed by hand on tiny strings, Bengali combining marks included."""

from __future__ import annotations

import math
import random

import pytest

from dialectbias.metrics import caption_bleu, lcs_length, rouge_l_chars
from dialectbias.metrics._caption_lexical import char_units


def test_lcs_length_by_hand() -> None:
    assert lcs_length("ABCBDAB", "BDCABA") == 4  # BCBA (the textbook example)
    assert lcs_length("abc", "") == 0
    assert lcs_length("abc", "abc") == 3
    assert lcs_length("ab", "ba") == 1


def _lcs_table(a: str, b: str) -> int:
    """The textbook dynamic programme."""
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    return t[-1][-1]


def test_the_bit_parallel_lcs_equals_the_dynamic_programme() -> None:
    rng = random.Random(21)
    for _ in range(500):  # short strings over a small alphabet (many matches), Bengali marks included
        a = "".join(rng.choice("abcক্িঁ ") for _ in range(rng.randint(0, 70)))
        b = "".join(rng.choice("abcক্িঁ ") for _ in range(rng.randint(0, 70)))
        assert lcs_length(a, b) == _lcs_table(a, b), (a, b)
    assert lcs_length(char_units("স্কুল ক্ষমা", "graphemes"), char_units("স্কল ক্ষমা", "graphemes")) == 4


def test_rouge_l_is_the_f_measure_of_character_lcs() -> None:
    # abcd vs abxd: LCS abd = 3; P = 3/4, R = 3/4, F = 0.75
    assert rouge_l_chars("abcd", "abxd") == pytest.approx(0.75)
    # ab vs abcd: LCS 2; P = 1, R = 1/2, F = 2·1·0.5/1.5 = 2/3 (symmetric in P and R: the same swapped)
    assert rouge_l_chars("ab", "abcd") == pytest.approx(2 / 3)
    assert rouge_l_chars("abcd", "ab") == pytest.approx(2 / 3)
    # spaces are characters too: "a b" vs "ab": LCS 2; P = 2/3, R = 1, F = 0.8
    assert rouge_l_chars("a b", "ab") == pytest.approx(0.8)
    assert rouge_l_chars("", "abc") == 0.0 and rouge_l_chars("abc", "") == 0.0 and rouge_l_chars("ab", "cd") == 0.0
    assert rouge_l_chars("ছবিতে", "ছবিতে") == 1.0


def test_bengali_code_points_versus_grapheme_clusters() -> None:
    # কি = ক + ি (U+0995 U+09BF), কী = ক + ী (U+0995 U+09C0): one code point of two in common
    assert char_units("কি") == ["\u0995", "\u09bf"]
    assert rouge_l_chars("কি", "কী") == pytest.approx(0.5)
    # as clusters, কি and কী are one letter each, and different: nothing in common
    assert char_units("কি", "graphemes") == ["কি"]
    assert rouge_l_chars("কি", "কী", "graphemes") == 0.0
    # স্কুল (স ্ ক ু ল: 5 code points) vs স্কল (4): LCS 4, P = 4/5, R = 1, F = 8/9
    assert rouge_l_chars("স্কুল", "স্কল") == pytest.approx(8 / 9)
    # clusters: [স্কু, ল] vs [স্ক, ল] (the conjunct joins its consonants): LCS 1, P = R = 1/2, F = 1/2
    assert char_units("স্কুল", "graphemes") == ["স্কু", "ল"]
    assert rouge_l_chars("স্কুল", "স্কল", "graphemes") == pytest.approx(0.5)
    # candrabindu: চাঁদ (চ া ঁ দ) vs চাদ: LCS 3; P = 3/4, R = 1, F = 6/7
    assert rouge_l_chars("চাঁদ", "চাদ") == pytest.approx(6 / 7)


def test_corpus_bleu_by_hand() -> None:
    # a b c d e vs a b c d f: precisions 4/5, 3/4, 2/3, 1/2, no brevity penalty
    one = (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25 * 100
    assert caption_bleu(["a b c d e"], ["a b c d f"]) == pytest.approx(one)
    # corpus: the n-gram counts of both captions are summed first: 8/9, 6/7, 4/5, 2/3
    both = (8 / 9 * 6 / 7 * 4 / 5 * 2 / 3) ** 0.25 * 100
    hyps, refs = ["a b c d e", "w x y z"], ["a b c d f", "w x y z"]
    assert caption_bleu(hyps, refs) == pytest.approx(both)
    # sentence level: the mean of the two sentence BLEUs (66.87 and 100)
    assert caption_bleu(hyps, refs, level="sentence") == pytest.approx((one + 100) / 2)
    # brevity penalty: 4 words against 6, all n-grams right: exp(1 − 6/4) · 100
    assert caption_bleu(["a b c d"], ["a b c d e f"]) == pytest.approx(math.exp(-0.5) * 100)
    assert math.isnan(caption_bleu([], []))
    with pytest.raises(ValueError, match="one reference per caption"):
        caption_bleu(["a"], [])


def test_bleu_tokenizer_decides_whether_the_danda_is_a_word() -> None:
    # 13a splits ASCII punctuation only: "খাই।" is one token, so the hypothesis has 3 tokens against the
    # reference's 4 and no 3-gram in common: BLEU 0. intl splits Unicode punctuation: identical token lists.
    hyp, ref = "আমি ভাত খাই।", "আমি ভাত খাই ।"
    assert caption_bleu([hyp], [ref]) == 0.0
    assert caption_bleu([hyp], [ref], tokenize="intl") == pytest.approx(100.0)
