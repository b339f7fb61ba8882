"""The check a real server makes of a chat request's content parts: text, or an image as a base64 data URL."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

#: the leading bytes of each image type the server accepts in an `image_url` data URL
_IMAGE_MAGIC = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",),
                "image/gif": (b"GIF87a", b"GIF89a"), "image/webp": (b"RIFF",)}
_DATA_URL_HEADER = re.compile(r"data:(image/[\w.+-]+);base64")


def image_part_problem(messages: list[Any]) -> str | None:
    """What is wrong with a request's content parts, or None: text parts and `image_url` parts holding a
    base64 data URL whose payload decodes to an image of the declared type are accepted (the OpenAI format
    that providers send; this server fetches no URL)."""
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, part in enumerate(content):
            where = f"messages[{i}].content[{j}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                continue
            if kind != "image_url":
                return f"{where}: unsupported content part type {kind!r} (expected 'text' or 'image_url')"
            image_url = part.get("image_url")
            url = image_url.get("url") if isinstance(image_url, dict) else None
            if not isinstance(url, str):
                return f"{where}: 'image_url' must be an object with a string 'url'"
            header, comma, payload = url.partition(",")
            match = _DATA_URL_HEADER.fullmatch(header)
            if not url.startswith("data:") or not comma or match is None:
                return (f"{where}: image_url.url must be a base64 data URL (data:image/png;base64,…); got "
                        f"{url[:40]!r} (the test server fetches no URL)")
            mime = match[1]
            if mime not in _IMAGE_MAGIC:
                return f"{where}: unsupported image type {mime} (expected {', '.join(_IMAGE_MAGIC)})"
            try:
                data = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                return f"{where}: the data URL's base64 payload does not decode"
            if not data.startswith(_IMAGE_MAGIC[mime]) or (mime == "image/webp" and data[8:12] != b"WEBP"):
                return f"{where}: the payload is not a {mime} image (its first bytes are {data[:8]!r})"
    return None


__all__ = ["image_part_problem"]
