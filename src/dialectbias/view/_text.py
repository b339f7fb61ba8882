"""Texts as the explorer's pages show them: long ones collapsed and capped (a 1 MB answer must not make a
megabytes page; the full text is one link away, from the API), each in its variant's language and direction
(Bengali `lang="bn"`, Urdu `dir="rtl"`: `review._targets`, the review app's own rules)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dialectbias.review._targets import language_tag, text_direction

#: texts longer than this are collapsed (<details>), the first PREVIEW_CHARS shown
PREVIEW_CHARS = 600
#: a page never shows more than this many characters of one text (the API serves the whole)
PAGE_CHARS = 20_000


@dataclass(frozen=True)
class ShownText:
    """A text to render: its preview, the part shown on expanding, and whether it is cut (then `full_url`)."""

    preview: str
    shown: str
    length: int
    collapsed: bool
    cut: bool
    lang: str
    dir: str
    full_url: str = ""


def shown_text(text: str | None, lang: str = "en", full_url: str = "") -> ShownText:
    """`text` for a page: collapsed when longer than PREVIEW_CHARS, cut at PAGE_CHARS (with `full_url`)."""
    text = text or ""
    return ShownText(preview=text[:PREVIEW_CHARS], shown=text[:PAGE_CHARS], length=len(text),
                     collapsed=len(text) > PREVIEW_CHARS, cut=len(text) > PAGE_CHARS, lang=lang,
                     dir=text_direction(lang) if lang != "en" else "auto", full_url=full_url)


def variant_lang(variant: str | None, dialects: dict[str, list[str]], language: str) -> str:
    """The BCP 47 tag of a variant's text (the experiment's language for `standard`)."""
    return language_tag(variant, dialects, language)


def messages_text(messages: list[Any]) -> str:
    """A request's messages as one readable text: `role:` then its content (image parts as a placeholder)."""
    parts = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else m
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") if p.get("type") == "text" else f"[{p.get('type')}]"
                                for p in content if isinstance(p, dict))
        role = m.get("role", "") if isinstance(m, dict) else ""
        parts.append(f"{role}:\n{content}" if role else str(content))
    return "\n\n".join(parts)


def pretty(value: Any) -> str:
    """JSON for a page (keys sorted, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)
