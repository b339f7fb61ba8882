"""Read an inspect_ai eval log (`.eval`, a zip of JSON files, or the `.json` log format) without inspect_ai.

Only the fields an import needs are modelled (pydantic, every other field ignored): per sample its `id`,
`epoch`, `metadata` (what `export --inspect-dataset` wrote), `output` (the model's completion: the first
choice's message text; reasoning and tool parts are not the answer) and `error`. A `.eval` log holds one
`samples/<id>_epoch_<n>.json` per sample and `header.json`, compressed with zstd (zip method 93, which
Python's zipfile reads only from 3.14: `_member` decompresses it with `zstandard`) or deflate; a `.json` log
holds `samples` inline.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dialectbias.errors import DataError


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", protected_namespaces=())


class InspectMessage(_Loose):
    role: str = "assistant"
    content: str | list[dict[str, Any]] = ""

    def text(self) -> str:
        """The message's text: its string content, or its text parts joined (reasoning parts are left out)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")


class InspectChoice(_Loose):
    message: InspectMessage
    stop_reason: str | None = None


class InspectUsage(_Loose):
    input_tokens: int = 0
    output_tokens: int = 0


class InspectOutput(_Loose):
    model: str = ""
    choices: list[InspectChoice] = Field(default_factory=list)
    completion: str | None = None
    usage: InspectUsage | None = None
    time: float | None = None
    error: str | None = None

    def text(self) -> str:
        """The completion: the first choice's message text (inspect's `ModelOutput.completion`)."""
        if self.choices:
            return self.choices[0].message.text()
        return self.completion or ""


class InspectError(_Loose):
    message: str = ""


class InspectSample(_Loose):
    id: str | int
    epoch: int = 1
    metadata: dict[str, Any] = Field(default_factory=dict)
    output: InspectOutput | None = None
    error: InspectError | None = None
    total_time: float | None = None
    model_usage: dict[str, Any] = Field(default_factory=dict)


class InspectHeader(_Loose):
    """The log's eval spec: which task and model wrote it, and its status."""

    status: str = ""
    eval: dict[str, Any] = Field(default_factory=dict)


def _sample(data: Any, where: str) -> InspectSample:
    try:
        return InspectSample.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'sample'}: {e['msg']}" for e in exc.errors()[:3])
        raise DataError(f"{where}: not an inspect_ai sample ({details})") from None


def _json(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{where}: not JSON ({exc})") from None


ZIP_ZSTD = 93
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A zip member's bytes: zipfile's own reading, or zstd (method 93) decompressed here."""
    if info.compress_type != ZIP_ZSTD or _zipfile_reads_zstd():
        return zf.read(info)
    import zstandard  # type: ignore[import-not-found, unused-ignore]  # a core dependency

    fp = zf.fp
    assert fp is not None
    fp.seek(info.header_offset)
    header = _LOCAL_HEADER.unpack(fp.read(_LOCAL_HEADER.size))
    fp.seek(header[10] + header[11], io.SEEK_CUR)  # the file name and the extra field
    raw = fp.read(info.compress_size)
    with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader:
        return reader.read()


def _zipfile_reads_zstd() -> bool:
    """True when this Python's zipfile decompresses zstd itself (3.14+)."""
    try:
        zipfile._get_decompressor(ZIP_ZSTD)  # type: ignore[attr-defined]
    except (NotImplementedError, RuntimeError, AttributeError):
        return False
    return True


def read_inspect_log(path: Path) -> tuple[InspectHeader, list[tuple[str, InspectSample]]]:
    """The log's header and its samples, each with where it was read (`LOG: samples/<name>` or
    `LOG: samples[i]`). DataError naming the file for anything that is not an inspect_ai log."""
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    if zipfile.is_zipfile(path):
        return _read_eval(path)
    data = _json(path.read_bytes(), str(path))
    if not isinstance(data, dict) or "eval" not in data:
        raise DataError(f"{path}: not an inspect_ai log (neither a .eval zip nor a JSON log with `eval`)")
    header = InspectHeader.model_validate(data)
    samples = data.get("samples") or []
    return header, [(f"{path}: samples[{i}]", _sample(s, f"{path}: samples[{i}]")) for i, s in enumerate(samples)]


def _read_eval(path: Path) -> tuple[InspectHeader, list[tuple[str, InspectSample]]]:
    with zipfile.ZipFile(path) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        names = list(infos)
        if "header.json" in names:
            header = InspectHeader.model_validate(_json(_member(zf, infos["header.json"]), f"{path}: header.json"))
        elif "_journal/start.json" in names:  # a log whose eval has not finished
            start = _json(_member(zf, infos["_journal/start.json"]), f"{path}: _journal/start.json")
            header = InspectHeader(status="started", eval=start.get("eval", {}) if isinstance(start, dict) else {})
        else:
            raise DataError(f"{path}: a zip without header.json: not an inspect_ai .eval log")
        out = []
        for name in sorted(n for n in names if n.startswith("samples/") and n.endswith(".json")):
            where = f"{path}: {name}"
            out.append((where, _sample(_json(_member(zf, infos[name]), where), where)))
    return header, out


def iter_samples(path: Path) -> Iterator[tuple[str, InspectSample]]:
    """The samples of a log (see `read_inspect_log`)."""
    yield from read_inspect_log(path)[1]
