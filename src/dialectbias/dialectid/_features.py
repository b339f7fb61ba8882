"""Character n-gram TF-IDF features, computed with numpy/scipy so a saved model loads without pickle.

Texts are first reduced to their words (`dialectbias.text` match key: NFC, Bengali digits as ASCII, no
zero-width characters, case-folded; then punctuation dropped by the Bengali-safe tokenizer, so a danda or a
comma is never a feature). N-grams are scikit-learn's `char_wb` ones: each word padded with a space on both
sides, every n-gram of length lo..hi inside it, a word shorter than n counted once. The weights are
scikit-learn's TF-IDF: tf (or 1 + log tf when sublinear) × idf, each row scaled to unit L2 norm.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from dialectbias.text import match_key, tokenize


def prepare(text: str) -> str:
    """The form features are taken from: the match key's words joined by single spaces."""
    return " ".join(tokenize(match_key(text)))


def char_wb_ngrams(text: str, lo: int, hi: int) -> list[str]:
    """scikit-learn's `char_wb` n-grams of `text` (already prepared), in its order."""
    out: list[str] = []
    for word in text.split():
        w = f" {word} "
        size = len(w)
        for n in range(lo, hi + 1):
            offset = 0
            out.append(w[:n])
            while offset + n < size:
                offset += 1
                out.append(w[offset:offset + n])
            if offset == 0:  # a word shorter than n is counted once
                break
    return out


@dataclass(frozen=True)
class NgramAnalyzer:
    """The analyzer scikit-learn's vectorizer is trained with (a callable: the same code extracts the features
    when a saved model predicts)."""

    lo: int
    hi: int

    def __call__(self, text: str) -> list[str]:
        return char_wb_ngrams(prepare(text), self.lo, self.hi)


@dataclass(frozen=True)
class CharNgramFeatures:
    """A fitted vocabulary: n-gram → column, its idf, and the n-gram range."""

    terms: tuple[str, ...]
    idf: np.ndarray
    ngram_range: tuple[int, int]
    sublinear_tf: bool = True
    #: term → column, built from `terms`
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.terms) != len(self.idf):
            raise ValueError(f"{len(self.terms)} terms but {len(self.idf)} idf values")
        object.__setattr__(self, "_index", {t: i for i, t in enumerate(self.terms)})

    @property
    def n_features(self) -> int:
        return len(self.terms)

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        """The TF-IDF rows of `texts` (float64, L2-normalised; a text with no known n-gram is a zero row)."""
        index = self._index
        analyze = NgramAnalyzer(*self.ngram_range)
        indptr: list[int] = [0]
        indices: list[int] = []
        data: list[int] = []
        for text in texts:
            counts: dict[int, int] = {}
            for gram in analyze(text):
                j = index.get(gram)
                if j is not None:
                    counts[j] = counts.get(j, 0) + 1
            cols = sorted(counts)
            indices.extend(cols)
            data.extend(counts[j] for j in cols)
            indptr.append(len(indices))
        x = sp.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                           np.asarray(indptr, dtype=np.int64)), shape=(len(indptr) - 1, self.n_features))
        if self.sublinear_tf:
            np.log(x.data, x.data)
            x.data += 1.0
        x = x @ sp.diags(self.idf)
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ x)


class FittedVectorizer(Protocol):
    """What `features_from_vectorizer` reads of a fitted scikit-learn TfidfVectorizer."""

    @property
    def vocabulary_(self) -> dict[str, int]: ...

    @property
    def idf_(self) -> np.ndarray: ...


def features_from_vectorizer(
    vectorizer: FittedVectorizer, ngram_range: Sequence[int], sublinear_tf: bool
) -> CharNgramFeatures:
    """The vocabulary and idf of a fitted scikit-learn TfidfVectorizer, in column order."""
    vocabulary = vectorizer.vocabulary_
    terms = [""] * len(vocabulary)
    for term, j in vocabulary.items():
        terms[j] = term
    idf = np.asarray(vectorizer.idf_, dtype=np.float64)
    return CharNgramFeatures(tuple(terms), idf, (int(ngram_range[0]), int(ngram_range[1])), sublinear_tf)
