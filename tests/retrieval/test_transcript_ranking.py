"""The ranking of dialect-only transcripts (`retrieval/_transcripts.py`), checked by hand on set vectors:
score = 0.7 · min-max(dense cosine over the pool) + 0.3 · BM25 / pool's best BM25, within the target dialect
only (no dialect bonus, no character similarity)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("faiss")
pytest.importorskip("bm25s")


def transcript(tid: str, text: str, dialect: str) -> Any:
    from dialectbias.data import Transcript
    from dialectbias.text import match_key

    return Transcript(id=tid, text=text, dialect=dialect, district=dialect.title(), source="t.csv", split=None,
                      row=2, text_norm=match_key(text))


def unit(*v: float) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def test_hybrid_score_within_the_target_dialect_by_hand() -> None:
    from dialectbias.retrieval import RetrievalConfig
    from dialectbias.retrieval._transcripts import TranscriptIndex
    from dialectbias.text import normalize_query

    rows = [transcript("A", "হেতে ভাত খাইছে", "sylhet"),          # close in meaning, no shared word
            transcript("B", "আমি গাঙো মাছ ধরি", "sylhet"),        # farther, shares "আমি"
            transcript("C", "ইতা কিতা অইলো", "sylhet"),            # far, no shared word
            transcript("D", "আমি আজ বাজারে যাব কাল", "chittagong")]  # identical, but another dialect
    vectors = np.stack([unit(0.9, np.sqrt(1 - 0.81), 0), unit(0.6, 0.8, 0), unit(0, 1, 0), unit(1, 0, 0)])
    index = TranscriptIndex(rows, vectors)
    q = normalize_query("আমি আজ বাজারে যাব কাল")
    assert not q.short
    hits = index.search(q, unit(1, 0, 0), "sylhet", 3, RetrievalConfig())
    assert [h.transcript_id for h in hits] == ["B", "A", "C"]
    # dense min-max over {0.9, 0.6, 0.0}: A 1, B 2/3, C 0; BM25 only B (scaled to 1)
    assert [round(h.score, 6) for h in hits] == [round(0.7 * 2 / 3 + 0.3, 6), 0.7, 0.0]
    assert hits[0].sparse > 0 and hits[1].sparse == 0 and hits[1].dense == pytest.approx(0.9, abs=1e-6)
    assert [h.transcript_id for h in index.search(q, unit(1, 0, 0), "sylhet", 1, RetrievalConfig())] == ["B"]
    assert index.search(q, unit(1, 0, 0), "noakhali", 3, RetrievalConfig()) == []
    assert index.search(q, unit(1, 0, 0), "sylhet", 0, RetrievalConfig()) == []
    # other weights are the config's: dense only puts the closest first
    dense_only = RetrievalConfig(dense_weight=1.0, sparse_weight=0.0)
    assert [h.transcript_id for h in index.search(q, unit(1, 0, 0), "sylhet", 3, dense_only)] == ["A", "B", "C"]
