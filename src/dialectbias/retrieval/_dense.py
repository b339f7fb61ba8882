"""FAISS inner-product search over L2-normalised vectors (= cosine), overall and per dialect (SPEC §4 P1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dialectbias.retrieval._deps import missing


class DenseIndex:
    """Exact (flat) inner-product indexes: one over all rows and one per dialect, each mapping back to rows."""

    def __init__(self, vectors: np.ndarray, dialects: Sequence[str]) -> None:
        try:
            import faiss
        except ImportError as exc:
            raise missing("faiss-cpu", "the dense index", exc) from None
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.dim = self.vectors.shape[1]
        # a faiss index: its types show the C++ search(n, x, k, …), its Python wrapper takes search(x, k)
        self._parts: dict[str | None, tuple[Any, np.ndarray]] = {}
        groups: dict[str | None, list[int]] = {None: list(range(len(dialects)))}
        for row, dialect in enumerate(dialects):
            groups.setdefault(dialect, []).append(row)
        for key, rows in groups.items():
            index = faiss.IndexFlatIP(self.dim)
            ids = np.asarray(rows, dtype=np.int64)
            if len(ids):
                index.add(self.vectors[ids])
            self._parts[key] = (index, ids)

    def search(self, query: np.ndarray, n: int, dialect: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cosines) of the `n` nearest rows, overall or within one dialect."""
        index, ids = self._parts[dialect]
        n = min(n, len(ids))
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        sims, local = index.search(np.ascontiguousarray(query[None, :], dtype=np.float32), n)
        keep = local[0] >= 0
        return ids[local[0][keep]], sims[0][keep]

    def cosines(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self.vectors[rows] @ query.astype(np.float32)
