"""The hybrid score and the blended rerank (SPEC §4 P1; Bengali paper §3.1.2 "Adaptive Hybrid Retrieval" and
"Fallback Search and Blended Scoring").

Within a candidate pool:
- dense_rel = min-max scaled cosine over the pool (e5 cosines bunch high: only their order is used);
- sparse_rel = BM25 / the pool's best BM25 (0 = no shared token); a deep-search candidate brings its
  token-level score, already in [0, 1];
- hybrid = w_dense · dense_rel + w_sparse · sparse_rel, with (0.7, 0.3) for normal queries and (0.3, 0.7) for
  `[[SHORT]]` queries (fewer than 4 tokens), whose candidate pool is also widened (×3);
- score = hybrid + dialect_bonus · [pair dialect = target dialect] + char_weight · char_sim, where char_sim
  is the rapidfuzz ratio / 100 between the normalised query and the pair's normalised standard side.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

#: how a hit was found: the hybrid dense + BM25 pool, or the token-level deep search
Via = Literal["hybrid", "deep_search"]


class RetrievalConfig(BaseModel):
    """Weights and pool sizes of the hybrid retriever; the defaults are SPEC §4 P1's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dense_weight: float = Field(0.7, ge=0)
    sparse_weight: float = Field(0.3, ge=0)
    short_dense_weight: float = Field(0.3, ge=0)
    short_sparse_weight: float = Field(0.7, ge=0)
    #: a query with fewer tokens is `[[SHORT]]`
    short_tokens: int = Field(4, ge=1)
    #: candidates taken from each of dense and sparse search (at least 4·k)
    pool: int = Field(20, ge=1)
    short_pool_factor: int = Field(3, ge=1)
    #: with a target dialect, candidates come from that dialect only (other dialects fill in after its own when it
    #: has fewer than k examples); False pools all dialects and leaves the choice to the dialect bonus
    dialect_filter: bool = True
    #: append the `[[SHORT]]` tag to a short query's BM25 tokens, as the Bengali paper's query does (§3.1.2); a
    #: pair scores for it only if it holds the word "short" (False: the tag only switches weights and pool)
    short_tag_in_query: bool = False
    dialect_bonus: float = Field(0.2, ge=0)
    char_weight: float = Field(0.1, ge=0)
    #: deep search runs when fewer unique examples than this survive (same dialect, sharing a token)
    min_unique: int = Field(2, ge=1)
    deep_cutoff: float = Field(75.0, ge=0, le=100)
    deep_terms_per_token: int = Field(5, ge=1)

    def weights(self, short: bool) -> tuple[float, float]:
        """(dense, sparse) weights for a normal or a short query."""
        return (self.short_dense_weight, self.short_sparse_weight) if short else (self.dense_weight,
                                                                                  self.sparse_weight)

    def pool_size(self, k: int, short: bool) -> int:
        base = max(self.pool, 4 * k)
        return base * self.short_pool_factor if short else base


class Hit(BaseModel):
    """One retrieved pair with every score that ranked it."""

    pair_id: str
    standard: str
    dialect_text: str
    dialect: str
    source: str
    split: str | None
    #: cosine between query and the pair's standard side (rank only: e5 cosines bunch high)
    dense: float
    #: BM25 of the query tokens (via=hybrid) or the token-level deep-search score in [0, 1] (via=deep_search)
    sparse: float
    #: weighted pool-scaled dense and sparse
    hybrid: float
    char_sim: float
    dialect_bonus: float
    score: float
    via: Via

    def explain(self) -> str:
        """One line saying where the score comes from."""
        char_part = self.score - self.hybrid - self.dialect_bonus
        return (f"score {self.score:.3f} = hybrid {self.hybrid:.3f} + dialect bonus {self.dialect_bonus:.3f} + "
                f"character similarity {char_part:.3f} (ratio {self.char_sim:.2f}); dense cosine {self.dense:.3f}, "
                f"sparse {self.sparse:.3f}, via {self.via}")


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] over the pool; all 1.0 when every value is equal."""
    if values.size == 0:
        return values.astype(np.float64)
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 1e-12:
        return np.ones_like(values, dtype=np.float64)
    return (values.astype(np.float64) - lo) / (hi - lo)


def by_max(values: np.ndarray) -> np.ndarray:
    """Divide by the pool's best (non-negative scores); all 0 when the best is 0."""
    top = float(values.max()) if values.size else 0.0
    return values.astype(np.float64) / top if top > 0 else np.zeros_like(values, dtype=np.float64)


def blended(hybrid: np.ndarray, same_dialect: np.ndarray, char_sim: np.ndarray, config: RetrievalConfig,
            ) -> tuple[np.ndarray, np.ndarray]:
    """(dialect bonus per candidate, final score) = hybrid + bonus·match + char_weight·char_sim."""
    bonus = np.where(same_dialect, config.dialect_bonus, 0.0)
    return bonus, hybrid + bonus + config.char_weight * char_sim
