"""Items from a parallel corpus: each standard sentence with its dialect versions as one item (SPEC §3 Item).

The usage setting of the probes (`association`, `decision`) and the dialect-vs-translation comparisons read
items `{"id", "variants": {"standard": …, "<dialect>": …}}`; a corpus such as Vashantor (rows aligned across
five dialects) or the German study's `parallel_pairs.csv` holds the same sentences as pairs. Pairs are grouped
by their normalised standard side; the texts written are the originals.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.data import Corpus, ParallelPair
from dialectbias.dialects import STANDARD, language_of


@dataclass
class PairItemsResult:
    """What grouping found: items written and the pairs or items left out, by reason."""

    items: int = 0
    per_dialect: Counter[str] = field(default_factory=Counter)
    identical: int = 0  # pairs whose dialect text equals the standard text (no dialect signal): left out
    conflicts: int = 0  # a second, different dialect text for a standard sentence already given one: left out
    other_split: int = 0  # pairs outside the selected splits
    other_dialect: int = 0  # pairs of dialects not selected
    not_aligned: int = 0  # items lacking a selected dialect (with aligned=True)
    sampled_out: int = 0  # items beyond max_items


def item_id(standard_norm: str) -> str:
    """A stable id from the normalised standard sentence: the same sentence keeps its id across runs."""
    return "p" + hashlib.sha256(standard_norm.encode("utf-8")).hexdigest()[:12]


def pair_items(corpus: Corpus, out: Path, *, splits: list[str] | None = None, dialects: list[str] | None = None,
               aligned: bool = False, max_items: int | None = None, seed: int = 0) -> PairItemsResult:
    """Group `corpus`'s pairs into items and write them to `out` (JSONL), in order of first appearance.

    `splits`/`dialects` keep only those pairs; `aligned` keeps only items that have every selected dialect (every
    dialect of the kept pairs when `dialects` is not given); `max_items` keeps a seeded sample of that many."""
    result = PairItemsResult()
    groups: dict[str, dict[str, Any]] = {}
    for pair in corpus.pairs:
        if splits and pair.split not in splits:
            result.other_split += 1
            continue
        if dialects and pair.dialect not in dialects:
            result.other_dialect += 1
            continue
        if pair.dialect_norm == pair.standard_norm:
            result.identical += 1
            continue
        _add(groups, pair, result)
    wanted = set(dialects or {d for g in groups.values() for d in g["variants"] if d != STANDARD})
    records = list(groups.values())
    if aligned:
        kept = [r for r in records if wanted <= set(r["variants"])]
        result.not_aligned = len(records) - len(kept)
        records = kept
    if max_items is not None and len(records) > max_items:
        chosen = set(random.Random(seed).sample(range(len(records)), max_items))
        result.sampled_out = len(records) - max_items
        records = [r for i, r in enumerate(records) if i in chosen]
    for r in records:
        result.per_dialect.update(d for d in r["variants"] if d != STANDARD)
    result.items = len(records)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return result


def _add(groups: dict[str, dict[str, Any]], pair: ParallelPair, result: PairItemsResult) -> None:
    group = groups.get(pair.standard_norm)
    if group is None:
        group = groups[pair.standard_norm] = {"id": item_id(pair.standard_norm)}
        language = language_of(pair.dialect)
        if language:  # a dialect the corpus file added to the registry: the experiment's `dialects:` names it
            group["language"] = language
        group.update(variants={STANDARD: pair.standard}, sources={})
    if pair.dialect in group["variants"]:
        if group["variants"][pair.dialect] != pair.dialect_text:
            result.conflicts += 1
        return
    group["variants"][pair.dialect] = pair.dialect_text
    group["sources"][pair.dialect] = f"{Path(pair.source).name}:{pair.row}"
