"""The index folder: `manifest.json` (written last: its presence marks a complete index), `pairs.jsonl` (the
pairs, row order) and `vectors.npy` (their embeddings, row-aligned); with dialect-only transcripts also
`transcripts.jsonl` and `transcript_vectors.npy`. BM25 and FAISS are rebuilt from these on load (seconds; no
embedding)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ValidationError

from dialectbias.data import CorpusFingerprint, ParallelPair, Transcript
from dialectbias.errors import DataError
from dialectbias.retrieval._scoring import RetrievalConfig

FORMAT = 1
MANIFEST, PAIRS, VECTORS = "manifest.json", "pairs.jsonl", "vectors.npy"
TRANSCRIPTS, TRANSCRIPT_VECTORS = "transcripts.jsonl", "transcript_vectors.npy"


class Manifest(BaseModel):
    format: int = FORMAT
    corpus: str
    corpus_path: str | None = None
    embedder: str
    embedder_identity: str
    dim: int
    pairs: int
    exclude_splits: list[str] = []
    excluded: int = 0
    config: RetrievalConfig = RetrievalConfig()
    #: the corpus spec and data files the index was built from (None: built before indexes recorded it)
    corpus_fingerprint: CorpusFingerprint | None = None
    #: pairs per dialect (what a translate experiment's targets are checked against without loading the index)
    dialects: dict[str, int] = {}
    #: dialect-only transcripts indexed (0: none; an index built before transcripts existed reads as 0)
    transcripts: int = 0
    #: transcripts left out by `exclude_splits`
    transcripts_excluded: int = 0
    #: transcripts per dialect
    transcript_dialects: dict[str, int] = {}


def default_index_dir(corpus_path: str | Path) -> Path:
    """Where `dialectbias index build CORPUS.yaml` stores the index: `<corpus stem>.index/` next to the file."""
    path = Path(corpus_path)
    return path.parent / f"{path.stem}.index"


def save(out_dir: Path, manifest: Manifest, pairs: list[ParallelPair], vectors: np.ndarray,
         transcripts: list[Transcript] | None = None, transcript_vectors: np.ndarray | None = None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST).unlink(missing_ok=True)  # an interrupted save leaves no manifest: not loadable
    _write(out_dir, PAIRS, VECTORS, pairs, vectors)
    if transcripts:
        assert transcript_vectors is not None
        _write(out_dir, TRANSCRIPTS, TRANSCRIPT_VECTORS, transcripts, transcript_vectors)
    else:
        (out_dir / TRANSCRIPTS).unlink(missing_ok=True)
        (out_dir / TRANSCRIPT_VECTORS).unlink(missing_ok=True)
    tmp_man = out_dir / (MANIFEST + ".tmp")
    tmp_man.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp_man, out_dir / MANIFEST)


def _write(out_dir: Path, rows_name: str, vectors_name: str, rows: list[ParallelPair] | list[Transcript],
           vectors: np.ndarray) -> None:
    tmp = out_dir / (rows_name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row.model_dump_json() + "\n")
    os.replace(tmp, out_dir / rows_name)
    tmp_vec = out_dir / (vectors_name.removesuffix(".npy") + ".tmp.npy")
    np.save(tmp_vec, np.ascontiguousarray(vectors, dtype=np.float32))
    os.replace(tmp_vec, out_dir / vectors_name)


def read_manifest(out_dir: Path) -> Manifest:
    path = out_dir / MANIFEST
    if not out_dir.is_dir():
        raise DataError(f"{out_dir}: no retrieval index there (build it with `dialectbias index build CORPUS.yaml`)")
    if not path.is_file():
        raise DataError(f"{out_dir}: not a complete retrieval index ({MANIFEST} missing; rebuild it with "
                        "`dialectbias index build CORPUS.yaml`)")
    try:
        manifest = Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: corrupt index manifest ({str(exc).splitlines()[0]}); rebuild the index") from None
    if manifest.format != FORMAT:
        raise DataError(f"{out_dir}: index format {manifest.format}, this version reads {FORMAT}; rebuild the index")
    return manifest


def read_payload(out_dir: Path, manifest: Manifest) -> tuple[list[ParallelPair], np.ndarray]:
    """Pairs and vectors, checked against the manifest; DataError naming the folder when they disagree."""
    try:
        with (out_dir / PAIRS).open(encoding="utf-8") as fh:
            pairs = [ParallelPair.model_validate(json.loads(line)) for line in fh if line.strip()]
        vectors = np.load(out_dir / VECTORS, allow_pickle=False)
    except (OSError, ValueError, ValidationError) as exc:
        raise DataError(f"{out_dir}: corrupt retrieval index ({type(exc).__name__}: {str(exc).splitlines()[0]}); "
                        "rebuild it with `dialectbias index build CORPUS.yaml`") from None
    if len(pairs) != manifest.pairs or vectors.shape != (manifest.pairs, manifest.dim):
        raise DataError(f"{out_dir}: corrupt retrieval index ({len(pairs)} pairs and vectors of shape "
                        f"{vectors.shape}, manifest says {manifest.pairs} × {manifest.dim}); rebuild it")
    return pairs, vectors.astype(np.float32, copy=False)


def read_transcripts(out_dir: Path, manifest: Manifest) -> tuple[list[Transcript], np.ndarray]:
    """The index's transcripts and their vectors (none when it has none), checked against the manifest."""
    if manifest.transcripts == 0:
        return [], np.zeros((0, manifest.dim), dtype=np.float32)
    try:
        with (out_dir / TRANSCRIPTS).open(encoding="utf-8") as fh:
            rows = [Transcript.model_validate(json.loads(line)) for line in fh if line.strip()]
        vectors = np.load(out_dir / TRANSCRIPT_VECTORS, allow_pickle=False)
    except (OSError, ValueError, ValidationError) as exc:
        raise DataError(f"{out_dir}: corrupt retrieval index ({type(exc).__name__}: {str(exc).splitlines()[0]}); "
                        "rebuild it with `dialectbias index build CORPUS.yaml`") from None
    if len(rows) != manifest.transcripts or vectors.shape != (manifest.transcripts, manifest.dim):
        raise DataError(f"{out_dir}: corrupt retrieval index ({len(rows)} transcripts and vectors of shape "
                        f"{vectors.shape}, manifest says {manifest.transcripts} × {manifest.dim}); rebuild it")
    return rows, vectors.astype(np.float32, copy=False)
