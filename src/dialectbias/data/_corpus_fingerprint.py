"""What a corpus is made of, to tell whether something built from it (a retrieval index) still matches it: the
part of the corpus file that decides the pairs and transcripts (its `files` and `transcripts` entries,
`dialects` and `drop_identical`; not its `name`) and every data file it reads, by content (sha256). hf://
sources are recorded by their URI only (not downloaded to be hashed)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dialectbias.errors import DataError

#: changes named in a message before "and N more"
SHOWN = 4


class FileFingerprint(BaseModel):
    """One data file: its path as the corpus reads it (relative to the corpus file's folder when inside it),
    its size and the sha256 of its bytes (None for hf://)."""

    path: str
    size: int | None = None
    sha256: str | None = None


class CorpusFingerprint(BaseModel):
    """The corpus spec (normalised: defaults filled in, `name` left out) and its data files, in reading order."""

    spec: dict[str, Any]
    files: list[FileFingerprint]

    @property
    def digest(self) -> str:
        """12 hex characters identifying spec and file contents (what messages show)."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    def changes(self, now: CorpusFingerprint) -> list[str]:
        """What differs from this (earlier) fingerprint to `now`, one short phrase each; empty when they match."""
        out = _spec_changes(self.spec, now.spec)
        then_files = {f.path: f for f in self.files}
        now_files = {f.path: f for f in now.files}
        out += [f"{path} no longer read" for path in then_files if path not in now_files]
        out += [f"{path} now read" for path in now_files if path not in then_files]
        out += [f"{path} content changed" for path, f in now_files.items()
                if path in then_files and (then_files[path].size, then_files[path].sha256) != (f.size, f.sha256)]
        if not out and [f.path for f in self.files] != [f.path for f in now.files]:
            out.append("data files read in another order")
        return out


def describe_changes(changes: list[str]) -> str:
    shown = "; ".join(changes[:SHOWN])
    return shown + (f"; and {len(changes) - SHOWN} more" if len(changes) > SHOWN else "")


def make_fingerprint(spec: dict[str, Any], sources: list[str], base: Path) -> CorpusFingerprint:
    """The fingerprint of a corpus whose normalised spec is `spec` and whose data files are `sources` (paths or
    hf:// URIs, reading order); `base`: the corpus file's folder."""
    files = []
    for source in sources:
        if source.startswith("hf://"):
            files.append(FileFingerprint(path=source))
            continue
        path = Path(source)
        try:
            size, sha256 = path.stat().st_size, file_digest(path)
        except OSError as exc:
            raise DataError(f"{path}: cannot read the corpus data file ({exc.strerror or exc})") from None
        files.append(FileFingerprint(path=_shown(path, base), size=size, sha256=sha256))
    return CorpusFingerprint(spec=spec, files=files)


def file_digest(path: Path) -> str:
    """The sha256 of a file's bytes (hex). Raises OSError when it cannot be read."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _shown(path: Path, base: Path) -> str:
    resolved, root = path.resolve(), base.resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(resolved)


def _spec_changes(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(then) | set(now)):
        a, b = then.get(key), now.get(key)
        if a == b:
            continue
        if key in ("files", "transcripts") and isinstance(a or [], list) and isinstance(b or [], list):
            out += _entry_changes(a or [], b or [], key)
        else:
            out.append(f"{key} {_short(a)} → {_short(b)}")
    return out


def _entry_changes(then: list[dict[str, Any]], now: list[dict[str, Any]], key: str = "files") -> list[str]:
    out = []
    for i, (a, b) in enumerate(zip(then, now, strict=False)):
        out += [f"{key}[{i}].{field} {_short(a.get(field))} → {_short(b.get(field))}"
                for field in sorted(set(a) | set(b)) if a.get(field) != b.get(field)]
    if len(now) > len(then):
        out += [f"{key}[{i}] added ({_short(e.get('path'))})" for i, e in enumerate(now) if i >= len(then)]
    elif len(then) > len(now):
        out += [f"{key}[{i}] removed ({_short(e.get('path'))})" for i, e in enumerate(then) if i >= len(now)]
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"
