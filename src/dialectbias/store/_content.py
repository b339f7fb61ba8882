"""Content-addressed message parts: every image and every long text part is stored once in the `content`
table, keyed by its sha256; a request row's `messages` holds references to them.

One request's messages have three forms:

- *given*: `ChatMessage`s as a task builds them (images as bytes);
- *stored* (the `requests.messages` column): a text part of `TEXT_REF_MIN_CHARS` or more becomes
  `{"type": "text", "sha256": h}`, a string content that long becomes that object in place of the string,
  and an image becomes `{"type": "image", "sha256": h, "mime": m}`; a JSON schema that long is stored as
  the string `sha256:<h>` in `requests.json_schema`;
- *canonical* (what the cache key, request id and prompt hash are computed from, and what `export` shows as
  the rendered prompt): text inline, images as their stored reference. For a text-only request it is the
  given messages exactly, so text requests keep the ids and cache keys they had before parts were stored
  apart; an image's reference carries its sha256, so the keys change when its bytes do.

Resolving a stored form reads each part once per process (`PartCache`: a shared system prompt is read
from SQLite once, not once per request); parts are immutable, so the cache is valid for any store.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from dialectbias.data._media import image_info

#: a text part (or JSON schema) this long or longer is stored once in `content` and referenced. A reference
#: costs ~80 bytes in the row (and ~150 bytes of table and index once per distinct text), so below ~1 KB
#: there is little to win even when the text repeats; at 1,000 characters (1–3 KB of UTF-8) a repeated text
#: shrinks by ≥ 90% per request, and a text that never repeats (a judge prompt echoing two long answers)
#: costs ≤ 15% more while keeping the request row small. What repeats in practice is far above the bar:
#: the qa_bias judge system prompt is 2,300 characters, the RLAIF JSON schema 1,100.
TEXT_REF_MIN_CHARS = 1000
SCHEMA_REF_PREFIX = "sha256:"
#: a `text` part is stored zstd-compressed (a BLOB holding one zstd frame, schema v9) when that saves at least
#: this share of its UTF-8 bytes; otherwise, and for JSON schemas (read by SQL in `pending_requests`) and
#: images (already compressed), `data` holds the part as given. Reads take both forms (`stored_data` /
#: `read_data`), so stores written before v9 read the same. Judge prompts that echo two long answers are
#: what grows fastest with a study (benchmarks/tenx.py); Bengali UTF-8 shrinks 3–5× under zstd.
COMPRESS_MIN_SAVING = 0.1
ZSTD_LEVEL = 3


@dataclass(frozen=True)
class ContentRow:
    """One row of the `content` table (`data`: str for text and JSON, bytes for images)."""

    sha256: str
    kind: str
    mime: str
    size: int
    data: str | bytes
    width: int | None = None
    height: int | None = None

    def values(self) -> tuple[Any, ...]:
        return (self.sha256, self.kind, self.mime, self.size, self.data, self.width, self.height)


@dataclass
class Packed:
    """A request's messages (and schema) ready for the request row: the stored form, the canonical JSON to
    hash, and the `content` rows it refers to."""

    stored: list[Any]
    canonical: list[Any]
    parts: list[ContentRow] = field(default_factory=list)


@lru_cache(maxsize=1024)
def _text_row(text: str, kind: str = "text", mime: str = "text/plain; charset=utf-8") -> ContentRow:
    data = text.encode("utf-8")
    return ContentRow(hashlib.sha256(data).hexdigest(), kind, mime, len(data), text)


def image_row(data: bytes) -> ContentRow:
    info = image_info(data)
    return ContentRow(info.sha256, "image", info.mime, info.size, data, info.width, info.height)


def pack_messages(messages: Iterable[Any], *, min_ref_chars: float = TEXT_REF_MIN_CHARS) -> Packed:
    """Split messages into stored form, canonical form and content rows (see the module docstring).
    Image parts must hold bytes (`RequestSpec` loads paths and URLs when it is built)."""
    out = Packed([], [])
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            if len(content) >= min_ref_chars:
                row = _text_row(content)
                out.parts.append(row)
                out.stored.append({**message, "content": {"type": "text", "sha256": row.sha256}})
            else:
                out.stored.append(message)
            out.canonical.append(message)
            continue
        stored, canonical = [], []
        for part in content:
            if part["type"] == "image":
                data = part["image"]
                if not isinstance(data, bytes):
                    raise TypeError("an image part must hold the image's bytes before it is stored "
                                    "(RequestSpec loads paths and URLs)")
                row = image_row(data)
                out.parts.append(row)
                ref = {"type": "image", "sha256": row.sha256, "mime": row.mime}
                stored.append(ref)
                canonical.append(ref)
            elif len(part["text"]) >= min_ref_chars:
                row = _text_row(part["text"])
                out.parts.append(row)
                stored.append({"type": "text", "sha256": row.sha256})
                canonical.append(part)
            else:
                stored.append(part)
                canonical.append(part)
        out.stored.append({**message, "content": stored})
        out.canonical.append({**message, "content": canonical})
    return out


def pack_schema(schema_json: str | None, *, min_ref_chars: float = TEXT_REF_MIN_CHARS
                ) -> tuple[str | None, ContentRow | None]:
    """The `requests.json_schema` value (the schema, or `sha256:<h>` when it is long) and its content row."""
    if schema_json is None or len(schema_json) < min_ref_chars:
        return schema_json, None
    row = _text_row(schema_json, "json", "application/schema+json")
    return SCHEMA_REF_PREFIX + row.sha256, row


def stored_data(kind: str, data: str | bytes, *, compress: bool = True) -> str | bytes:
    """The `content.data` value of a part: a `text` part as one zstd frame when that is worth it (see
    `COMPRESS_MIN_SAVING`; `compress=False`: always as given), everything else as given."""
    if not compress or kind != "text" or not isinstance(data, str):
        return data
    raw = data.encode("utf-8")
    packed = _zstd().compress(raw)
    return packed if len(packed) <= len(raw) * (1 - COMPRESS_MIN_SAVING) else data


def read_data(kind: str, data: str | bytes) -> str | bytes:
    """A part as it was given, from its `content.data` value (either form: a text part stored as bytes is a
    zstd frame; one stored as TEXT, by v8 and older or when compression did not pay, is returned as is)."""
    if kind == "text" and isinstance(data, bytes):
        return _zstd_reader().decompress(data).decode("utf-8")
    return data


_ZSTD = threading.local()  # a zstandard (de)compressor must not be used by two threads at once


def _zstd() -> Any:
    if not hasattr(_ZSTD, "writer"):
        import zstandard  # type: ignore[import-not-found, unused-ignore]  # a core dependency

        _ZSTD.writer = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=True)
    return _ZSTD.writer


def _zstd_reader() -> Any:
    if not hasattr(_ZSTD, "reader"):
        import zstandard  # type: ignore[import-not-found, unused-ignore]

        _ZSTD.reader = zstandard.ZstdDecompressor()
    return _ZSTD.reader


class PartCache:
    """Resolved parts by sha256, least recently used dropped beyond `max_bytes`."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._parts: OrderedDict[str, tuple[str, str, str | bytes]] = OrderedDict()
        self.reads = 0  # parts read from a store (for tests and benchmarks)

    def get(self, sha: str) -> tuple[str, str, str | bytes] | None:
        part = self._parts.get(sha)
        if part is not None:
            self._parts.move_to_end(sha)
        return part

    def put(self, sha: str, part: tuple[str, str, str | bytes]) -> None:
        if sha in self._parts:
            return
        self._parts[sha] = part
        self.bytes += len(part[2])
        while self.bytes > self.max_bytes and len(self._parts) > 1:
            _, (_, _, data) = self._parts.popitem(last=False)
            self.bytes -= len(data)


PARTS = PartCache()

Fetch = Callable[[list[str]], dict[str, tuple[str, str, str | bytes]]]


def _refs(stored: list[Any], *, images: bool = True) -> Iterable[str]:
    """The hashes a stored form refers to (`images=False`: its text parts only)."""
    for message in stored:
        content = message.get("content")
        if isinstance(content, dict):
            yield content["sha256"]
        elif isinstance(content, list):
            for part in content:
                if "sha256" in part and (images or part["type"] != "image"):
                    yield part["sha256"]


def parts_for(hashes: Iterable[str], fetch: Fetch, cache: PartCache = PARTS) -> dict[str, tuple[str, str, str | bytes]]:
    """The parts with these hashes: from the cache, the rest from the store in one read."""
    found: dict[str, tuple[str, str, str | bytes]] = {}
    missing = []
    for sha in hashes:
        if sha in found:
            continue
        part = cache.get(sha)
        if part is None:
            missing.append(sha)
        else:
            found[sha] = part
    if missing:
        fetched = fetch(sorted(set(missing)))
        cache.reads += len(fetched)
        for sha, part in fetched.items():
            cache.put(sha, part)
            found[sha] = part
    return found


def unpack_messages(stored: list[Any], fetch: Fetch, *, images: Literal["bytes", "ref"] = "bytes",
                    cache: PartCache = PARTS) -> list[Any]:
    """The messages of a stored form: text references resolved; images as bytes parts
    (`{"type": "image", "image": b, "mime": m}`, what providers get) or kept as references (`export`)."""
    hashes = list(_refs(stored))
    if not hashes:
        return stored
    if images == "ref":
        hashes = list(_refs(stored, images=False))
    parts = parts_for(hashes, fetch, cache) if hashes else {}
    out = []
    for message in stored:
        content = message.get("content")
        if isinstance(content, dict):
            message = {**message, "content": parts[content["sha256"]][2]}
        elif isinstance(content, list) and any("sha256" in p for p in content):
            resolved = []
            for part in content:
                sha = part.get("sha256")
                if sha is None or (part["type"] == "image" and images == "ref"):
                    resolved.append(part)
                elif part["type"] == "image":
                    resolved.append({"type": "image", "image": parts[sha][2], "mime": parts[sha][1]})
                else:
                    resolved.append({"type": "text", "text": parts[sha][2]})
            message = {**message, "content": resolved}
        out.append(message)
    return out
