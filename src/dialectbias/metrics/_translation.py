"""Lexical translation-quality metrics (SPEC §4 P2; Bengali dialect-bias paper §3.1.3, §4.1, Table 2): BLEU and
chrF (sacrebleu, default settings), WER (jiwer) ×100, corpus-level and per sentence, on normalised text, with
percentile-bootstrap CIs of the corpus scores.

A corpus score is not the mean of sentence scores: BLEU and chrF add up each sentence's n-gram statistics and
score the sums, WER divides all edits by all reference words. The bootstrap therefore resamples sentences and
re-scores the summed statistics of each resample (the scheme of sacrebleu's own paired bootstrap, Koehn 2004),
seeded and reproducible.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dialectbias.text._normalize import ZERO_WIDTH

if TYPE_CHECKING:
    from sacrebleu.metrics.base import Metric

LexicalMetric = Literal["bleu", "chrf", "wer"]
LEXICAL_METRICS: tuple[LexicalMetric, ...] = ("bleu", "chrf", "wer")

_DROP_ZERO_WIDTH = str.maketrans("", "", ZERO_WIDTH)
_TO_ASCII = str.maketrans("০১২৩৪৫৬৭৮৯", "0123456789")


class TextNormalization(BaseModel):
    """How hypothesis and reference are normalised before the metrics (the contract's default: NFC, whitespace
    collapsed, stripped). Normalised text is for scoring only; stored texts keep their original form."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nfc: bool = Field(default=True, description="Unicode NFC")
    collapse_whitespace: bool = Field(default=True, description="runs of whitespace become one space")
    strip: bool = Field(default=True, description="no leading or trailing whitespace")
    remove_zero_width: bool = Field(default=False, description="drop ZWSP, ZWNJ, ZWJ, BOM and word joiners")
    ascii_digits: bool = Field(default=False, description="Bengali digits ০–৯ become 0–9")
    lowercase: bool = Field(default=False, description="case-fold (Latin script)")

    def apply(self, text: str) -> str:
        out = text or ""
        if self.remove_zero_width:
            out = out.translate(_DROP_ZERO_WIDTH)
        if self.nfc:
            out = unicodedata.normalize("NFC", out)
        if self.ascii_digits:
            out = out.translate(_TO_ASCII)
        if self.lowercase:
            out = out.casefold()
        if self.collapse_whitespace:
            out = " ".join(out.split()) if self.strip else _collapse_keep_ends(out)
        elif self.strip:
            out = out.strip()
        return out

    def describe(self) -> str:
        """The steps in words, for the report: e.g. "NFC, whitespace collapsed, stripped"."""
        words = {"remove_zero_width": "zero-width characters removed", "nfc": "NFC",
                 "ascii_digits": "Bengali digits → ASCII", "lowercase": "case-folded",
                 "collapse_whitespace": "whitespace collapsed", "strip": "stripped"}
        steps = [text for key, text in words.items() if getattr(self, key)]
        return ", ".join(steps) or "none"


def _collapse_keep_ends(text: str) -> str:
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return (lead[:1] if lead else "") + " ".join(text.split()) + (trail[:1] if trail else "")


def _check(hyps: Sequence[str], refs: Sequence[str]) -> tuple[list[str], list[str]]:
    h, r = list(hyps), list(refs)
    if len(h) != len(r):
        raise ValueError(f"one reference per hypothesis is needed, got {len(h)} hypotheses and {len(r)} references")
    empty = [i for i, ref in enumerate(r) if not ref.strip()]
    if empty:
        raise ValueError(f"{len(empty)} empty reference(s) (first at position {empty[0]}): leave such rows out "
                         "and count them")
    return h, r


# -- sufficient statistics -----------------------------------------------------------------------------------
def _metric(name: LexicalMetric) -> Metric:
    from sacrebleu.metrics import BLEU, CHRF

    return BLEU() if name == "bleu" else CHRF()


def _sacrebleu_stats(name: Literal["bleu", "chrf"], hyps: list[str], refs: list[str]) -> np.ndarray:
    metric = _metric(name)
    return np.asarray(metric._extract_corpus_statistics(hyps, [refs]), dtype=float)


def _wer_stats(hyps: list[str], refs: list[str]) -> np.ndarray:
    """Per sentence: (edits = substitutions + deletions + insertions, reference words)."""
    import jiwer

    out = np.zeros((len(hyps), 2), dtype=float)
    for i, (h, r) in enumerate(zip(hyps, refs, strict=True)):
        o = jiwer.process_words(r, h) if h.strip() else None
        words = len(r.split())
        out[i] = (o.substitutions + o.deletions + o.insertions, words) if o is not None else (words, words)
    return out


def sentence_statistics(name: LexicalMetric, hyps: Sequence[str], refs: Sequence[str]) -> np.ndarray:
    """One row of sufficient statistics per sentence pair (sacrebleu's for BLEU/chrF; edits and reference
    words for WER); `score_from_statistics` of their column sums is the corpus score."""
    h, r = _check(hyps, refs)
    if not h:
        return np.zeros((0, 2 if name == "wer" else 0))
    return _wer_stats(h, r) if name == "wer" else _sacrebleu_stats(name, h, r)


def score_from_statistics(name: LexicalMetric, summed: np.ndarray) -> float:
    """The corpus score (0–100) of summed sentence statistics."""
    if name == "wer":
        edits, words = float(summed[0]), float(summed[1])
        return math.nan if words == 0 else 100.0 * edits / words
    metric = _metric(name)
    return float(metric._compute_score_from_stats([int(x) for x in summed]).score)


# -- public scores --------------------------------------------------------------------------------------------
def corpus_score(name: LexicalMetric, hyps: Sequence[str], refs: Sequence[str]) -> float:
    """Corpus BLEU or chrF (sacrebleu defaults: 13a tokenisation, exponential smoothing; chrF2, character
    6-grams), or corpus WER ×100 (all edits / all reference words, as `jiwer.wer` over the lists). An empty
    hypothesis scores as an empty translation (every reference word deleted). No pairs → nan."""
    stats = sentence_statistics(name, hyps, refs)
    if stats.shape[0] == 0:
        return math.nan
    return score_from_statistics(name, stats.sum(axis=0))


def sentence_scores(name: LexicalMetric, hyps: Sequence[str], refs: Sequence[str]) -> list[float]:
    """Each pair's own score: sentence BLEU (sacrebleu's `sentence_bleu`, exponential smoothing), sentence
    chrF, sentence WER ×100 (may exceed 100 when the hypothesis adds words)."""
    stats = sentence_statistics(name, hyps, refs)
    if name == "bleu":
        from sacrebleu.metrics import BLEU

        bleu = BLEU(effective_order=True)  # sacrebleu's sentence-level default
        return [float(bleu._compute_score_from_stats([int(x) for x in row]).score) for row in stats]
    return [score_from_statistics(name, row) for row in stats]


@dataclass(frozen=True)
class CorpusScore:
    """A corpus score with its percentile-bootstrap CI over sentences."""

    score: float
    ci_low: float
    ci_high: float
    n: int


def bootstrap_corpus_score(name: LexicalMetric, hyps: Sequence[str], refs: Sequence[str], *,
                           n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> CorpusScore:
    """Corpus score and a percentile-bootstrap CI: sentences are resampled with replacement and each
    resample's summed statistics re-scored. Fewer than 2 pairs → CI (nan, nan)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    stats = sentence_statistics(name, hyps, refs)
    n = stats.shape[0]
    if n == 0:
        return CorpusScore(math.nan, math.nan, math.nan, 0)
    score = score_from_statistics(name, stats.sum(axis=0))
    if n < 2 or n_resamples < 1:
        return CorpusScore(score, math.nan, math.nan, n)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)  # how often each sentence is drawn
    sums = weights @ stats
    values = np.array([score_from_statistics(name, row) for row in sums], dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return CorpusScore(score, math.nan, math.nan, n)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha])
    return CorpusScore(score, float(lo), float(hi), n)


__all__ = [
    "LEXICAL_METRICS",
    "CorpusScore",
    "LexicalMetric",
    "TextNormalization",
    "bootstrap_corpus_score",
    "corpus_score",
    "score_from_statistics",
    "sentence_scores",
    "sentence_statistics",
]
