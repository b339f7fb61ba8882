"""A served model's own tokenizer, when its config names one (`openai`: `tokenizer:`, a local Hugging Face
folder or a GGUF file): the exact input tokens of a request, chat template included, for the context-fit check
(`ModelAPI.input_tokens`) instead of the per-script estimate (`providers._tokens`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from dialectbias.data import message_text
from dialectbias.errors import ConfigError
from dialectbias.providers._base import ChatRequest


def tokenizer_problem(source: str) -> str | None:
    """Why `source` cannot be a tokenizer (None when it looks like one): a folder or a `.gguf` file."""
    path = Path(source).expanduser()
    if path.is_dir() or (path.is_file() and path.suffix == ".gguf"):
        return None
    return "no such folder" if not path.exists() else "not a folder or a .gguf file"


@functools.lru_cache(maxsize=8)
def load_tokenizer(source: str) -> Any:
    """The Hugging Face tokenizer of a folder, or of a GGUF file (`gguf_file=`); one per path per process.
    A `ConfigError` naming the path when it cannot be loaded."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ConfigError(f"tokenizer {source}: counting with a tokenizer needs transformers "
                          "(pip install 'dialectbias[hf]')") from None
    path = Path(source).expanduser()
    try:
        if path.is_file() and path.suffix == ".gguf":
            return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        return AutoTokenizer.from_pretrained(str(path))
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError … for a bad folder
        raise ConfigError(f"tokenizer {source}: cannot be loaded ({type(exc).__name__}: {str(exc)[:200]})") from None


def chat_tokens(tokenizer: Any, request: ChatRequest) -> int:
    """Input tokens of the request's text with the tokenizer's chat template (role lines and the generation
    prompt included); without a template, each message as `role: text` lines. Images are not counted here."""
    messages = [{"role": m["role"], "content": message_text(m["content"])} for m in request.messages]
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        return len(ids["input_ids"] if hasattr(ids, "keys") else ids)
    return len(tokenizer("".join(f"{m['role']}: {m['content']}\n" for m in messages))["input_ids"])


__all__ = ["chat_tokens", "load_tokenizer", "tokenizer_problem"]
