"""Prompts of the BanglaVerse tasks: zero-shot, few-shot and chain-of-thought (BanglaVerse §4.2, App. E.1).

A template renders the whole text of the user message; `<<IMAGE>>` marks where an image goes (few-shot:
each example's image, then the item's). A template without the marker gets the item's image before its
text. No image file name ever reaches the prompt: BanglaVerse's released prompts wrote `Image:
./dataset/culture/...` and so told the model the domain (PROCEDURES.md §2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dialectbias.data import ContentPart, image_part, text_part
from dialectbias.errors import ConfigError
from dialectbias.tasks._templates import render, template_exists
from dialectbias.tasks.vlm._items import Language

Strategy = Literal["zero_shot", "few_shot", "cot"]
STRATEGIES: tuple[Strategy, ...] = ("zero_shot", "few_shot", "cot")
IMAGE_MARK = "<<IMAGE>>"


def language_context(lang: Language) -> dict[str, str]:
    """How templates name the variant's language: `language` (e.g. "the Sylhet dialect of Bangla"),
    `language_short` ("Bangla"), `script` ("Bengali"), `other` (the language whose words are forbidden)."""
    full = f"the {lang.dialect} dialect of {lang.name}" if lang.dialect else lang.name
    return {"language": full, "language_short": lang.name, "script": lang.script_name, "other": lang.other}


def options_text(options: list[str]) -> str:
    """Options as the released Gemini run showed them: a JSON list, non-ASCII kept."""
    return json.dumps(options, ensure_ascii=False)


def template_name(task: str, strategy: str, variant: str, lang: Language, user_dir: Path | None) -> str:
    """The most specific template that exists: `<task>/<strategy>_<variant>`, `<task>/<strategy>_<language>`,
    then `<task>/<strategy>`."""
    for name in (f"{task}/{strategy}_{variant}", f"{task}/{strategy}_{lang.key}", f"{task}/{strategy}"):
        if template_exists(name, user_dir):
            return name
    raise ConfigError(f"no prompt template {task}/{strategy}.j2 (looked in {user_dir or 'the package'})")


@dataclass(frozen=True)
class Example:
    """One few-shot example: its image bytes and what the template shows of it."""

    image: bytes
    fields: dict[str, Any]


def build_parts(template: str, user_dir: Path | None, image: bytes, examples: list[Example],
                **context: Any) -> list[ContentPart]:
    """The user message's parts: the rendered template split at each `<<IMAGE>>`, the examples' images then
    the item's filling the gaps (no marker: the item's image first, then the text)."""
    text = render(template, user_dir, examples=[e.fields for e in examples], **context)
    images = [e.image for e in examples] + [image]
    pieces = text.split(IMAGE_MARK)
    if len(pieces) == 1:
        if examples:
            raise ConfigError(f"prompt template {template!r}: few-shot examples need one {IMAGE_MARK} per "
                              "example and one for the item")
        return [image_part(image), text_part(text)]
    if len(pieces) - 1 != len(images):
        raise ConfigError(f"prompt template {template!r}: {len(pieces) - 1} {IMAGE_MARK} marker(s) for "
                          f"{len(images)} image(s) ({len(examples)} example(s) and the item)")
    parts: list[ContentPart] = []
    for i, piece in enumerate(pieces):
        if piece.strip():
            parts.append(text_part(piece.strip()))
        if i < len(images):
            parts.append(image_part(images[i]))
    return parts
