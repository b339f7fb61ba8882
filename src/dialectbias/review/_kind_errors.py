"""Queue kind `error_coding`: code a vision-language model's answer with BanglaVerse's error categories
(BanglaVerse §6 and App. H: entity misrecognition, surface-level descriptive fallback, societal/cultural
bias, language constraint violation; none checked = no error).

Targets: every current model request (not a judge's, not a re-ask) whose messages carry an image part and
that has an ok result — `target_id` = the request id, `item_id`/`variant` from the request, the question
shown is the item's text in that variant (a VQA entry: question and options), the answer is the result's
output, the image is the request's last image part (sha256 of the store's `content` table; few-shot example
images come before the item's). A visual task's generations are such requests, and so is any item with an
image.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from dialectbias.review._kind_translations import entry_text
from dialectbias.review._kinds import AnnotationError, QueueKind, Rating, ReviewConfig
from dialectbias.review._targets import FormField, Panel, ReviewTarget
from dialectbias.store import ImageAnswer, Store, image_answers, item_variants

#: (value, label, key) — BanglaVerse §6
ERROR_CATEGORIES = (
    ("entity_misrecognition", "entity misrecognition (a local person, place, food or artifact not recognised)", "e"),
    ("descriptive_fallback", "surface-level descriptive fallback (literal description, cultural meaning missed)",
     "s"),
    ("cultural_bias", "societal or cultural bias (e.g. stereotyping from attire)", "b"),
    ("language_violation", "language constraint violation (answer not in the requested language or script)", "l"),
)
_NAMES = tuple(c[0] for c in ERROR_CATEGORIES)

#: the stage of judge requests (answers to an image that are judgments are not coded)
JUDGE_STAGE = "judge"


def _image_of(messages: str) -> str | None:
    """The request's last image part: the item's own image (few-shot example images come before it)."""
    found = None
    for message in json.loads(messages or "[]"):
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image" and part.get("sha256"):
                found = str(part["sha256"])
    return found


class ErrorCodingQueue(QueueKind):
    name = "error_coding"
    order = 50
    title = "Error analysis (images)"
    description = "tick every error the answer makes; none ticked = no error"
    annotation_kind = "error_coding"

    def targets(self, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
        yield from self._select(store, image_answers(store, JUDGE_STAGE))

    def target(self, config: ReviewConfig, store: Store, target_id: str) -> ReviewTarget | None:
        return next(self._select(store, image_answers(store, JUDGE_STAGE, target_id)), None)

    def _select(self, store: Store, answers: list[ImageAnswer]) -> Iterator[ReviewTarget]:
        variants = item_variants(store)
        for a in answers:
            image = _image_of(a.messages)
            if image is None:
                continue
            question = entry_text(variants.get(a.item_id, {}).get(a.variant, ""))  # a text, or an object variant
            yield ReviewTarget(queue=self.name, target_id=a.request_id, item_id=a.item_id, dialect=a.variant,
                               title=f"{a.item_id} · {a.variant}", image=image,
                               panels=[Panel(label=f"question ({a.variant})", text=question, variant=a.variant,
                                             role="question"),
                                       Panel(label="model answer", text=a.output or "", variant=a.variant,
                                             role="answer")])

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        return [FormField(name="categories", label="errors", kind="flags", required=False,
                          options=[(v, label) for v, label, _ in ERROR_CATEGORIES],
                          keys={v: key for v, _, key in ERROR_CATEGORIES})]

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        raw = data.get("categories")
        chosen = [raw] if isinstance(raw, str) else list(raw or [])
        unknown = [c for c in chosen if c not in _NAMES]
        if unknown:
            raise AnnotationError({"categories": f"unknown category {unknown[0]!r}; categories: {', '.join(_NAMES)}"})
        return {"categories": [c for c in _NAMES if c in chosen]}

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        chosen = set(value.get("categories") or ())
        return {Rating(c, "nominal", (False, True)): c in chosen for c in _NAMES}

    def form_values(self, value: Mapping[str, Any]) -> dict[str, Any]:
        return {"categories": list(value.get("categories") or ())}

