"""Typed chat message content (SPEC §5): a message's `content` is a string or a list of text and image parts.

The shapes follow inspect_ai's `ContentText` / `ContentImage`. They are pydantic-validated TypedDicts, so
a message stays a plain dict: `{"role": "user", "content": "…"}` written by a task is already a valid
`ChatMessage`, the store hashes and serialises it as is, and every provider reads it with `dict` access.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

Role = Literal["system", "user", "assistant"]


class ContentText(TypedDict):
    """A text part."""

    type: Literal["text"]
    text: str


class ContentImage(TypedDict):
    """An image part: `image` is the image's bytes, a file path, an http(s) URL or a `data:` URL.

    `RequestSpec` loads a path or URL into bytes when it is built (`dialectbias.data.load_image`), so what
    is stored and sent is always the image's content; `mime` (image/png, image/jpeg, image/gif,
    image/webp) is then taken from the bytes."""

    type: Literal["image"]
    image: bytes | str
    mime: NotRequired[str]


ContentPart = Annotated[ContentText | ContentImage, Field(discriminator="type")]


class ChatMessage(TypedDict):
    """One chat message: a role and either a string or a list of parts."""

    role: Role
    content: str | list[ContentPart]



def text_part(text: str) -> ContentText:
    return {"type": "text", "text": text}


def image_part(image: bytes | str, mime: str | None = None) -> ContentImage:
    part: ContentImage = {"type": "image", "image": image}
    if mime is not None:
        part["mime"] = mime
    return part


def message_text(content: Any) -> str:
    """The text of a message's content (its text parts joined by newlines); images contribute nothing."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""
