"""Does an index still match its corpus? The manifest records the fingerprint of the corpus it was built from
(`dialectbias.data.corpus_fingerprint`: the corpus file's spec and each data file's sha256); an index is used
only while the corpus has the same fingerprint, else the error names both, what changed and the command that
rebuilds it. An index from before fingerprints were recorded is refused the same way (it cannot tell)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from dialectbias.data import CorpusFingerprint, corpus_fingerprint, describe_changes
from dialectbias.errors import DataError
from dialectbias.retrieval._embedders import DEFAULT_EMBEDDER
from dialectbias.retrieval._persist import Manifest, default_index_dir, read_manifest


def shown(path: Path | str) -> str:
    """A path as a command line takes it: relative to the working directory when inside it, quoted if needed."""
    resolved = Path(path).resolve()
    cwd = Path.cwd().resolve()
    text = os.path.relpath(resolved, cwd) if resolved.is_relative_to(cwd) else str(resolved)
    return shlex.quote(text)


def rebuild_command(out_dir: Path, manifest: Manifest, corpus: Path | None) -> str:
    """`dialectbias index build CORPUS` with the options the index was built with."""
    target = corpus or (Path(manifest.corpus_path) if manifest.corpus_path else None)
    parts = ["dialectbias index build", shown(target) if target else "CORPUS.yaml"]
    if target is None or Path(out_dir).resolve() != default_index_dir(target).resolve():
        parts += ["--out", shown(out_dir)]
    if manifest.embedder != DEFAULT_EMBEDDER:
        parts += ["--embedder", shlex.quote(manifest.embedder)]
    for split in manifest.exclude_splits:
        parts += ["--exclude-split", shlex.quote(split)]
    return " ".join(parts)


def corpus_to_check(manifest: Manifest, corpus: str | Path | None) -> Path | None:
    """The corpus file given, else the one the index was built from while it is still there (an index moved
    without its corpus is used as built: its pairs are in the folder)."""
    if corpus is not None:
        return Path(corpus)
    recorded = Path(manifest.corpus_path) if manifest.corpus_path else None
    return recorded if recorded is not None and recorded.is_file() else None


def corpus_changes(out_dir: Path, manifest: Manifest, corpus: str | Path | None
                   ) -> tuple[list[str], CorpusFingerprint | None]:
    """What changed in the corpus since the index was built (empty: it matches, or there is no corpus to check
    against) and the corpus's fingerprint now; DataError for an index without a recorded fingerprint."""
    path = corpus_to_check(manifest, corpus)
    if manifest.corpus_fingerprint is None:
        raise DataError(f"{out_dir}: records no fingerprint of its corpus (built by an earlier dialectbias, or "
                        "from pairs read without a corpus file): whether the corpus changed since cannot be told; "
                        "rebuild it: "
                        f"`{rebuild_command(out_dir, manifest, path)}`")
    if path is None:
        return [], None
    now = corpus_fingerprint(path)
    return manifest.corpus_fingerprint.changes(now), now


def open_manifest(out_dir: str | Path, corpus: str | Path | None = None) -> Manifest:
    """The index's manifest, checked against `corpus` (default: the corpus it was built from, when still
    there): DataError naming both fingerprints, what changed and the rebuild command when they differ."""
    out = Path(out_dir)
    manifest = read_manifest(out)
    changes, now = corpus_changes(out, manifest, corpus)
    if changes:
        assert manifest.corpus_fingerprint is not None and now is not None
        path = corpus_to_check(manifest, corpus)
        built_from = shown(manifest.corpus_path) if manifest.corpus_path else manifest.corpus
        raise DataError(f"{out}: built from another state of the corpus (index fingerprint "
                        f"{manifest.corpus_fingerprint.digest}, built from {built_from}; {shown(path or '')} now "
                        f"{now.digest}): {describe_changes(changes)}; rebuild it: "
                        f"`{rebuild_command(out, manifest, path)}`")
    return manifest
