"""Images for requests: where an item's image is (under the data file's folder, or an http(s) URL), and what
it is (bytes, mime type, size, sha256). Every image a request carries is loaded, checked and (for providers
that resize) scaled here."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialectbias.errors import DataError

#: what providers accept as image parts (OpenAI, vLLM, Ollama, Gemini)
SUPPORTED_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
#: an image file or download larger than this is refused (20 MB: OpenAI's own limit per image)
MAX_IMAGE_BYTES = 20 * 1024 * 1024
URL_TIMEOUT_S = 30.0
_INFO_CACHE = 4096  # image checks remembered by sha256 (tiny entries)
_BYTES_CACHE = 16  # loaded files and downloads kept, so an item's variants and models share one copy


class MediaError(DataError):
    """An image cannot be read, fetched or decoded: counted for its item, never a crashed run."""


@dataclass(frozen=True)
class ImageInfo:
    """What the store and the providers need to know about an image's bytes."""

    sha256: str
    mime: str
    width: int
    height: int
    size: int


class LRU(OrderedDict[Any, Any]):
    """A dict that keeps its `maxsize` most recently used entries."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def get_or(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)


_infos = LRU(_INFO_CACHE)
_files = LRU(_BYTES_CACHE)
_urls = LRU(_BYTES_CACHE)


_OBJECT_REPR = re.compile(r"\s*<[\w.]+ object at 0x[0-9a-fA-F]+>")


def image_error(exc: BaseException) -> str:
    """Why Pillow could not read an image, for a message: without the in-memory buffer's repr that Pillow puts
    in its messages (`cannot identify image file <_io.BytesIO object at 0x…>`)."""
    from PIL import UnidentifiedImageError

    if isinstance(exc, UnidentifiedImageError):
        return f"not an image in a format Pillow reads; supported: {', '.join(SUPPORTED_FORMATS)}"
    text = _OBJECT_REPR.sub("", str(exc)).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def image_info(data: bytes, where: str = "image") -> ImageInfo:
    """Hash, format and size of an image; the first time a content is seen it is fully decoded, so a
    truncated or corrupt file is a `MediaError` here rather than a 400 from the model's server."""
    sha = hashlib.sha256(data).hexdigest()
    info = _infos.get_or(sha)
    if info is not None:
        return info
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            fmt, (width, height) = img.format, img.size
            img.load()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise MediaError(f"{where}: not a readable image ({image_error(exc)})") from None
    mime = SUPPORTED_FORMATS.get(fmt or "")
    if mime is None:
        raise MediaError(f"{where}: {fmt or 'unknown'} images are not supported; use "
                         f"{', '.join(SUPPORTED_FORMATS)}")
    info = ImageInfo(sha, mime, width, height, len(data))
    _infos.put(sha, info)
    return info


def scale_image(data: bytes, size: tuple[int, int]) -> tuple[bytes, str]:
    """The image scaled to `size` and its mime type: JPEG stays JPEG (quality 90), everything else becomes PNG."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        fmt = "JPEG" if img.format == "JPEG" else "PNG"
        small = img.convert("RGB" if fmt == "JPEG" else "RGBA").resize(size, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    small.save(out, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return out.getvalue(), f"image/{fmt.lower()}"


def is_url(ref: str) -> bool:
    return ref.startswith(("http://", "https://"))


def load_image(source: bytes | str | Path, where: str | None = None) -> tuple[bytes, ImageInfo]:
    """The bytes and `ImageInfo` of an image given as bytes, a file path, an http(s) URL or a `data:` URL.

    A relative path is relative to the working directory: tasks resolve item paths first
    (`resolve_item_image`). Files and downloads are cached by (path, size, mtime) and URL."""
    label = where or (f"image {str(source)[:80]!r}" if not isinstance(source, bytes) else "image")
    if isinstance(source, bytes):
        data = source
    elif isinstance(source, str) and source.startswith("data:"):
        data = _decode_data_url(source, label)
    elif isinstance(source, str) and is_url(source):
        data = _download(source, label)
    else:
        data = _read_file(Path(source), label)
    if len(data) > MAX_IMAGE_BYTES:
        raise MediaError(f"{label}: {len(data):,} bytes, above the {MAX_IMAGE_BYTES:,}-byte limit per image")
    return data, image_info(data, label)


def _read_file(path: Path, label: str) -> bytes:
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        data = _files.get_or(key)
        if data is None:
            if st.st_size > MAX_IMAGE_BYTES:
                raise MediaError(f"{label}: {st.st_size:,} bytes, above the {MAX_IMAGE_BYTES:,}-byte limit per image")
            data = path.read_bytes()
            _files.put(key, data)
    except FileNotFoundError:
        raise MediaError(f"{label}: file not found ({path})") from None
    except OSError as exc:
        raise MediaError(f"{label}: cannot read {path} ({exc.strerror or exc})") from None
    return data


def _download(url: str, label: str) -> bytes:
    import urllib.error
    import urllib.request

    data = _urls.get_or(url)
    if data is not None:
        return data
    request = urllib.request.Request(url, headers={"User-Agent": "dialectbias"})
    try:
        with urllib.request.urlopen(request, timeout=URL_TIMEOUT_S) as resp:
            data = resp.read(MAX_IMAGE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise MediaError(f"{label}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise MediaError(f"{label}: cannot download ({reason})") from None
    if len(data) > MAX_IMAGE_BYTES:
        raise MediaError(f"{label}: larger than the {MAX_IMAGE_BYTES:,}-byte limit per image")
    _urls.put(url, data)
    return data


def _decode_data_url(url: str, label: str) -> bytes:
    header, _, payload = url.partition(",")
    if ";base64" not in header:
        raise MediaError(f"{label}: a data URL must be base64 (data:image/png;base64,…)")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise MediaError(f"{label}: the data URL's base64 payload cannot be decoded") from None


def resolve_item_image(ref: Any, data_dir: Path | None, where: str, item_id: str) -> str:
    """Where an item's `image` is: an http(s) URL as given, or an absolute path inside the data file's
    folder. `..` escapes, absolute paths outside the folder and symlinks leading out of it are refused
    (a `DataError` naming the item): a data file must not make the run read and send any file on disk."""
    item = f"{where}: item {item_id!r}"
    if not isinstance(ref, str) or not ref.strip():
        raise DataError(f"{item}: 'image' must be a file path (relative to the data file's folder) or an "
                        f"http(s) URL, got {ref!r}")
    if is_url(ref):
        return ref
    if "://" in ref or ref.startswith("data:"):
        raise DataError(f"{item}: image {ref!r}: only file paths and http(s) URLs are supported")
    if data_dir is None:
        raise DataError(f"{item}: image {ref!r}: a file path needs a local data file (its folder is where "
                        "images are looked up); use an http(s) URL")
    base = data_dir.resolve()
    path = (base / ref).resolve()  # an absolute `ref` replaces `base` here
    if not path.is_relative_to(base):
        raise DataError(f"{item}: image {ref!r} is outside the data folder {base}: image paths are relative "
                        "to the data file's folder, and '..' or absolute paths leading out of it are refused")
    return str(path)


def check_item_image(ref: str, where: str) -> str | None:
    """What is wrong with a resolved local image (missing, unreadable, not an image), or None; URLs are
    fetched only when requests are built."""
    if is_url(ref):
        return None
    try:
        load_image(ref, where)
    except MediaError as exc:
        return str(exc)
    return None
