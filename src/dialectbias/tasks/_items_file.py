"""The experiment's items as a data file (`dialectbias export EXP --items OUT.jsonl`): each item as it was read
(the inverse of the loaders), relative image paths rewritten for the output's folder, and the review's corrections
of its machine variants applied (Gold labelling, `dialectbias.review.Gold`). What `Task.export_items` writes for
any task; the translate task adds its new variants (`tasks/translate/_export.py`)."""

from __future__ import annotations

import json
import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialectbias.data import Item, is_url, items_dir
from dialectbias.errors import DataError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dialectbias.config import Experiment
    from dialectbias.review import GoldSummary
    from dialectbias.store import Store

#: item fields holding a path relative to the data file's folder (rewritten for the output's folder)
PATH_FIELDS = ("image",)
#: set by `export --hf-dataset` (`publish`), which copies each image into its own folder: a path that would lead
#: out of the output's folder is written absolute instead of refused
ABSOLUTE_OUTSIDE: ContextVar[bool] = ContextVar("absolute_outside", default=False)


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


def data_folder(exp: Experiment) -> Path | None:
    """The folder the items' relative paths are relative to (a data folder's layout root, a file's folder)."""
    data = exp.data
    return None if not data or data.startswith("hf://") else items_dir(exp.resolve(data))


def write_rows(out: Path, rows: Iterable[dict[str, Any]]) -> int:
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
    from dialectbias.review import Gold

    data_dir, gold = data_folder(exp), Gold(store) if store is not None else None
    result = ItemsExport(out, gold=gold.summary if gold is not None else None, translate=False)

    def rows() -> Iterable[dict[str, Any]]:
        for item in store.iter_items() if store is not None else items:
            row = item_record(item)
            rebase_paths(row, data_dir, out.parent.resolve(), item.id)
            if gold is not None:
                gold.apply_item_variants(row)
            yield row

    result.items = write_rows(out, rows())
    return result


def rebase_paths(row: dict[str, Any], data_dir: Path | None, out_dir: Path, item_id: str) -> None:
    """Rewrite relative file paths (an item's `image`) from the data file's folder to the output's; a path
    that would lead out of the output's folder is an error (the loaders refuse it)."""
    for name in PATH_FIELDS:
        ref = row.get(name)
        if not isinstance(ref, str) or data_dir is None or is_url(ref) or Path(ref).is_absolute():
            continue
        target = (data_dir / ref).resolve()
        rel = os.path.relpath(target, out_dir)
        if rel.startswith("..") and ABSOLUTE_OUTSIDE.get():
            row[name] = target.as_posix()
        elif rel.startswith(".."):
            raise DataError(f"item {item_id!r}: {name} {ref!r} would lie outside the folder of the items file "
                            f"({out_dir}); write the items into {data_dir} or a folder above it")
        else:
            row[name] = Path(rel).as_posix()
