"""BM25 over normalised tokens (bm25s) with our own tokenizer, and the token-level "deep search" fallback.

bm25s' default tokenizer splits on regex `\\w`, which excludes Unicode combining marks, so Bengali vowel signs
vanish ('আমি' → 'আম'); we pass it token lists from `dialectbias.text.match_tokens`, which keeps them.
Deep search (Bengali paper §3.1.2): each query token is searched on its own, expanded to the index vocabulary
terms that spell it closely (rapidfuzz ratio, for dialect/standard spelling variants and inflections), and
the per-token scores, each scaled to [0, 1], are averaged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dialectbias.retrieval._deps import missing
from dialectbias.text import match_tokens

#: characters of a shared prefix that make two tokens one stem in deep search
_STEM = 3


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def bm25_tokens(text: str) -> list[str]:
    """The tokens BM25 indexes and queries with: normalised, case-folded, combining marks kept."""
    return match_tokens(text)


class SparseIndex:
    """BM25 over the standard side of the pairs, row-aligned with the pair list."""

    def __init__(self, documents: Sequence[str]) -> None:
        try:
            import bm25s
            from rapidfuzz import fuzz, process
        except ImportError as exc:
            raise missing(exc.name or "bm25s", "the BM25 index", exc) from None
        self._extract, self._fuzz_ratio = process.extract, fuzz.ratio
        self.n = len(documents)
        self._bm25 = bm25s.BM25()
        corpus = [bm25_tokens(doc) for doc in documents]
        self._bm25.index(corpus, show_progress=False)
        self.vocab: dict[str, int] = {t: i for t, i in self._bm25.vocab_dict.items() if t}
        self._terms = list(self.vocab)
        self._by_prefix: dict[str, list[str]] = {}
        for term in self._terms:
            if len(term) >= _STEM:
                self._by_prefix.setdefault(term[:_STEM], []).append(term)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the unique query tokens known to the index (0 without overlap)."""
        known = [t for t in dict.fromkeys(tokens) if t in self.vocab]
        if not known or self.n == 0:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    def expand(self, token: str, *, cutoff: float, limit: int) -> list[str]:
        """The token itself (when indexed), up to `limit` vocabulary terms with rapidfuzz ratio ≥ `cutoff` (spelling
        variants), and up to `limit` terms sharing its stem: a common prefix of at least 3 characters covering
        60% of the shorter word (inflections: 'গরুগুলো' finds 'গরু', 'গরুর')."""
        found = [term for term, _, _ in self._extract(token, self._terms, scorer=self._fuzz_ratio,
                                                      score_cutoff=cutoff, limit=limit)]
        stems = [term for term in self._by_prefix.get(token[:_STEM], ())
                 if _common_prefix(term, token) >= max(_STEM, 0.6 * min(len(term), len(token)))]
        stems.sort(key=lambda term: (-_common_prefix(term, token), abs(len(term) - len(token)), term))
        return list(dict.fromkeys(([token] if token in self.vocab else []) + found + stems[:limit]))

    def deep_scores(self, tokens: Sequence[str], *, cutoff: float, limit: int) -> np.ndarray:
        """Token-by-token search: mean over query tokens of (BM25 of its expanded terms / that token's best)."""
        unique = list(dict.fromkeys(tokens))
        total = np.zeros(self.n, dtype=np.float32)
        if not unique:
            return total
        for token in unique:
            terms = self.expand(token, cutoff=cutoff, limit=limit)
            if not terms:
                continue
            s = np.asarray(self._bm25.get_scores(terms), dtype=np.float32)
            top = float(s.max()) if s.size else 0.0
            if top > 0:
                total += s / top
        return total / len(unique)
