"""`dialectbias export EXP --items OUT.jsonl`: the translate experiment's items with their new variants, an
items file qa_bias, association and vqa read as `data:`.

Each item is written as it was read (id, domain, question_type, variants, gold, validated_by and its other
fields), plus every target variant whose field groups all passed post-processing, and:
- `is_human_validated`: {variant: false} for each machine variant (human-validated variants are those
  in `validated_by`, the loaders' record of who checked a variant);
- `translation`: {variant: {translator, model, template, request_ids, examples}}: where it came from;
- `leaked`: true when a source text is the standard side of a pair the retrieval index holds (its
  translation saw its own reference), false when it is not, null without an index.
An item that already has a target variant keeps it. A relative `image` path is rewritten for OUT's folder.

Gold labelling (`review/_gold.py`): the review's corrections of the translations (targets: the translate
requests) and of the items' own machine variants (targets `item:<id>:<variant>`) are applied, and the
corrected (or confirmed) variants are marked human-validated (`validated_by`, `is_human_validated: true`,
`validation`). `export_store_items` does the same for the items of any experiment.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialectbias.data import Item, is_url, items_dir
from dialectbias.errors import DataError
from dialectbias.review import Correction, Gold, GoldSummary
from dialectbias.store import Store
from dialectbias.tasks.translate._fields import assemble_variant, plan_variant
from dialectbias.tasks.translate._results import Translation, dialect_id_provenance

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dialectbias.config import Experiment
    from dialectbias.tasks.translate._task import TranslateTask

#: item fields holding a path relative to the data file's folder (rewritten for the output's folder)
PATH_FIELDS = ("image",)


@dataclass
class ItemsExport:
    """What `export --items` wrote."""

    path: Path
    items: int = 0
    variants_added: int = 0
    variants_incomplete: int = 0
    kept_existing: int = 0
    leaked_items: int = 0
    gold: GoldSummary | None = None
    translate: bool = True  # a translate experiment's export (new variants), else the items as loaded

    def lines(self) -> list[str]:
        out = [f"{self.items:>8} items → {self.path}"]
        if self.translate:
            out += [f"{self.variants_added:>8} machine variants added (is_human_validated: false unless validated)",
                    f"{self.variants_incomplete:>8} variants not exported: a field failed or is not translated yet",
                    f"{self.kept_existing:>8} variants the items already had (kept, not replaced)",
                    f"{self.leaked_items:>8} items flagged leaked: true (source text among the index's pairs)"]
        return out + (self.gold.lines() if self.gold is not None else [])


def item_record(item: Item) -> dict[str, Any]:
    """An item as a data-file row (the inverse of the loaders' `_to_item`)."""
    row: dict[str, Any] = {"id": item.id}
    if item.domain is not None:
        row["domain"] = item.domain
    if item.question_type is not None:
        row["question_type"] = item.question_type
    row["variants"] = dict(item.variants)
    if item.gold is not None:
        row["gold"] = item.gold
    if item.validated_by:
        row["validated_by"] = dict(item.validated_by)
    row.update(item.metadata)
    return row


def _data_dir(exp: Experiment) -> Path | None:
    """The folder the items' relative paths are relative to (a data folder's layout root, a file's folder)."""
    data = exp.data
    return None if not data or data.startswith("hf://") else items_dir(exp.resolve(data))


def _write_rows(out: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write item rows as JSONL, atomically (a temporary file renamed at the end)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(out)
    return n


def export_store_items(exp: Experiment, store: Store | None, out: Path, items: Iterable[Item] = ()) -> ItemsExport:
    """Any experiment's items as loaded (`dialectbias export EXP --items OUT.jsonl`), with the review's
    corrections of their machine variants applied and the validations recorded; without a store (no run
    yet), `items` as the experiment reads them from its data (e.g. a folder in the BanglaVerse layout)."""
    data_dir, gold = _data_dir(exp), Gold(store) if store is not None else None
    result = ItemsExport(out, gold=gold.summary if gold is not None else None, translate=False)

    def rows() -> Iterable[dict[str, Any]]:
        for item in store.iter_items() if store is not None else items:
            row = item_record(item)
            _rebase_paths(row, data_dir, out.parent.resolve(), item.id)
            if gold is not None:
                gold.apply_item_variants(row)
            yield row

    result.items = _write_rows(out, rows())
    return result


def export_items(task: TranslateTask, store: Store, out: Path) -> ItemsExport:
    translator = task.exp.role("translator")
    by_variant: dict[tuple[str, str], list[Translation]] = {}
    for t in task.translations(store):
        by_variant.setdefault((t.item_id, t.target), []).append(t)
    data_dir, gold = _data_dir(task.exp), Gold(store)
    result = ItemsExport(out, gold=gold.summary)
    validations: dict[str, tuple[list[Correction], bool]] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for item in store.iter_items():
            row = item_record(item)
            _rebase_paths(row, data_dir, out.parent.resolve(), item.id)
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
                machine_variant = assemble_variant(source, plan, done)  # type: ignore[arg-type]
                corrected = _apply_corrections(gold, rows, done)
                row["variants"][target] = assemble_variant(source, plan, done)  # type: ignore[arg-type]
                machine[target] = {"translator": translator.id, "model": translator.model,
                                   "template": _template_of(rows), "request_ids": [t.request_id for t in rows],
                                   "examples": sorted({e for t in rows for e in t.examples}),
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


def _rebase_paths(row: dict[str, Any], data_dir: Path | None, out_dir: Path, item_id: str) -> None:
    """Rewrite relative file paths (an item's `image`) from the data file's folder to the output's; a path
    that would lead out of the output's folder is an error (the loaders refuse it)."""
    for name in PATH_FIELDS:
        ref = row.get(name)
        if not isinstance(ref, str) or data_dir is None or is_url(ref) or Path(ref).is_absolute():
            continue
        target = (data_dir / ref).resolve()
        rel = os.path.relpath(target, out_dir)
        if rel.startswith(".."):
            raise DataError(f"item {item_id!r}: {name} {ref!r} would lie outside the folder of the items file "
                            f"({out_dir}); write the items into {data_dir} or a folder above it")
        row[name] = Path(rel).as_posix()
