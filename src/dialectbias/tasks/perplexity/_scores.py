"""Perplexity arithmetic (German dialect-bias paper, App. C.2 "Does Bias Emerge because LLMs Treat Dialects as
Noisy Text?", Figure 14 "Mean perplexity results across models").

A text's perplexity is exp(−mean token logprob) over its scored tokens: exp(−S/n) with S the sum of the natural
log-probabilities of its n scored tokens (every token but the first, which has no prefix:
`dialectbias.providers._logprobs`). A group of texts (one model × variant) is summarised two ways:

- `per_text` (the paper's "mean perplexity", the default): the mean of the texts' perplexities;
- `pooled`: exp(−ΣS/Σn), the perplexity of all the group's tokens together (the corpus-level figure; long
  texts weigh more, and one odd text weighs less than in the mean).

A ratio of two variants (noisy/standard, dialect/standard, dialect/noisy) compares the two summaries on the items
that have both texts (paired), with a percentile-bootstrap CI resampling those items (pairs kept together).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

Aggregate = Literal["per_text", "pooled"]
AGGREGATES: tuple[Aggregate, ...] = ("per_text", "pooled")


def perplexity(logprobs: Sequence[float]) -> float:
    """exp(−mean(logprobs)) of one text's scored tokens; nan without any."""
    return text_perplexity(float(sum(logprobs)), len(logprobs))


def text_perplexity(logprob_sum: float, n_tokens: int) -> float:
    """exp(−S/n); nan when n is 0."""
    return math.exp(-logprob_sum / n_tokens) if n_tokens > 0 else math.nan


def summarize(sums: Sequence[float] | np.ndarray, counts: Sequence[int] | np.ndarray, how: Aggregate) -> float:
    """A group's perplexity: the mean of per-text perplexities (`per_text`) or exp(−ΣS/Σn) (`pooled`)."""
    s, n = np.asarray(sums, float), np.asarray(counts, float)
    if s.size == 0 or n.sum() == 0:
        return math.nan
    if how == "pooled":
        return math.exp(-s.sum() / n.sum())
    return float(np.mean(np.exp(-s / n)))


def _resampled(s: np.ndarray, n: np.ndarray, idx: np.ndarray, how: Aggregate) -> np.ndarray:
    """The group summary of each resample (rows of `idx`)."""
    if how == "pooled":
        return np.exp(-s[idx].sum(axis=1) / n[idx].sum(axis=1))
    return np.exp(-s / n)[idx].mean(axis=1)


def ratio_ci(num_sums: Sequence[float], num_counts: Sequence[int], den_sums: Sequence[float],
             den_counts: Sequence[int], how: Aggregate, *, n_resamples: int = 10_000, confidence: float = 0.95,
             seed: int = 0) -> tuple[float, float, float]:
    """(ratio, ci_low, ci_high) of summarize(numerator) / summarize(denominator) over paired texts (position i of
    each list is one item); the CI resamples items with replacement, pairs together. Fewer than 2 pairs: the
    ratio (nan for none) with a nan CI."""
    sn, nn = np.asarray(num_sums, float), np.asarray(num_counts, float)
    sd, nd = np.asarray(den_sums, float), np.asarray(den_counts, float)
    if not sn.size == nn.size == sd.size == nd.size:
        raise ValueError("the four lists must pair up (equal lengths)")
    if sn.size == 0:
        return math.nan, math.nan, math.nan
    ratio = summarize(sn, nn, how) / summarize(sd, nd, how)
    if sn.size < 2:
        return ratio, math.nan, math.nan
    rng = np.random.default_rng(seed)
    block = max(1, 2_000_000 // sn.size)
    out = []
    for start in range(0, n_resamples, block):
        idx = rng.integers(0, sn.size, size=(min(block, n_resamples - start), sn.size))
        out.append(_resampled(sn, nn, idx, how) / _resampled(sd, nd, idx, how))
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(np.concatenate(out), [alpha, 1.0 - alpha])
    return ratio, float(lo), float(hi)


__all__ = ["AGGREGATES", "Aggregate", "perplexity", "ratio_ci", "summarize", "text_perplexity"]
