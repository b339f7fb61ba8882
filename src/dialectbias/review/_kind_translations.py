"""Queue kinds over machine translations (SPEC §4 P1 Gold labelling, P2; Bengali paper §3.1.3, App. C;
BanglaVerse §3.3, Table 9): `translation_score` (a translation pair scored 0–10 with the translation-fidelity
anchors), `translation_correction` (the annotator writes the corrected dialect text) and `validation` (the
3-point scale 0 inaccurate / 1 acceptable with minor revisions / 2 flawless).

Where the translations come from (`translation_targets`), in this order:

1. results of the `translate` stage: each current request of stage `translate` with an ok result is one
   target (`target_id` = its request id; `item_id`, `variant` = the target dialect, the output is the
   translation, the source text is `meta.source` or the item's `standard` variant, a human reference is
   `meta.reference` when given);
2. machine variants of the items: a variant the item marks as not human-validated (item metadata
   `is_human_validated: {variant: false}`, or `false` for every variant but `standard`) and not listed in
   `validated_by` is one target (`target_id` = `item:<item_id>:<variant>`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dialectbias.judges import load_rubric
from dialectbias.review._kinds import AnnotationError, QueueKind, Rating, ReviewConfig
from dialectbias.review._targets import FormField, Panel, ReviewTarget, scale_keys
from dialectbias.store import Store

TRANSLATE_STAGE = "translate"
ITEM_TARGET_PREFIX = "item:"
MAX_CORRECTION_CHARS = 20_000

#: BanglaVerse Table 9 / SPEC §4 P1 Gold labelling
VALIDATION_ANCHORS = {0: "inaccurate", 1: "acceptable with minor revisions", 2: "flawless"}


@dataclass(frozen=True)
class Translation:
    target_id: str
    item_id: str
    dialect: str
    source: str
    translation: str
    reference: str | None = None


def _machine_variants(metadata: Mapping[str, Any], validated_by: Mapping[str, Any], variants: Mapping[str, Any]
                      ) -> list[str]:
    marks = metadata.get("is_human_validated")
    if isinstance(marks, Mapping):
        machine = [v for v, ok in marks.items() if ok is False and v in variants]
    elif marks is False:
        machine = [v for v in variants if v != "standard"]
    else:
        machine = []
    return [v for v in machine if v not in validated_by]


def translation_targets(store: Store) -> Iterator[Translation]:
    """Every machine translation that can be reviewed (see the module docstring for the two sources)."""
    items = {r[0]: (json.loads(r[1]), json.loads(r[2]), json.loads(r[3]))
             for r in store.query("SELECT item_id, variants, validated_by, metadata FROM items ORDER BY item_id")}
    rows = store.query(
        "SELECT q.request_id, q.item_id, q.variant, s.output, q.meta FROM current_requests c "
        "JOIN requests q ON q.request_id = c.request_id JOIN results s ON s.request_id = q.request_id "
        "WHERE q.stage = ? AND s.status = 'ok' ORDER BY q.item_id, q.variant, q.request_id", (TRANSLATE_STAGE,))
    for r in rows:
        meta = json.loads(r[4] or "{}")
        variants = items.get(r[1], ({}, {}, {}))[0]
        yield Translation(r[0], r[1], r[2], str(meta.get("source") or variants.get("standard") or ""), r[3] or "",
                          meta.get("reference"))
    for item_id, (variants, validated_by, metadata) in items.items():
        for variant in _machine_variants(metadata, validated_by, variants):
            yield Translation(f"{ITEM_TARGET_PREFIX}{item_id}:{variant}", item_id, variant,
                              str(variants.get("standard") or ""), str(variants[variant]))


class _TranslationQueue(QueueKind):
    """The three translation queues share their targets; they differ in the form."""

    def targets(self, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
        for t in translation_targets(store):
            yield self._target(t)

    def _target(self, t: Translation) -> ReviewTarget:
        panels = [Panel(label="standard", text=t.source, variant="standard", role="source"),
                  Panel(label=f"machine translation into {t.dialect}", text=t.translation, variant=t.dialect,
                        role="candidate")]
        if t.reference:
            panels.append(Panel(label=f"human reference ({t.dialect})", text=t.reference, variant=t.dialect,
                                role="reference"))
        return ReviewTarget(queue=self.name, target_id=t.target_id, item_id=t.item_id, dialect=t.dialect,
                            title=f"{t.item_id} · {t.dialect}", panels=panels, edit_text=t.translation)


def _scale_value(data: Mapping[str, Any], name: str, values: range) -> int:
    raw = data.get(name)
    if raw is None or raw == "" or isinstance(raw, bool):
        raise AnnotationError({name: "missing"})
    try:
        value = int(str(raw).strip()) if isinstance(raw, str) else raw
    except ValueError:
        raise AnnotationError({name: f"{raw!r} is not an integer"}) from None
    if not isinstance(value, int) or value not in values:
        raise AnnotationError({name: f"{raw!r} is not an integer {values.start}–{values.stop - 1}"})
    return value


class TranslationScoreQueue(_TranslationQueue):
    name = "translation_score"
    title = "Translations to score 0–10"
    description = "score how faithful each machine translation into the dialect is, 0–10"
    annotation_kind = "translation_score"

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        f = load_rubric("translation_fidelity").field("score_integer")
        values = list(range(11))
        return [FormField(name="score", label="fidelity", kind="scale", values=values,
                          description="phonetically equivalent spellings, number forms, spacing and punctuation "
                                      "are not errors", anchors={int(k): v for k, v in (f.anchors or {}).items()},
                          keys=scale_keys(values))]

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        return {"score": _scale_value(data, "score", range(11))}

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        return {Rating("score", "interval", tuple(range(11))): value.get("score")}


class ValidationQueue(_TranslationQueue):
    name = "validation"
    title = "3-point validation"
    description = "0 inaccurate, 1 acceptable with minor revisions, 2 flawless"
    annotation_kind = "validation_3pt"

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        return [FormField(name="label", label="quality", kind="scale", values=[0, 1, 2], anchors=VALIDATION_ANCHORS,
                          keys=scale_keys([0, 1, 2]))]

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        return {"label": _scale_value(data, "label", range(3))}

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        return {Rating("label", "ordinal", (0, 1, 2)): value.get("label")}


class TranslationCorrectionQueue(_TranslationQueue):
    name = "translation_correction"
    title = "Translations to correct"
    description = "rewrite the machine translation as a native speaker of the dialect would say it"
    annotation_kind = "translation_correction"

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        return [FormField(name="text", label="corrected translation", kind="text",
                          description="leave it as it is when it is already right")]

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        raw = data.get("text")
        if not isinstance(raw, str) or not raw.strip():
            raise AnnotationError({"text": "empty (write the corrected translation, or keep the machine's)"})
        text = raw.replace("\r\n", "\n").strip()
        if len(text) > MAX_CORRECTION_CHARS:
            raise AnnotationError({"text": f"longer than {MAX_CORRECTION_CHARS} characters"})
        original = target.edit_text or ""
        return {"text": text, "original": original, "changed": text != original.strip()}

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        return {Rating("changed", "nominal", (False, True)): bool(value.get("changed"))}

    def form_values(self, value: Mapping[str, Any]) -> dict[str, Any]:
        return {"text": value.get("text", "")}
