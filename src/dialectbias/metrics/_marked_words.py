"""Marked words (German paper §6.1 after Cheng et al. 2023): the words that set the profiles written for one
group of writers apart from another's, by the weighted log-odds ratio with an informative Dirichlet prior
(`log_odds_dirichlet`, Monroe et al. 2008).

The paper runs it per task × model × dialect on the decision task's profiles, dialect writers vs standard
writers, with "texts from unrelated tasks and both speaker types as a prior". Words are the tokens of
`dialectbias.text.tokenize` (so Bengali vowel signs stay in their word), lowercased by default; tokens
without a letter (numbers) are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from dialectbias.metrics._probes import log_odds_dirichlet
from dialectbias.text import count_words

Z_SIGNIFICANT = 1.96  # |z| > 1.96: p < 0.05, two-sided (SPEC §4 P4 "Marked words")


class MarkedWord(BaseModel):
    """One word's z-score: > 0 marks corpus a (e.g. the dialect writers' profiles), < 0 corpus b."""

    model_config = ConfigDict(frozen=True)

    word: str
    z: float
    side: Literal["a", "b"]
    rank: int
    count_a: int
    count_b: int
    prior: int
    significant: bool


def marked_words(
    texts_a: Iterable[str], texts_b: Iterable[str], prior_texts: Iterable[str], *, top: int = 10,
    lowercase: bool = True, min_count: int = 1, significant_only: bool = False,
) -> list[MarkedWord]:
    """The `top` words with the largest z for side a and the `top` with the most negative z for side b.

    `prior_texts` give the Dirichlet prior's counts α (words of a or b missing from them get α = 1, see
    `log_odds_dirichlet`). Words seen fewer than `min_count` times in a and b together are skipped;
    `significant_only` keeps |z| > 1.96. Ranks start at 1 on each side; ties are broken by the word.
    """
    ca, cb = count_words(texts_a, lowercase=lowercase), count_words(texts_b, lowercase=lowercase)
    prior = count_words(prior_texts, lowercase=lowercase)
    if not ca or not cb:
        return []
    z = log_odds_dirichlet(ca, cb, prior)
    scored = [(w, s) for w, s in z.items() if not math.isnan(s) and ca.get(w, 0) + cb.get(w, 0) >= min_count]
    out: list[MarkedWord] = []
    sides: tuple[tuple[Literal["a", "b"], float], ...] = (("a", 1.0), ("b", -1.0))
    for side, sign in sides:
        ranked = sorted((ws for ws in scored if sign * ws[1] > 0), key=lambda ws: (-sign * ws[1], ws[0]))
        if significant_only:
            ranked = [ws for ws in ranked if abs(ws[1]) > Z_SIGNIFICANT]
        for rank, (w, s) in enumerate(ranked[:top], start=1):
            out.append(MarkedWord(word=w, z=s, side=side, rank=rank, count_a=ca.get(w, 0), count_b=cb.get(w, 0),
                                  prior=prior.get(w, 0), significant=abs(s) > Z_SIGNIFICANT))
    return out


__all__ = ["Z_SIGNIFICANT", "MarkedWord", "marked_words"]
