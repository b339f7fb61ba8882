"""Chat messages for vLLM's `LLM.chat` (`provider: vllm`). No vLLM import.

Text-only requests are flattened as for `hf` (`text_messages`: `{role, content: str}`). A request with
image parts keeps OpenAI's content-part form, which vLLM's chat front end reads for a vision-language
model: text parts as `{"type": "text"}`, every image (the store's content-addressed bytes, a `data:` URL or
an http(s) URL, see `_hf_vision.image_bytes`) as an `image_url` part holding a base64 `data:` URL, in the
order of the parts. vLLM decodes the images, and the model's processor inserts their tokens where the chat
template puts the image placeholders."""

from __future__ import annotations

import base64
from typing import Any

from dialectbias.data import image_info
from dialectbias.errors import ProviderError
from dialectbias.providers._hf_messages import text_messages
from dialectbias.providers._hf_vision import IMAGE_PART_TYPES, has_images, vision_messages

__all__ = ["count_images", "has_images", "image_limit_error", "vllm_messages"]


def data_url(data: bytes) -> str:
    """The image's bytes as a base64 `data:` URL with its detected type."""
    return f"data:{image_info(data).mime};base64,{base64.b64encode(data).decode('ascii')}"


def count_images(messages: list[Any]) -> int:
    """The image parts of a request's messages."""
    return sum(1 for message in messages if isinstance(message, dict) and isinstance(message.get("content"), list)
               for part in message["content"]
               if isinstance(part, dict) and part.get("type") in IMAGE_PART_TYPES)


def vllm_messages(messages: list[Any], model_id: str) -> list[dict[str, Any]]:
    """Messages for `LLM.chat`: plain strings without images; OpenAI content parts (images as data URLs)
    with them. ProviderError for a path instead of bytes, an unreadable image, an unknown part."""
    if not has_images(messages):
        return text_messages(messages, model_id)
    out, images = vision_messages(messages, model_id)
    urls = iter(images)
    for message in out:
        message["content"] = [{"type": "image_url", "image_url": {"url": data_url(next(urls))}}
                              if part["type"] == "image" else part for part in message["content"]]
    return out


def image_limit_error(model_id: str, n_images: int, limit: int) -> ProviderError:
    """A request with more images than the engine takes per prompt (vLLM's `limit_mm_per_prompt`)."""
    return ProviderError(f"model {model_id!r}: the request has {n_images} images, above the engine's "
                         f"{limit} per prompt: raise the model's `max_images_per_prompt` (vLLM's "
                         "limit_mm_per_prompt)")
