"""Images for local vision-language models (`provider: hf`): which model folders are vision-language models,
chat messages in transformers' multimodal form, and image parts decoded to RGB pictures. No torch needed.

A request's image parts arrive as the run machinery resolves them from the store's content-addressed
parts (`{"type": "image", "image": <bytes>, "mime": …}`, see `dialectbias.store._content`), exactly what
the `openai-compatible` provider receives; OpenAI-style `image_url` parts (a `data:` URL or an http(s) URL)
are accepted too. A file path is refused, as the openai provider does: requests hold the image's bytes.

The multimodal chat form every transformers processor's chat template reads: each message's content is a
list of `{"type": "text", "text": …}` and `{"type": "image"}` parts (a string content becomes one text
part); the images go to the processor separately, in the order their parts appear.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from dialectbias.data import MediaError, is_url, load_image
from dialectbias.data._media import image_error
from dialectbias.errors import ProviderError

IMAGE_PART_TYPES = frozenset({"image", "image_url", "input_image"})
TEXT_PART_TYPES = frozenset({"text", "input_text"})


def has_images(messages: list[Any]) -> bool:
    """True when any message has an image part."""
    return any(isinstance(part, dict) and part.get("type") in IMAGE_PART_TYPES
               for message in messages for part in _content_parts(message))


def _content_parts(message: Any) -> list[Any]:
    """A message's content parts: [] for a text message (or anything but a message dict)."""
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def is_vision_model(path: Path) -> bool:
    """Whether the model folder holds a vision-language model: its config.json has a `vision_config`
    (LLaVA, Idefics3/SmolVLM, Qwen2-VL, Gemma 3, PaliGemma, …). A GGUF file or an unreadable config is
    text-only (loading reports a broken config)."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and isinstance(config.get("vision_config"), dict)


def _image_source(part: dict[str, Any]) -> Any:
    """The image of a part: bytes or a string (data URL, http(s) URL) from any accepted part shape."""
    if part.get("type") == "image":
        return part.get("image")
    url = part.get("image_url")
    return url.get("url") if isinstance(url, dict) else url


def image_bytes(part: dict[str, Any], model_id: str, where: str) -> bytes:
    """The bytes of an image part (a data URL is decoded, an http(s) URL downloaded, a path refused)."""
    source = _image_source(part)
    if isinstance(source, str) and not (source.startswith("data:") or is_url(source)):
        raise ProviderError(f"model {model_id!r}: {where} holds a path ({source[:80]!r}), not its bytes; build "
                            "requests with RequestSpec, which loads it")
    if not isinstance(source, bytes | str):
        raise ProviderError(f"model {model_id!r}: {where} has no image (bytes, data URL or http(s) URL)")
    try:
        return load_image(source, f"model {model_id!r}: {where}")[0]
    except MediaError as exc:
        raise ProviderError(str(exc)) from None


def vision_messages(messages: list[Any], model_id: str) -> tuple[list[dict[str, Any]], list[bytes]]:
    """Messages in transformers' multimodal chat form (content = list of text / `{"type": "image"}` parts)
    and the images' bytes in the order of their parts. Unknown parts and role-less messages are errors."""
    out: list[dict[str, Any]] = []
    images: list[bytes] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise ProviderError(f"model {model_id!r}: message {i} has no role")
        content = message.get("content")
        parts: list[dict[str, Any]] = []
        if content is None:
            content = ""
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        elif isinstance(content, list):
            for j, part in enumerate(content):
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in TEXT_PART_TYPES:
                    parts.append({"type": "text", "text": str(part.get("text", ""))})
                elif kind in IMAGE_PART_TYPES:
                    images.append(image_bytes(part, model_id, f"message {i} part {j}"))
                    parts.append({"type": "image"})
                else:
                    raise ProviderError(f"model {model_id!r}: message {i} has an unsupported part {kind!r}")
        else:
            raise ProviderError(f"model {model_id!r}: message {i} content must be a string or a list of parts")
        out.append({"role": str(message["role"]), "content": parts})
    return out, images


def decode_image(data: bytes, model_id: str) -> Any:
    """An RGB `PIL.Image` of the bytes (transparency dropped onto black, as processors expect RGB)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            return img.convert("RGB")
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise ProviderError(f"model {model_id!r}: an image part is not a readable image "
                            f"({image_error(exc)})") from None
