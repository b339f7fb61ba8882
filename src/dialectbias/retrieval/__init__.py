"""Hybrid FAISS + BM25 retrieval over parallel standard/dialect pairs (SPEC §4 P1; Bengali paper §3.1.2).

Needs the `retrieval` extra: pip install 'dialectbias[retrieval]'."""

from dialectbias.retrieval._embedders import DEFAULT_EMBEDDER, Embedder, load_embedder
from dialectbias.retrieval._freshness import open_manifest
from dialectbias.retrieval._hybrid import BuildStats, HybridIndex
from dialectbias.retrieval._persist import Manifest, default_index_dir
from dialectbias.retrieval._scoring import Hit, RetrievalConfig
from dialectbias.retrieval._sparse import bm25_tokens

__all__ = ["DEFAULT_EMBEDDER", "BuildStats", "Embedder", "Hit", "HybridIndex", "Manifest", "RetrievalConfig",
           "bm25_tokens", "default_index_dir", "load_embedder", "open_manifest"]
