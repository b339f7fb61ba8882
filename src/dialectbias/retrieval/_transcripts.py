"""Retrieval of dialect-only transcripts for a standard-language query (Bengali paper §3.1: Sami et al. 2025's
transcript-based Pipeline 1, which shows dialect text as context; the Bengali paper itself uses their
Pipeline 2, the standard/dialect pairs of `_hybrid`).

The same hybrid retriever as for pairs, over the transcript text instead of a standard side, and only within
the target dialect (another dialect's speech would show the wrong style):
- candidates: the `pool` best dense cosines and the `pool` best BM25 scores among the dialect's transcripts;
- score = hybrid = w_dense · dense_rel + w_sparse · sparse_rel, with the adaptive weights of `RetrievalConfig`
  (0.7/0.3, or 0.3/0.7 for `[[SHORT]]` queries) and the same pool scaling (`_scoring`);
- no dialect bonus (every candidate is of the target dialect), no character similarity (a sentence against a
  multi-sentence transcript: the ratio measures length, not likeness), no deep search (the dense half always
  finds candidates). Ties go to the earlier row.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from dialectbias.data import Transcript
from dialectbias.retrieval._dense import DenseIndex
from dialectbias.retrieval._scoring import RetrievalConfig, by_max, minmax
from dialectbias.retrieval._sparse import SparseIndex
from dialectbias.text import NormalizedQuery


class TranscriptHit(BaseModel):
    """One retrieved transcript with the scores that ranked it."""

    transcript_id: str
    text: str
    dialect: str
    district: str
    source: str
    split: str | None
    dense: float
    sparse: float
    score: float

    def explain(self) -> str:
        return f"score {self.score:.3f} (hybrid); dense cosine {self.dense:.3f}, BM25 {self.sparse:.3f}"


class TranscriptIndex:
    """Dense + sparse search over the transcripts' text, per dialect."""

    def __init__(self, transcripts: list[Transcript], vectors: np.ndarray) -> None:
        self.transcripts = transcripts
        dialects = [t.dialect for t in transcripts]
        self._dialects = np.asarray(dialects)
        self._dialect_set = frozenset(dialects)
        self._dense = DenseIndex(vectors, dialects)
        self._sparse = SparseIndex([t.text_norm for t in transcripts])

    def dialects(self) -> list[str]:
        return sorted(self._dialect_set)

    def search(self, q: NormalizedQuery, vector: np.ndarray, dialect: str, k: int,
               config: RetrievalConfig) -> list[TranscriptHit]:
        """The k best transcripts of `dialect` for the query; empty when the dialect has none."""
        if k <= 0 or not q.normalized or dialect not in self._dialect_set:
            return []
        pool = config.pool_size(k, q.short)
        mask = self._dialects == dialect
        sparse_all = self._sparse.scores(q.tokens)
        rows = dict.fromkeys(int(r) for r in self._dense.search(vector, pool, dialect)[0])
        masked = np.where(mask, sparse_all, 0.0)
        positive = np.flatnonzero(masked > 0)
        if positive.size > pool:
            positive = positive[np.argpartition(-masked[positive], pool - 1)[:pool]]
        rows.update(dict.fromkeys(int(r) for r in positive))
        idx = np.fromiter(rows, dtype=np.int64, count=len(rows))
        if idx.size == 0:
            return []
        dense = self._dense.cosines(vector, idx)
        raw_sparse = sparse_all[idx].astype(np.float64)
        w_dense, w_sparse = config.weights(q.short)
        score = w_dense * minmax(dense) + w_sparse * by_max(raw_sparse)
        order = sorted(range(idx.size), key=lambda j: (-score[j], int(idx[j])))[:k]
        return [TranscriptHit(transcript_id=t.id, text=t.text, dialect=t.dialect, district=t.district,
                              source=t.source, split=t.split, dense=float(dense[j]), sparse=float(raw_sparse[j]),
                              score=float(score[j]))
                for j in order for t in (self.transcripts[int(idx[j])],)]
