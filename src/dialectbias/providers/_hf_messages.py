"""Chat messages for local text models: OpenAI-style messages flattened to `{role, content: str}` (images
refused), and the plain prompt for tokenizers without a chat template. No torch needed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dialectbias.errors import ProviderError
from dialectbias.providers._hf_vision import IMAGE_PART_TYPES as _IMAGE_PART_TYPES
from dialectbias.providers._hf_vision import TEXT_PART_TYPES as _TEXT_PART_TYPES


def text_messages(messages: Sequence[Mapping[str, Any]], model_id: str) -> list[dict[str, str]]:
    """Flatten OpenAI-style messages to `{"role", "content": str}`; reject images."""
    out: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise ProviderError(f"model {model_id!r}: message {i} has no role")
        content = message.get("content")
        if content is None:
            text = ""
        elif isinstance(content, str):
            text = content
        elif isinstance(content, list):
            texts = []
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in _TEXT_PART_TYPES:
                    texts.append(str(part.get("text", "")))
                elif kind in _IMAGE_PART_TYPES:
                    raise ProviderError(
                        f"model {model_id!r} is text-only: message {i} contains an image part (a "
                        "vision-language model folder has a `vision_config` in its config.json)"
                    )
                else:
                    raise ProviderError(f"model {model_id!r}: message {i} has an unsupported part {kind!r}")
            text = "\n".join(texts)
        else:
            raise ProviderError(
                f"model {model_id!r}: message {i} content must be a string or a list of parts"
            )
        out.append({"role": str(message["role"]), "content": text})
    return out


def fallback_prompt(messages: list[dict[str, str]]) -> str:
    """The prompt for tokenizers without a chat template: `role: content` lines + `assistant:`."""
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
