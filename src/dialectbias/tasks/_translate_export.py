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
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialectbias.data import Item, is_url
from dialectbias.errors import DataError
from dialectbias.store import Store
from dialectbias.tasks._translate_fields import assemble_variant, plan_variant
from dialectbias.tasks._translate_results import Translation, dialect_id_provenance

if TYPE_CHECKING:
    from dialectbias.tasks.translate import TranslateTask

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

    def lines(self) -> list[str]:
        return [f"{self.items:>8} items → {self.path}",
                f"{self.variants_added:>8} machine variants added (is_human_validated: false)",
                f"{self.variants_incomplete:>8} variants not exported: a field failed or is not translated yet",
                f"{self.kept_existing:>8} variants the items already had (kept, not replaced)",
                f"{self.leaked_items:>8} items flagged leaked: true (source text among the index's pairs)"]


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


def export_items(task: TranslateTask, store: Store, out: Path) -> ItemsExport:
    translator = task.exp.role("translator")
    by_variant: dict[tuple[str, str], list[Translation]] = {}
    for t in task.translations(store):
        by_variant.setdefault((t.item_id, t.target), []).append(t)
    data = task.exp.data
    data_dir = None if not data or data.startswith("hf://") else task.exp.resolve(data).parent
    result = ItemsExport(out)
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
                row["variants"][target] = assemble_variant(source, plan, done)  # type: ignore[arg-type]
                machine[target] = {"translator": translator.id, "model": translator.model,
                                   "template": _template_of(rows), "request_ids": [t.request_id for t in rows],
                                   "examples": sorted({e for t in rows for e in t.examples}),
                                   **dialect_id_provenance(rows)}
                result.variants_added += 1
            if machine:
                row["is_human_validated"] = {**_dict(row.get("is_human_validated")),
                                             **dict.fromkeys(machine, False)}
                row["translation"] = {**_dict(row.get("translation")), **machine}
            row["leaked"] = leaked
            result.leaked_items += bool(leaked)
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            result.items += 1
    tmp.replace(out)
    return result


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
