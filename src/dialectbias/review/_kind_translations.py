"""Queue kinds over machine translations (SPEC §4 P1 Gold labelling, P2; Bengali paper §3.1.3, App. C;
BanglaVerse §3.3, Table 9): `translation_score` (a translation pair scored 0–10 with the translation-fidelity
anchors), `translation_correction` (the annotator writes the corrected dialect text) and `validation` (the
3-point scale 0 inaccurate / 1 acceptable with minor revisions / 2 flawless).

Where the translations come from (`translation_targets`), in this order:

1. the task's translations, as data the CLI passes in: its own post-processed answers,
   `ReviewConfig.translations(store)` yielding `Translation`s (the CLI passes the experiment task's
   `translations(store)` through `task_translations`); or, without them, the stage
   `ReviewConfig.translation_stage` names: each current request of it with an ok, non-empty result is one
   target (`target_id` = its request id; `item_id`; `variant` = the target dialect; the translation = the
   stored output; the source = `meta.source`, a text or a list of texts, else the item's `standard`
   variant; `meta.field` names the field group of an object variant; `meta.reference` a human reference);
2. machine variants of the items: a variant the item marks as not human-validated — item metadata
   `is_human_validated: {variant: false}` (what `dialectbias export --items` of a translation run writes) or
   `false` for every variant but `standard`, or an object variant (VQA/caption entry) holding
   `"is_human_validated": false` — and not listed in `validated_by` is one target (`target_id` =
   `item:<item_id>:<variant>`). Object variants are shown field by field, and corrected field by field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dialectbias.review._kinds import AnnotationError, QueueKind, Rating, ReviewConfig
from dialectbias.review._targets import FormField, Panel, ReviewTarget, scale_keys
from dialectbias.store import ItemRecord, Store, item_records, stage_outputs

ITEM_TARGET_PREFIX = "item:"
MAX_CORRECTION_CHARS = 20_000

#: BanglaVerse Table 9 / SPEC §4 P1 Gold labelling
VALIDATION_ANCHORS = {0: "inaccurate", 1: "acceptable with minor revisions", 2: "flawless"}

#: What each 0–10 fidelity score means, in the plain words a native speaker annotator reads on the form (the
#: app's `translation_score` queue, its CSV README). The scale is the Bengali paper's (Sami et al., arXiv
#: 2603.21359, §3.1.3 and App. A "Step 3 — Strict Scoring Rubric (0–10)": 10 only exempt differences, 9
#: exactly one valid dialectal synonym, 8 one slightly off word with the meaning completely preserved, 7 the
#: hard ceiling for exactly one inaccurate word or meaning shift, 6/5 exactly two inaccuracies with the
#: meaning mostly preserved / noticeably diminished, 4/3 three inaccuracies with the gist preserved /
#: partially right, "1–2: four or more inaccuracies, or drastically altered meaning", 0 complete failure,
#: wrong dialect/language or hallucination). The judge's prompt keeps the paper's wording
#: (resources/rubrics/translation_fidelity.yaml); people get the same scale without the rubric's terms, and
#: the paper's shared 1–2 band is split so that the two scores read differently: 2 when four or more
#: words are wrong but the main idea survives, 1 when the meaning is drastically changed. Both stay inside
#: the paper's band, so every score means what the paper's scale says (this is not a departure).
TRANSLATION_SCORE_ANCHORS = {
    10: "as good as the reference: only spelling, spacing or punctuation differ",
    9: "one word differs, but it is a correct word of the dialect with the same meaning",
    8: "one word is slightly off; the meaning is fully kept",
    7: "one word is wrong, or one word changes the meaning or the politeness",
    6: "two words are wrong; the meaning mostly comes through",
    5: "two words are wrong; the meaning is noticeably weaker",
    4: "three words are wrong; the main idea still comes through",
    3: "three words are wrong; the sentence is only partly right",
    2: "four or more words are wrong, but the main idea can still be recognised",
    1: "the meaning is badly changed: little of the original sentence is left",
    0: "useless: the wrong dialect or language, or made-up text",
}


#: keys of an object variant that are not text to show or correct
NOT_TEXT_KEYS = frozenset({"is_human_validated", "answer_index", "split"})
#: the order an object variant's fields are shown in (the store keeps JSON keys sorted), the rest by name
_ORDER = {"question": 0, "options": 1, "answer": 2, "caption": 3}

Entry = str | dict[str, Any]


@dataclass(frozen=True)
class Translation:
    """One machine translation to review: the text (or object variant: VQA/caption entry) in the target
    dialect, its source, and a human reference when there is one."""

    target_id: str
    item_id: str
    dialect: str
    source: Entry
    translation: Entry
    reference: str | None = None
    field: str = ""


def text_fields(entry: str | Mapping[str, Any] | None) -> dict[str, str]:
    """The texts of a variant: {"": text} for a string; for an object, each string field, and each list of
    strings as one line per element (a VQA entry's options), question first."""
    if not isinstance(entry, Mapping):
        return {"": "" if entry is None else str(entry)}
    out = {}
    for key, value in sorted(entry.items(), key=lambda kv: (_ORDER.get(kv[0], len(_ORDER)), kv[0])):
        if key in NOT_TEXT_KEYS:
            continue
        if isinstance(value, str):
            out[key] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = "\n".join(value)
    return out


def entry_text(entry: Entry) -> str:
    fields = text_fields(entry)
    return fields.get("", "") if "" in fields else "\n".join(f"{k}: {v}" for k, v in fields.items())


def _machine_variants(metadata: Mapping[str, Any], validated_by: Mapping[str, Any], variants: Mapping[str, Any]
                      ) -> list[str]:
    marks = metadata.get("is_human_validated")
    if isinstance(marks, Mapping):
        machine = [v for v, ok in marks.items() if ok is False and v in variants]
    elif marks is False:
        machine = [v for v in variants if v != "standard"]
    else:
        machine = []
    machine += [v for v, entry in variants.items()
                if isinstance(entry, Mapping) and entry.get("is_human_validated") is False and v not in machine]
    return [v for v in machine if v not in validated_by]


def _stage_translations(store: Store, stage: str, items: Mapping[str, ItemRecord]) -> Iterator[Translation]:
    for r in stage_outputs(store, stage):
        meta = r.meta
        source = meta.get("source")
        if isinstance(source, list):
            source = "\n".join(str(s) for s in source)
        if not source:
            item = items.get(r.item_id)
            source = (item.variants if item else {}).get(meta.get("source_variant") or "standard") or ""
        yield Translation(r.request_id, r.item_id, r.variant, source, r.output or "", meta.get("reference"),
                          str(meta.get("field") or ""))


def task_translations(read: Callable[[Store], Iterable[Any]]) -> Callable[[Store], Iterator[Translation]]:
    """A task's post-processed translations as review targets: `read(store)` yields objects with `ok`,
    `request_id`, `item_id`, `target`, `source` (texts), `text` (a text or a list) and `field` (a task's
    `translations(store)`); failed ones are left out (they are not variants)."""
    def rows(store: Store) -> Iterator[Translation]:
        for t in read(store):
            if not getattr(t, "ok", False):
                continue
            text = "\n".join(t.text) if isinstance(t.text, list | tuple) else str(t.text or "")
            source = "\n".join(t.source) if isinstance(t.source, list | tuple) else str(t.source or "")
            field = str(getattr(t, "field", "") or "")
            if field == "text" and not getattr(t, "is_list", False):  # a plain string variant: no field group
                field = ""
            yield Translation(t.request_id, t.item_id, t.target, source, text, getattr(t, "reference", None), field)

    return rows


def translation_targets(store: Store, config: ReviewConfig | None = None) -> Iterator[Translation]:
    """Every machine translation that can be reviewed (see the module docstring for the two sources)."""
    items = {r.item_id: r for r in item_records(store)}
    if config is not None and config.translations is not None:
        yield from config.translations(store)
    elif config is not None and config.translation_stage is not None:
        yield from _stage_translations(store, config.translation_stage, items)
    for item in items.values():
        for variant in _machine_variants(item.metadata, item.validated_by, item.variants):
            yield Translation(f"{ITEM_TARGET_PREFIX}{item.item_id}:{variant}", item.item_id, variant,
                              item.variants.get("standard") or "", item.variants[variant])


class _TranslationQueue(QueueKind):
    """The three translation queues share their targets; they differ in the form."""

    def targets(self, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
        for t in translation_targets(store, config):
            yield self._target(t)

    def _target(self, t: Translation) -> ReviewTarget:
        panels = [Panel(label="standard", text=entry_text(t.source), variant="standard", role="source"),
                  Panel(label=f"machine translation into {t.dialect}", text=entry_text(t.translation),
                        variant=t.dialect, role="candidate")]
        if t.reference:
            panels.append(Panel(label=f"human reference ({t.dialect})", text=t.reference, variant=t.dialect,
                                role="reference"))
        details: dict[str, Any] = {"field group": t.field} if t.field else {}
        if isinstance(t.translation, Mapping):
            details["fields"] = text_fields(t.translation)
        return ReviewTarget(queue=self.name, target_id=t.target_id, item_id=t.item_id, dialect=t.dialect,
                            title=f"{t.item_id} · {t.dialect}" + (f" · {t.field}" if t.field else ""), panels=panels,
                            edit_text=entry_text(t.translation), details=details)


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
    order = 20
    title = "Translations to score 0–10"
    description = "score how faithful each machine translation into the dialect is, 0–10"
    annotation_kind = "translation_score"

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        values = list(range(11))
        return [FormField(name="score", label="how faithful is the translation?", kind="scale", values=values,
                          description="spellings that sound the same, digits instead of number words, spacing and "
                                      "punctuation are not mistakes", anchors=dict(TRANSLATION_SCORE_ANCHORS),
                          keys=scale_keys(values))]

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        return {"score": _scale_value(data, "score", range(11))}

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        return {Rating("score", "interval", tuple(range(11))): value.get("score")}


class ValidationQueue(_TranslationQueue):
    name = "validation"
    order = 40
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
    order = 30
    title = "Translations to correct"
    description = "rewrite the machine translation as a native speaker of the dialect would say it"
    annotation_kind = "translation_correction"

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        parts = target.details.get("fields")
        if isinstance(parts, Mapping):  # an object variant: one box per text field (a list: one line each)
            return [_correction_box(f"text.{key}", f"corrected {key}", value,
                                    "one option per line" if "\n" in value else "")
                    for key, value in parts.items()]
        return [_correction_box("text", "corrected translation", target.edit_text or "",
                                "leave it as it is when it is already right")]

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        parts = target.details.get("fields")
        if isinstance(parts, Mapping):
            texts = {key: _corrected(data.get(f"text.{key}"), f"text.{key}") for key in parts}
            return {"text": texts, "original": dict(parts), "changed": any(texts[k] != parts[k].strip() for k in parts)}
        text = _corrected(data.get("text"), "text")
        original = target.edit_text or ""
        return {"text": text, "original": original, "changed": text != original.strip()}

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        return {Rating("changed", "nominal", (False, True)): bool(value.get("changed"))}

    def form_values(self, value: Mapping[str, Any]) -> dict[str, Any]:
        text = value.get("text", "")
        if isinstance(text, Mapping):
            return {f"text.{k}": v for k, v in text.items()}
        return {"text": text}


def _correction_box(name: str, label: str, text: str, description: str) -> FormField:
    """A correction box starting from the machine's text; a text longer than a correction may be is not put
    in the page (it could not be saved, and a megabyte-long box stalls the browser): the box starts empty
    and says why."""
    if len(text) > MAX_CORRECTION_CHARS:
        return FormField(name=name, label=label, kind="text", default="",
                         description=f"this translation is {len(text):,} characters long, more than the "
                                     f"{MAX_CORRECTION_CHARS:,} a correction may have: skip it and tell your "
                                     "annotation lead")
    return FormField(name=name, label=label, kind="text", default=text, description=description)


def _corrected(raw: Any, name: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise AnnotationError({name: "empty (write the corrected translation, or keep the machine's)"})
    text = raw.replace("\r\n", "\n").strip()
    if len(text) > MAX_CORRECTION_CHARS:
        raise AnnotationError({name: f"longer than {MAX_CORRECTION_CHARS} characters"})
    return text
