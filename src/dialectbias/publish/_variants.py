"""The `variants` config: one row per item and variant, with where the text came from (human-written, or
machine-translated by which model) and whether a person validated it, read from the rows `export --items`
writes (`tasks/_items_file.py`, `tasks/translate/_export.py`, `review/_gold.py`).

Provenance rules, per variant `v` of an item row:
- machine when the row's `translation` names `v` (a translate run made it: its `translator` role and `model`),
  or when `is_human_validated` marks `v` (a {variant: bool} map, `false` for the whole row, or a variant
  object's own `is_human_validated` key, as BanglaVerse §3.3 records machine artefacts); else human-written;
- `is_human_validated`: the mark when there is one (true after a review confirmed or corrected it), true for a
  variant in `validated_by` (the loaders' record of who checked it), else null (a human-written text with no
  validation on record)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from dialectbias.dialects import STANDARD, language_of
from dialectbias.text import dominant_script

#: language variants of the registry (`dialects.yaml` `languages:`) and their ISO 639-1 codes
LANGUAGE_CODES = {"bengali": "bn", "english": "en", "german": "de", "hindi": "hi", "urdu": "ur", "arabic": "ar"}

VARIANT_COLUMNS = ("item_id", "variant", "language", "text", "provenance", "translator", "translation_model",
                   "is_human_validated", "validated_by")


def variant_language(variant: str, extra: dict[str, list[str]] | None = None) -> str | None:
    """ISO code of a variant's language: a dialect's language from the registry (or the experiment's
    `dialects:`), a language variant's own code; None for `standard` and unknown names."""
    name = variant.lower()
    return LANGUAGE_CODES.get(name) or language_of(name, extra)


#: the language a standard text's script tells without doubt (Latin or Arabic script could be several)
SCRIPT_LANGUAGES = {"bengali": "bn"}


def standard_language(items: list[Mapping[str, Any]], extra: dict[str, list[str]] | None = None) -> str | None:
    """The language of `standard`: the one language the items' dialects belong to; else the language of the
    script the standard texts are written in, when it tells one (Bengali script: bn); None otherwise."""
    langs = {language_of(v, extra) for row in items for v in row.get("variants") or {} if v != STANDARD} - {None}
    if len(langs) == 1:
        return langs.pop()
    if langs:
        return None
    texts = [_text((row.get("variants") or {}).get(STANDARD)) for row in items]
    scripts = {script for t in texts if t and (script := dominant_script(t)) is not None}
    return SCRIPT_LANGUAGES.get(scripts.pop()) if len(scripts) == 1 else None


def _text(value: Any) -> str:
    """The strings of a variant (a text, or an object's string fields and lists), joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return " ".join(_text(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    return ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _mark(row: Mapping[str, Any], variant: str) -> bool | None:
    marks = row.get("is_human_validated")
    if isinstance(marks, Mapping) and isinstance(marks.get(variant), bool):
        return bool(marks[variant])
    if marks is False and variant != STANDARD:
        return False
    entry = row.get("variants", {}).get(variant)
    if isinstance(entry, Mapping) and isinstance(entry.get("is_human_validated"), bool):
        return bool(entry["is_human_validated"])
    return None


def variant_rows(items: Iterable[Mapping[str, Any]], extra: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """One row per (item, variant) in the items' order: `VARIANT_COLUMNS` (an object variant's text as JSON)."""
    items = list(items)
    std = standard_language(items, extra)
    out = []
    for row in items:
        translation = _mapping(row.get("translation"))
        validated_by = _mapping(row.get("validated_by"))
        for variant, text in (row.get("variants") or {}).items():
            made = translation.get(variant) if isinstance(translation.get(variant), Mapping) else None
            mark = _mark(row, variant)
            by = validated_by.get(variant)
            out.append({
                "item_id": str(row["id"]), "variant": variant,
                "language": std if variant == STANDARD else variant_language(variant, extra),
                "text": text if isinstance(text, str) or text is None else json.dumps(text, ensure_ascii=False),
                "provenance": "machine" if made is not None or mark is not None else "human",
                "translator": None if made is None else made.get("translator"),
                "translation_model": None if made is None else made.get("model"),
                "is_human_validated": mark if mark is not None else (True if by is not None else None),
                "validated_by": by if isinstance(by, str) or by is None else json.dumps(by, ensure_ascii=False)})
    return out


def provenance_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per variant: items, human-written, machine-made, the translating models (model -> count) and the
    is_human_validated true / false / no-record counts, for the dataset card."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        c = out.setdefault(r["variant"], {"language": r["language"], "items": 0, "human": 0, "machine": 0,
                                          "models": {}, "validated": 0, "not_validated": 0, "no_record": 0})
        c["items"] += 1
        c[r["provenance"]] += 1
        if r["translation_model"] is not None:
            c["models"][r["translation_model"]] = c["models"].get(r["translation_model"], 0) + 1
        key = {True: "validated", False: "not_validated", None: "no_record"}[r["is_human_validated"]]
        c[key] += 1
    return {v: out[v] for v in sorted(out, key=lambda v: (v != STANDARD, v))}
