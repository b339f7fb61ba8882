"""What a review queue shows and asks: the target contract every queue kind fills (SPEC §6, issue 13).

A *target* is one thing a human annotates: a judgment, a machine translation, a model's answer to an image.
Its `target_id` is what the `annotations` row names; `item_id` and `dialect` say which item and variant it
belongs to (assignment by dialect uses `dialect`); `panels` are the texts shown side by side, each with the
variant it is written in (the page sets `lang`/`dir` from it); `image` is the sha256 of an image in the
store's `content` table (served behind auth); `edit_text` pre-fills a correction box.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from dialectbias.dialects import language_of

#: languages written right to left (the page's `dir="rtl"`)
RTL_LANGUAGES = frozenset({"ar", "ckb", "dv", "fa", "he", "ps", "sd", "ug", "ur", "yi"})
#: variant names that are languages (BanglaVerse: English, Hindi, Urdu) -> BCP 47 code
LANGUAGE_VARIANTS = {"bengali": "bn", "english": "en", "german": "de", "hindi": "hi", "urdu": "ur", "arabic": "ar"}


class Panel(BaseModel):
    """One text shown to the annotator: a question, an answer, the judge's reasoning, a translation."""

    label: str
    text: str
    variant: str | None = Field(default=None, description="the variant the text is written in (lang/dir); None: "
                                "the UI's language (e.g. a judge's English reasoning)")
    role: Literal["question", "answer", "reasoning", "source", "candidate", "reference", "info"] = "info"
    name: str = Field(default="", description="a stable name for what the panel shows: a judgment panel's column "
                      "in the review CSV (default: its role)")


class ReviewTarget(BaseModel):
    """One thing to annotate, as a queue kind lists it from the store (the contract of every queue kind)."""

    queue: str
    target_id: str
    item_id: str
    dialect: str
    title: str = ""
    panels: list[Panel] = Field(default_factory=list)
    image: str | None = Field(default=None, description="sha256 of an image row of the store's content table")
    edit_text: str | None = Field(default=None, description="the text a correction starts from")
    details: dict[str, Any] = Field(default_factory=dict, description="kind-specific context (e.g. the judge's "
                                    "field values), shown collapsed")


class FormField(BaseModel):
    """One input of a queue's form. `scale`: radio buttons over `values` with verbal `anchors` and a key
    each; `number`: free number in [minimum, maximum]; `flags`: checkboxes (`options`, one key each);
    `choice`: yes/no/unset; `text`: a text box (corrections)."""

    name: str
    label: str
    kind: Literal["scale", "number", "flags", "choice", "text"]
    description: str = ""
    values: list[int] = Field(default_factory=list)
    anchors: dict[int, str] = Field(default_factory=dict)
    keys: dict[str, str] = Field(default_factory=dict, description="value or option -> keyboard key")
    minimum: float | None = None
    maximum: float | None = None
    options: list[tuple[str, str]] = Field(default_factory=list, description="(value, label) of flags")
    required: bool = True
    default: str = Field(default="", description="text fields: what the box starts with")


def language_tag(variant: str | None, extra: dict[str, list[str]] | None = None, default: str = "bn") -> str:
    """The BCP 47 language of a variant: a dialect's language from the registry, a language variant's code,
    and `default` (the experiment's language) for `standard` or an unknown name."""
    if not variant:
        return "en"
    name = variant.lower()
    if name in LANGUAGE_VARIANTS:
        return LANGUAGE_VARIANTS[name]
    return language_of(name, extra) or default


def text_direction(lang: str) -> str:
    return "rtl" if lang.split("-")[0] in RTL_LANGUAGES else "ltr"


def scale_keys(values: list[int]) -> dict[str, str]:
    """A key per scale value: the digit for 0–9, `t` for 10 (the paper's 0–10 translation score)."""
    keys = {}
    for v in values:
        if 0 <= v <= 9:
            keys[str(v)] = str(v)
        elif v == 10:
            keys[str(v)] = "t"
    return keys
