"""`dialectbias export EXP --items OUT.jsonl`: the translate experiment's items with their new variants, an
items file qa_bias, association and vqa read as `data:`.

Each item is written as it was read (id, domain, question_type, variants, gold, validated_by and its other
fields), plus every target variant whose field groups all passed post-processing, and:
- `is_human_validated`: {variant: false} for each machine variant (human-validated variants are those
  in `validated_by`, the loaders' record of who checked a variant);
- `translation`: {variant: {translator, model, template, request_ids, examples[, transcripts]}}: where it came from;
- `leaked`: true when a source text is the standard side of a pair the retrieval index holds (its
  translation saw its own reference), false when it is not, null without an index.
An item that already has a target variant keeps it. A relative `image` path is rewritten for OUT's folder.

Gold labelling (`review/_gold.py`): the review's corrections of the translations (targets: the translate
requests) and of the items' own machine variants (targets `item:<id>:<variant>`) are applied, and the
corrected (or confirmed) variants are marked human-validated (`validated_by`, `is_human_validated: true`,
`validation`). `tasks/_items_file.export_store_items` does the same for the items of any experiment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialectbias.review import Correction, Gold
from dialectbias.store import Store
from dialectbias.tasks._items_file import ItemsExport, data_folder, item_record, rebase_paths
from dialectbias.tasks.translate._fields import assemble_variant, plan_variant
from dialectbias.tasks.translate._results import Translation, dialect_id_provenance

if TYPE_CHECKING:
    from dialectbias.tasks.translate._task import TranslateTask


def export_items(task: TranslateTask, store: Store, out: Path) -> ItemsExport:
    """The translate run's items with their new variants, as `TranslateTask.export_items` writes them."""
    translator = task.exp.role("translator")
    by_variant: dict[tuple[str, str], list[Translation]] = {}
    for t in task.translations(store):
        by_variant.setdefault((t.item_id, t.target), []).append(t)
    data_dir, gold = data_folder(task.exp), Gold(store)
    result = ItemsExport(out, gold=gold.summary)
    validations: dict[str, tuple[list[Correction], bool]] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for item in store.iter_items():
            row = item_record(item)
            rebase_paths(row, data_dir, out.parent.resolve(), item.id)
            source = item.variants.get(task.source)
            plan = plan_variant(source, task.options.fields) if source is not None else None
            leaked: bool | None = None
            machine: dict[str, Any] = {}
            for target in task.targets:
                rows = by_variant.get((item.id, target), [])
                leaked = _merge_leak(leaked, rows)
                if item.variants.get(target) not in (None, ""):
                    result.kept_existing += 1
                    continue
                if not rows or plan is None:
                    continue
                done = {t.field: t.text for t in rows if t.ok and t.text is not None}
                if any(g.name not in done for g in plan.groups):
                    result.variants_incomplete += 1
                    continue
                machine_variant = assemble_variant(source, plan, done)
                corrected = _apply_corrections(gold, rows, done)
                row["variants"][target] = assemble_variant(source, plan, done)
                machine[target] = {"translator": translator.id, "model": translator.model,
                                   "template": _template_of(rows), "request_ids": [t.request_id for t in rows],
                                   "examples": sorted({e for t in rows for e in t.examples}),
                                   **_transcripts_of(rows),
                                   **dialect_id_provenance(rows)}
                result.variants_added += 1
                validations[target] = (corrected, row["variants"][target] != machine_variant)
            if machine:
                row["is_human_validated"] = {**_dict(row.get("is_human_validated")),
                                             **dict.fromkeys(machine, False)}
                row["translation"] = {**_dict(row.get("translation")), **machine}
            for target, (corrected, changed) in validations.items():
                ids = machine[target]["request_ids"]
                gold.mark(row, target, corrected, gold.labels_of(ids), complete=len(corrected) == len(ids),
                          changed=changed)
            validations.clear()
            gold.apply_item_variants(row, skip=machine)
            row["leaked"] = leaked
            result.leaked_items += bool(leaked)
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            result.items += 1
    tmp.replace(out)
    return result


def _apply_corrections(gold: Gold, rows: list[Translation], done: dict[str, Any]) -> list[Correction]:
    """Replace each field group's text in `done` by its correction; the corrections applied."""
    applied = []
    for t in rows:
        if t.field not in done:
            continue
        text = gold.corrected_field(t.request_id, t.is_list, done[t.field])
        if text is not None:
            done[t.field] = text
            applied.append(gold.corrections[t.request_id])
    return applied


def _template_of(rows: list[Translation]) -> str | None:
    """The requests' template (one per target)."""
    return rows[0].template if rows else None


def _merge_leak(current: bool | None, rows: list[Translation]) -> bool | None:
    for t in rows:
        if t.leaked is not None:
            current = bool(current) or t.leaked
    return current


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _transcripts_of(rows: list[Translation]) -> dict[str, list[str]]:
    """{"transcripts": ids} of the dialect-only transcripts the prompts showed; nothing when none were shown."""
    ids = sorted({t for row in rows for t in row.transcripts})
    return {"transcripts": ids} if ids else {}
