"""Multimodal items of the BanglaVerse tasks (`vqa`, `caption`, `csu`; BanglaVerse §3.5, SPEC §4 P5).

An item is an image, a domain and, per variant (`standard` Bengali, other languages, dialects), a VQA entry
(question, options, answer), a reference caption, or a commonsense question with a short free-text answer
(`csu`: question, answer; no options). The flat JSONL form is the contract other tools
(the `translate` task) read and write:

    {"id": "culture_114", "domain": "culture", "image": "images/culture_114.jpg",
     "variants": {"standard": {"question": "…", "options": ["…", "…", "…", "…"], "answer_index": 1},
                  "sylhet": {…}}}

A variant may give `answer` (the option text) instead of `answer_index`; the index is derived as in the
released BanglaVerse code (`options.index(answer)`, here after an exact, then a normalised match). An
answer that is not among the options gives `answer_index: None`: the item stays in `n` and can never be
correct (as in the released code), is flagged in the report, and `options.exclude_unanswerable` drops it.
`caption` holds the reference caption; `is_human_validated` (default: true, or the item's `validated_by`
when it has one) marks machine variants (false).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dialectbias.data import STANDARD, Item
from dialectbias.dialects import language_of
from dialectbias.errors import DataError, validation_problems
from dialectbias.text import normalize_text

#: the split name marking an item as a few-shot example (held out of the evaluation)
FEW_SHOT_SPLIT = "few_shot"


class VQAEntry(BaseModel):
    """One variant's multiple-choice question."""

    model_config = ConfigDict(extra="allow")

    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2)
    answer_index: int | None = None
    answer: str | None = None
    is_human_validated: bool | None = None

    @field_validator("options")
    @classmethod
    def _texts(cls, options: list[str]) -> list[str]:
        if any(not str(o).strip() for o in options):
            raise ValueError("an option is empty")
        return [str(o) for o in options]


class CaptionEntry(BaseModel):
    """One variant's reference caption."""

    model_config = ConfigDict(extra="allow")

    caption: str = Field(min_length=1)
    is_human_validated: bool | None = None


class CSUEntry(BaseModel):
    """One variant's commonsense question and its short reference answer (no options)."""

    model_config = ConfigDict(extra="allow")

    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    is_human_validated: bool | None = None


@dataclass(frozen=True)
class CSUVariant:
    """A variant's commonsense question as scored."""

    question: str
    answer: str
    human_validated: bool


def csu_variant(item: Item, variant: str) -> CSUVariant:
    """The item's commonsense entry in `variant`; DataError naming the item and variant when it is malformed
    or is a multiple-choice (vqa) entry."""
    value = item.variants.get(variant)
    if isinstance(value, dict) and "options" in value:
        raise DataError(f"item {item.id!r} variant {variant!r}: has 'options' (a multiple-choice vqa entry); csu "
                        "needs a question with a short free-text answer: {\"question\": \"…\", \"answer\": \"…\"}")
    entry = _entry(item, variant, CSUEntry)
    if not entry.answer.strip() or not entry.question.strip():
        raise DataError(f"item {item.id!r} variant {variant!r}: question or answer is blank")
    return CSUVariant(entry.question, entry.answer, _validated(item, variant, entry.is_human_validated))


def gold_index(options: list[str], answer_index: int | None, answer: str | None) -> int | None:
    """The correct option's index: `answer_index` when given (checked against the options), else the
    position of `answer` among the options (exact, then after `normalize_text` and case folding), else None
    (the answer is not among the options: never correct, BanglaVerse's released scorer does the same)."""
    if answer_index is not None:
        return answer_index if 0 <= answer_index < len(options) else None
    if answer is None:
        return None
    if answer in options:
        return options.index(answer)
    key = _norm(answer)
    matches = [i for i, o in enumerate(options) if _norm(o) == key]
    return matches[0] if len(matches) == 1 else None


def _norm(text: str) -> str:
    return normalize_text(text).casefold().strip(" \"'“”‘’«»।.,;:!?")


@dataclass(frozen=True)
class VQAVariant:
    """A variant's question as scored: the options and the derived gold index."""

    question: str
    options: list[str]
    gold: int | None
    human_validated: bool

    @property
    def answerable(self) -> bool:
        return self.gold is not None


def vqa_variant(item: Item, variant: str) -> VQAVariant:
    """The item's VQA entry in `variant`; DataError naming the item and variant when it is malformed."""
    entry = _entry(item, variant, VQAEntry)
    if entry.answer_index is not None and not 0 <= entry.answer_index < len(entry.options):
        raise DataError(f"item {item.id!r} variant {variant!r}: answer_index {entry.answer_index} is outside "
                        f"the {len(entry.options)} options (0-based)")
    return VQAVariant(entry.question, entry.options, gold_index(entry.options, entry.answer_index, entry.answer),
                      _validated(item, variant, entry.is_human_validated))


def caption_reference(item: Item, variant: str) -> tuple[str, bool]:
    """(reference caption, human-validated) of the item in `variant`."""
    entry = _entry(item, variant, CaptionEntry)
    return entry.caption, _validated(item, variant, entry.is_human_validated)


def _validated(item: Item, variant: str, flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return item.is_human_validated(variant) if item.validated_by else True


def _entry(item: Item, variant: str, model: type[Any]) -> Any:
    value = item.variants.get(variant)
    if isinstance(value, str):
        value = {"caption": value} if model is CaptionEntry else value
    if not isinstance(value, dict):
        raise DataError(f"item {item.id!r} variant {variant!r}: expected an object "
                        f"({', '.join(f for f in model.model_fields if f != 'is_human_validated')}), got "
                        f"{type(value).__name__}")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise DataError("; ".join([f"item {item.id!r} variant {variant!r}: invalid entry",
                                   *validation_problems(exc, ("variants", variant), None,
                                                        known=list(model.model_fields))])) from None


def has_entry(item: Item, variant: str, key: str) -> bool:
    """Whether the item's variant holds `key` (question or caption)."""
    value = item.variants.get(variant)
    if key == "caption" and isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, dict) and bool(value.get(key))


# -- languages ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Language:
    """How a prompt names a variant's language and script, and which script the answer is checked for."""

    key: str  # bengali, english, hindi, urdu
    name: str  # as the prompt says it
    script: str  # a `dialectbias.text` script name
    script_name: str  # as the prompt says it
    other: str  # the language the prompt forbids words of
    dialect: str | None = None


LANGUAGES = {
    "bengali": Language("bengali", "Bangla", "bengali", "Bengali", "English"),
    "english": Language("english", "English", "latin", "Latin", "Bangla"),
    "hindi": Language("hindi", "Hindi", "devanagari", "Devanagari", "English"),
    "urdu": Language("urdu", "Urdu", "arabic", "Arabic (Nastaliq)", "English"),
}
_LANGUAGE_CODES = {"bn": "bengali", "en": "english", "hi": "hindi", "ur": "urdu"}


def variant_language(variant: str, extra: dict[str, list[str]] | None = None) -> Language:
    """`standard` and Bengali dialects → Bangla (Bengali script; a dialect keeps its name for the prompt),
    `english`/`hindi`/`urdu` → that language; anything else is an error naming the variant."""
    name = variant.lower()
    if name == STANDARD or name == "bengali":
        return LANGUAGES["bengali"]
    if name in LANGUAGES:
        return LANGUAGES[name]
    code = language_of(name, extra)
    if code in _LANGUAGE_CODES:
        base = LANGUAGES[_LANGUAGE_CODES[code]]
        pretty = name.replace("_", " ").title()
        return Language(base.key, base.name, base.script, base.script_name, base.other, dialect=pretty)
    raise DataError(f"variant {variant!r}: no prompt language for it (vqa/caption know standard Bengali, its "
                    f"dialects, {', '.join(sorted(LANGUAGES))}; add a Bengali dialect with `dialects: {{bn: "
                    f"[{name}]}}`)")


# -- few-shot examples --------------------------------------------------------------------------------


def few_shot_split(items: Iterable[Item], k: int, seed: int, variants: list[str] | None = None,
                   usable: Callable[[Item], bool] | None = None) -> dict[str, list[str]]:
    """domain → the ids of its `k` few-shot example items, drawn once with `seed` (BanglaVerse §4.2: a
    fixed set per domain from a held-out split, identical for every model).

    Items marked `split: few_shot` form the held-out pool when any item is marked; otherwise `k` items
    per domain are held out here, preferring items that carry every variant (so each language has its
    examples); `usable` leaves out items that cannot be shown (a VQA item whose answer is not among its
    options). Examples are never evaluated, in any strategy, so the strategies compare on the same items."""
    items = [i for i in items if usable is None or usable(i)]
    marked = [i for i in items if i.metadata.get("split") == FEW_SHOT_SPLIT]
    pool = marked or items
    wanted = set(variants or [])
    out: dict[str, list[str]] = {}
    for domain in sorted({i.domain or "" for i in pool}):
        candidates = sorted((i for i in pool if (i.domain or "") == domain), key=lambda i: i.id)
        complete = [i for i in candidates if wanted <= set(i.variants)] if wanted else candidates
        rest = [i for i in candidates if i not in complete]
        rng = random.Random(f"{seed}:{domain}")
        chosen = rng.sample(complete, min(k, len(complete)))
        if len(chosen) < k:
            chosen += rng.sample(rest, min(k - len(chosen), len(rest)))
        if marked:  # the user's split: every marked item of the domain is a candidate, keep k
            chosen = chosen[:k]
        out[domain] = sorted(i.id for i in chosen)
    return out
