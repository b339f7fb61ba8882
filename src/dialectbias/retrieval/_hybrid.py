"""The hybrid FAISS + BM25 index over parallel pairs, with adaptive weights, deep-search fallback and blended
rerank (SPEC §4 P1; Bengali paper §3.1.2). Scoring formulas: `_scoring.py`."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Collection
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from dialectbias.data import Corpus, ParallelPair, Transcript, describe_changes, load_corpus
from dialectbias.errors import ConfigError, DataError
from dialectbias.retrieval import _freshness, _persist
from dialectbias.retrieval._dense import DenseIndex
from dialectbias.retrieval._deps import missing
from dialectbias.retrieval._embedders import Embedder, load_embedder
from dialectbias.retrieval._scoring import Hit, RetrievalConfig, Via, blended, by_max, minmax
from dialectbias.retrieval._sparse import SparseIndex
from dialectbias.retrieval._transcripts import TranscriptHit, TranscriptIndex
from dialectbias.text import NormalizedQuery, match_key, match_tokens, normalize_query


class BuildStats(BaseModel):
    """What a build did."""

    pairs: int
    excluded: int
    #: pairs whose vector was computed by this build, and the distinct sentences that took
    embedded: int
    texts_embedded: int
    #: pairs whose vector came from the index already in the folder
    reused: int
    seconds: float
    out_dir: str
    #: dialect-only transcripts indexed, left out by split, embedded now and reused
    transcripts: int = 0
    transcripts_excluded: int = 0
    transcripts_embedded: int = 0
    transcripts_reused: int = 0


class HybridIndex:
    """Dense + sparse retrieval over the standard side of parallel pairs; dialect is a filterable field."""

    def __init__(self, pairs: list[ParallelPair], vectors: np.ndarray, manifest: _persist.Manifest,
                 out_dir: Path, embedder: Embedder | None = None, transcripts: list[Transcript] | None = None,
                 transcript_vectors: np.ndarray | None = None) -> None:
        self.pairs = pairs
        #: dialect-only context (Bengali paper §3.1 Pipeline 1), searched by `search_transcripts`; None: none
        self.transcripts = TranscriptIndex(transcripts, transcript_vectors if transcript_vectors is not None
                                           else np.zeros((0, vectors.shape[1]), dtype=np.float32)) \
            if transcripts else None
        self.manifest = manifest
        self.out_dir = out_dir
        self.config = manifest.config
        self.build_stats: BuildStats | None = None
        self._embedder = embedder
        self._embed_lock = threading.Lock()  # the embedder is loaded once and used by one thread at a time
        self._dialects = np.asarray([p.dialect for p in pairs])
        self._dialect_set = frozenset(p.dialect for p in pairs)
        self._masks = {d: self._dialects == d for d in self._dialect_set}
        self._dialect_norms = [p.dialect_norm for p in pairs]
        self._dense = DenseIndex(vectors, [p.dialect for p in pairs])
        self._sparse = SparseIndex([p.standard_norm for p in pairs])
        self._standards = frozenset(p.standard_norm for p in pairs)
        try:
            from rapidfuzz import fuzz
        except ImportError as exc:
            raise missing("rapidfuzz", "the character similarity of the rerank", exc) from None
        self._ratio = fuzz.ratio

    # -- building and loading -------------------------------------------------------------------------------

    @classmethod
    def build(cls, corpus: Corpus | str | Path, *, embedder: Embedder | str | None = None, out_dir: str | Path,
              exclude_splits: Collection[str] = (), config: RetrievalConfig | None = None,
              progress: Callable[[int, int], None] | None = None, batch_size: int = 256) -> HybridIndex:
        """Embed the corpus and persist the index in `out_dir`. Each distinct normalised standard sentence is
        embedded once; when `out_dir` already holds an index built with the same embedder, only pairs whose
        standard sentence it does not hold are embedded (pairs with a new id and a known sentence reuse its
        vector); pairs no longer in the corpus go."""
        start = time.perf_counter()
        if not isinstance(corpus, Corpus):
            corpus = load_corpus(corpus)
        model = embedder if embedder is not None and not isinstance(embedder, str) else load_embedder(embedder)
        out = Path(out_dir)
        excluded_splits = sorted(set(exclude_splits))
        pairs = [p for p in corpus.pairs if p.split not in excluded_splits]
        if not pairs:
            raise DataError(f"{corpus.path or corpus.name}: no pairs left after excluding split(s) "
                            f"{', '.join(excluded_splits)}")
        # a vector depends only on the normalised standard text: embed each new text once (Vashantor's five
        # dialect files share their standard sentences: 2,263 texts for 11,250 pairs)
        known = cls._reusable(out, model)
        reused = sum(p.standard_norm in known for p in pairs)
        n_texts = _embed_new([p.standard_norm for p in pairs], known, model, batch_size, progress)
        vectors = np.stack([known[p.standard_norm] for p in pairs]).astype(np.float32) if pairs else \
            np.zeros((0, model.dim), dtype=np.float32)
        # dialect-only transcripts: their own text is embedded (as a passage), reused by text like pairs
        transcripts = [t for t in corpus.transcripts if t.split not in excluded_splits]
        known_t = cls._reusable_transcripts(out, model) if transcripts else {}
        reused_t = sum(t.text_norm in known_t for t in transcripts)
        n_texts_t = _embed_new([t.text_norm for t in transcripts], known_t, model, batch_size, progress)
        t_vectors = np.stack([known_t[t.text_norm] for t in transcripts]).astype(np.float32) if transcripts else \
            np.zeros((0, model.dim), dtype=np.float32)
        manifest = _persist.Manifest(corpus=corpus.name, corpus_path=str(corpus.path) if corpus.path else None,
                                     embedder=model.spec, embedder_identity=model.identity, dim=model.dim,
                                     pairs=len(pairs), exclude_splits=excluded_splits,
                                     excluded=len(corpus.pairs) - len(pairs), config=config or RetrievalConfig(),
                                     corpus_fingerprint=corpus.fingerprint,
                                     dialects=dict(sorted(Counter(p.dialect for p in pairs).items())),
                                     transcripts=len(transcripts),
                                     transcripts_excluded=len(corpus.transcripts) - len(transcripts),
                                     transcript_dialects=dict(sorted(Counter(t.dialect for t in transcripts).items())))
        _persist.save(out, manifest, pairs, vectors, transcripts, t_vectors)
        index = cls(pairs, vectors, manifest, out, model, transcripts, t_vectors)
        index.build_stats = BuildStats(pairs=len(pairs), excluded=manifest.excluded, embedded=len(pairs) - reused,
                                       texts_embedded=n_texts, reused=reused,
                                       seconds=time.perf_counter() - start, out_dir=str(out),
                                       transcripts=len(transcripts), transcripts_excluded=manifest.transcripts_excluded,
                                       transcripts_embedded=n_texts_t, transcripts_reused=reused_t)
        return index

    @staticmethod
    def _reusable_transcripts(out: Path, model: Embedder) -> dict[str, np.ndarray]:
        """normalised transcript text → vector of an existing index in `out` built with the same embedder."""
        try:
            manifest = _persist.read_manifest(out)
            if manifest.embedder_identity != model.identity or manifest.dim != model.dim:
                return {}
            rows, vectors = _persist.read_transcripts(out, manifest)
        except DataError:
            return {}
        return {t.text_norm: vectors[i] for i, t in enumerate(rows)}

    @staticmethod
    def _reusable(out: Path, model: Embedder) -> dict[str, np.ndarray]:
        """normalised standard text → vector of an existing index in `out` built with the same embedder (empty
        otherwise)."""
        try:
            manifest = _persist.read_manifest(out)
            if manifest.embedder_identity != model.identity or manifest.dim != model.dim:
                return {}
            pairs, vectors = _persist.read_payload(out, manifest)
        except DataError:
            return {}
        return {p.standard_norm: vectors[i] for i, p in enumerate(pairs)}

    @classmethod
    def refresh(cls, out_dir: str | Path, corpus: str | Path | None = None) -> str | None:
        """Rebuild the index in `out_dir` when its corpus (`corpus`, default: the one it was built from, while
        still there) changed since it was built, or when it records no corpus fingerprint, with the embedder,
        excluded splits and settings it was built with. Returns what changed, None when it was current."""
        out = Path(out_dir)
        manifest = _persist.read_manifest(out)
        path = _freshness.corpus_to_check(manifest, corpus)
        if path is None:
            return None
        changes = _freshness.corpus_changes(out, manifest, path)[0] if manifest.corpus_fingerprint is not None \
            else ["no corpus fingerprint recorded"]
        if not changes:
            return None
        cls.build(path, embedder=manifest.embedder, out_dir=out, exclude_splits=manifest.exclude_splits,
                  config=manifest.config)
        return describe_changes(changes)

    @classmethod
    def load(cls, out_dir: str | Path, *, corpus: str | Path | None = None, embedder: Embedder | str | None = None,
             config: RetrievalConfig | None = None) -> HybridIndex:
        """Open a built index without re-embedding. It must match `corpus` (default: the corpus file it was built
        from, while that is still there): a changed corpus is an error naming both fingerprints and the rebuild
        command. The query embedder is loaded on first search (the one the index was built with); an
        `embedder` other than that one is an error naming the folder."""
        out = Path(out_dir)
        manifest = _freshness.open_manifest(out, corpus)
        model: Embedder | None = None
        if embedder is not None:
            model = load_embedder(embedder) if isinstance(embedder, str) else embedder
            if model.identity != manifest.embedder_identity:
                raise ConfigError(f"{out}: the index was built with embedder {manifest.embedder_identity!r}, not "
                                  f"{model.identity!r}; rebuild it with `dialectbias index build --embedder` or "
                                  "query it with its own embedder")
        pairs, vectors = _persist.read_payload(out, manifest)
        transcripts, t_vectors = _persist.read_transcripts(out, manifest)
        if config is not None:
            manifest = manifest.model_copy(update={"config": config})
        return cls(pairs, vectors, manifest, out, model, transcripts, t_vectors)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            model = load_embedder(self.manifest.embedder)
            if model.identity != self.manifest.embedder_identity:
                raise ConfigError(f"{self.out_dir}: the index was built with {self.manifest.embedder_identity!r}, "
                                  f"but {self.manifest.embedder!r} now loads {model.identity!r}; rebuild the index")
            self._embedder = model
        return self._embedder

    # -- queries ----------------------------------------------------------------------------------------------

    def dialects(self) -> list[str]:
        return sorted(self._dialect_set)

    def contains_standard(self, text: str) -> bool:
        """True when `text`, normalised, is the standard side of a pair in the index (a leakage check)."""
        return match_key(text) in self._standards

    def search(self, query: str, *, dialect: str | None = None, k: int = 5) -> list[Hit]:
        """The top-k pairs for a standard-language query, best first, every score attached."""
        q = normalize_query(query, short_tokens=self.config.short_tokens)
        if not q.normalized:
            return []
        with self._embed_lock:
            vector = self.embedder.embed_query(q.normalized)
        return self.search_embedded(q, vector, dialect=dialect, k=k)

    def transcript_dialects(self) -> list[str]:
        """Dialects the index holds dialect-only transcripts of."""
        return self.transcripts.dialects() if self.transcripts is not None else []

    def search_transcripts(self, query: str | NormalizedQuery, vector: np.ndarray | None = None, *, dialect: str,
                           k: int = 3) -> list[TranscriptHit]:
        """The k dialect-only transcripts of `dialect` most similar to a standard-language query (`_transcripts`);
        empty when the index holds none of that dialect."""
        if self.transcripts is None:
            return []
        q = query if isinstance(query, NormalizedQuery) else normalize_query(query,
                                                                             short_tokens=self.config.short_tokens)
        if not q.normalized:
            return []
        if vector is None:
            with self._embed_lock:
                vector = self.embedder.embed_query(q.normalized)
        return self.transcripts.search(q, vector, dialect.strip().lower().replace(" ", "_"), k, self.config)

    def search_embedded(self, query: str | NormalizedQuery, vector: np.ndarray, *, dialect: str | None = None,
                        k: int = 5) -> list[Hit]:
        """`search` with the query already embedded (what the latency benchmark times)."""
        cfg = self.config
        q = query if isinstance(query, NormalizedQuery) else normalize_query(query, short_tokens=cfg.short_tokens)
        target = self._target(dialect)
        tagged = cfg.short_tag_in_query and q.short  # the paper's BM25 query: tokens + the [[SHORT]] tag
        sparse_all = self._sparse.scores(tuple(match_tokens(q.tagged)) if tagged else q.tokens)
        soft = target is None or not cfg.dialect_filter
        hits = self._search(q, vector, sparse_all, target, k, widen=soft)
        if not soft and len(hits) < k:  # the dialect alone has too few examples: other dialects fill the rest
            others = [h for h in self._search(q, vector, sparse_all, target, k + len(hits), widen=True)
                      if h.dialect != target]
            hits += others[:k - len(hits)]
        return hits

    def _search(self, q: NormalizedQuery, vector: np.ndarray, sparse_all: np.ndarray, target: str | None, k: int,
                *, widen: bool) -> list[Hit]:
        """Pool candidates (dense and sparse, from the target dialect, and from all dialects when `widen`), run
        deep search when fewer than `min_unique` unique examples of the target dialect share a query token,
        then rank."""
        cfg = self.config
        pool = cfg.pool_size(k, q.short)
        parts: list[str | None] = [target] if target is not None else []
        if widen or target is None:
            parts.append(None)
        rows: dict[int, Via] = {}
        for part in parts:
            for row in self._dense.search(vector, pool, part)[0]:
                rows.setdefault(int(row), "hybrid")
            for row in _top(sparse_all, pool, self._mask(part)):
                rows.setdefault(int(row), "hybrid")
        surviving = {self._dialect_norms[r] for r in rows
                     if sparse_all[r] > 0 and (target is None or self._dialects[r] == target)}
        deep = np.zeros(0)
        if len(surviving) < cfg.min_unique and q.tokens:
            deep = self._sparse.deep_scores(q.tokens, cutoff=cfg.deep_cutoff, limit=cfg.deep_terms_per_token)
            for row in _top(deep, pool, self._mask(target)):
                rows.setdefault(int(row), "deep_search")
        return self._rank(q, vector, rows, sparse_all, deep, target, k)

    def _target(self, dialect: str | None) -> str | None:
        if dialect is None:
            return None
        name = dialect.strip().lower().replace(" ", "_")
        if name not in self._dialect_set:
            raise DataError(f"{self.out_dir}: no pairs of dialect {dialect!r} in this index (it has: "
                            f"{', '.join(self.dialects())})")
        return name

    def _mask(self, dialect: str | None) -> np.ndarray | None:
        return None if dialect is None else self._masks[dialect]

    def _rank(self, q: NormalizedQuery, vector: np.ndarray, rows: dict[int, Via], sparse_all: np.ndarray,
              deep: np.ndarray, target: str | None, k: int) -> list[Hit]:
        cfg = self.config
        idx = np.fromiter(rows, dtype=np.int64, count=len(rows))
        if idx.size == 0:
            return []
        via = [rows[int(r)] for r in idx]
        dense = self._dense.cosines(vector, idx)
        raw_sparse = sparse_all[idx].astype(np.float64)
        sparse_rel = by_max(raw_sparse)
        if deep.size:  # deep search ran: a candidate its token-level score ranks higher counts as found by it
            is_deep = deep[idx] > sparse_rel
            sparse_rel = np.where(is_deep, deep[idx], sparse_rel)
            raw_sparse = np.where(is_deep, deep[idx], raw_sparse)
            via = ["deep_search" if d else v for v, d in zip(via, is_deep, strict=True)]
        w_dense, w_sparse = cfg.weights(q.short)
        hybrid = w_dense * minmax(dense) + w_sparse * sparse_rel
        char = np.asarray([self._ratio(q.normalized, self.pairs[r].standard_norm) / 100.0 for r in idx])
        same = self._dialects[idx] == target if target is not None else np.zeros(idx.size, dtype=bool)
        bonus, score = blended(hybrid, same, char, cfg)
        hits: list[Hit] = []
        seen: set[tuple[str, str]] = set()
        for j in sorted(range(idx.size), key=lambda j: (-score[j], int(idx[j]))):
            pair = self.pairs[int(idx[j])]
            key = (pair.dialect, pair.dialect_norm)
            if key in seen:
                continue
            seen.add(key)
            hits.append(Hit(pair_id=pair.id, standard=pair.standard, dialect_text=pair.dialect_text,
                            dialect=pair.dialect, source=pair.source, split=pair.split, dense=float(dense[j]),
                            sparse=float(raw_sparse[j]), hybrid=float(hybrid[j]), char_sim=float(char[j]),
                            dialect_bonus=float(bonus[j]), score=float(score[j]), via=via[j]))
            if len(hits) == k:
                break
        return hits


def _top(scores: np.ndarray, n: int, mask: np.ndarray | None) -> np.ndarray:
    """Rows of the `n` best positive scores (within `mask`)."""
    s = scores if mask is None else np.where(mask, scores, 0.0)
    positive = np.flatnonzero(s > 0)
    if positive.size <= n:
        return positive
    part = np.argpartition(-s[positive], n - 1)[:n]
    return positive[part]


def _embed_new(texts: list[str], known: dict[str, np.ndarray], model: Embedder, batch_size: int,
               progress: Callable[[int, int], None] | None) -> int:
    """Embed (as passages) each distinct text not in `known` once, in batches, adding it to `known`; how many
    were embedded."""
    new = list(dict.fromkeys(t for t in texts if t not in known))
    for lo in range(0, len(new), batch_size):
        chunk = new[lo:lo + batch_size]
        known.update(zip(chunk, model.embed_passages(chunk), strict=True))
        if progress is not None:
            progress(min(lo + batch_size, len(new)), len(new))
    return len(new)
