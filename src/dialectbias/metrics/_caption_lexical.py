"""Lexical caption metrics of the released BanglaVerse scorer (BanglaVerse §4.3; its caption scripts, as
PROCEDURES.md §2 "Caption metrics" records them): BLEU (sacrebleu) and a character-level ROUGE-L.

- **BLEU**: sacrebleu's `corpus_bleu` with its defaults (13a tokenisation, exponential smoothing), 0–100, over
  the captions of a group: n-gram matches are summed over the captions before the precisions are taken, so
  a corpus BLEU is not the mean of sentence BLEUs. `level="sentence"` gives that mean instead (sacrebleu's
  `sentence_bleu`, effective order), a departure from the released code.
- **ROUGE-L (characters)**: for one caption, the longest common subsequence (LCS) of the caption and the
  reference taken as sequences of characters; precision P = LCS / len(caption), recall R = LCS /
  len(reference), F = 2PR / (P + R) (β = 1; 0 when either is empty or nothing matches), 0–1; a group's value
  is the mean of its captions' F. The released code works on Python strings, i.e. Unicode **code points**
  (the default `units="code_points"`): a Bengali vowel sign, virama or candrabindu is a unit of its own, so
  a caption that gets the consonant right and the vowel sign wrong keeps partial credit. `units="graphemes"`
  compares extended grapheme clusters (UAX #29, the `regex` module's `\\X`) instead: a consonant with its
  vowel signs and marks is one unit, closer to what a reader sees as a letter, and a wrong vowel sign costs
  the whole cluster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

BleuLevel = Literal["corpus", "sentence"]
BleuTokenize = Literal["13a", "intl", "char", "none"]
CharUnits = Literal["code_points", "graphemes"]


def char_units(text: str, units: CharUnits = "code_points") -> list[str]:
    """The text as the units ROUGE-L compares: its code points, or its extended grapheme clusters."""
    if units == "code_points":
        return list(text)
    import regex

    return regex.findall(r"\X", text)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two sequences: the bit-parallel algorithm of Allison & Dix
    (1986) in Hyyrö's form (2004), one integer operation per unit of `a` on a |b|-bit vector `V` whose zero
    bits count the LCS (`U = V & M[x]; V = (V + U) | (V − U)`): the same number as the textbook dynamic
    programme, fast enough for every caption of a study in pure Python."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for j, y in enumerate(b):
        masks[y] = masks.get(y, 0) | (1 << j)
    width = (1 << len(b)) - 1
    v = width
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & width
    return len(b) - v.bit_count()


def rouge_l_chars(prediction: str, reference: str, units: CharUnits = "code_points") -> float:
    """Character-level ROUGE-L F-measure (β = 1) of one caption against its reference, in [0, 1]."""
    p, r = char_units(prediction, units), char_units(reference, units)
    if not p or not r:
        return 0.0
    lcs = lcs_length(p, r)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(p), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


def caption_bleu(predictions: Sequence[str], references: Sequence[str], *, level: BleuLevel = "corpus",
                 tokenize: BleuTokenize = "13a") -> float:
    """BLEU (0–100) of captions against one reference each: corpus BLEU (sacrebleu `corpus_bleu`), or the
    mean of sentence BLEUs (`level="sentence"`). No pairs → nan."""
    from sacrebleu.metrics import BLEU

    hyps, refs = list(predictions), list(references)
    if len(hyps) != len(refs):
        raise ValueError(f"one reference per caption is needed, got {len(hyps)} captions and {len(refs)} references")
    if not hyps:
        return math.nan
    if level == "corpus":
        return float(BLEU(tokenize=tokenize).corpus_score(hyps, [refs]).score)
    bleu = BLEU(tokenize=tokenize, effective_order=True)
    return float(sum(bleu.sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)) / len(hyps))


__all__ = ["BleuLevel", "BleuTokenize", "CharUnits", "caption_bleu", "char_units", "lcs_length", "rouge_l_chars"]
