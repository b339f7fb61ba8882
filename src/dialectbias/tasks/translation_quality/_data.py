"""The rows a translation_quality experiment scores: (source, optional English gloss, human reference, dialect)
and each system's machine translation (SPEC §4 P2; Bengali dialect-bias paper §3.1.3).

`data:` is one of
- the contract's table (CSV or JSONL): `id, source, reference, dialect`, optional `gloss` (or `english`) and
  `domain`, and one column per system named in `systems:` (translations made elsewhere: no model call);
- an items file (what `dialectbias build pairs` and `export --items` write): one row per item × dialect
  variant, the `standard` variant as source and the dialect variant as reference;
- a corpus YAML (`dialectbias index` corpora): one row per parallel pair, e.g. Vashantor's validation split
  with `options.split: validation`.
Systems can also come from `translate` experiments (`options.translations_from`): their post-processed
translations, matched to the rows by item and dialect (their own items) or by normalised source text and
dialect. Rows set aside (empty source or reference, unknown dialect, duplicates) are counted by reason.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.data import Item, read_csv_rows, read_jsonl
from dialectbias.dialects import STANDARD, known_variants, unknown_variant_message
from dialectbias.errors import ConfigError, DataError
from dialectbias.text import match_key

#: columns of the contract's table (besides the systems)
BASE_COLUMNS = ("id", "source", "reference", "dialect")
GLOSS_COLUMNS = ("gloss", "english")


@dataclass(frozen=True)
class TQRow:
    """One reference translation and the systems' translations of its source."""

    key: str
    id: str
    dialect: str
    source: str
    reference: str
    where: str
    gloss: str | None = None
    domain: str | None = None
    systems: dict[str, str] = field(default_factory=dict)
    #: system -> why it has no translation here (a translate run's failure reason)
    failed: dict[str, str] = field(default_factory=dict)

    def to_item(self) -> Item:
        return Item(id=self.key, domain=self.domain, variants={STANDARD: self.source, self.dialect: self.reference},
                    metadata={"tq": {"id": self.id, "dialect": self.dialect, "where": self.where,
                                     "gloss": self.gloss, "systems": self.systems, "failed": self.failed}})

    @classmethod
    def from_item(cls, item: Item) -> TQRow:
        tq = item.metadata["tq"]
        return cls(key=item.id, id=tq["id"], dialect=tq["dialect"], source=item.variants[STANDARD],
                   reference=item.variants[tq["dialect"]], where=tq["where"], gloss=tq.get("gloss"),
                   domain=item.domain, systems=dict(tq.get("systems") or {}), failed=dict(tq.get("failed") or {}))


@dataclass
class TQLoad:
    """What loading found: the rows, rows set aside by reason (with a first example), and per system the
    rows it has no translation for."""

    rows: list[TQRow] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    unmatched: Counter[str] = field(default_factory=Counter)

    def reject(self, reason: str, where: str) -> None:
        self.rejected[reason] += 1
        self.examples.setdefault(reason, where)

    def warnings(self) -> list[str]:
        out = [f"{n} row(s) set aside: {reason} (e.g. {self.examples[reason]})" for reason, n in self.rejected.items()]
        out += [f"{n} translation(s) of {system} match no row (by item and dialect, or source text and dialect)"
                for system, n in self.unmatched.items()]
        return out


@dataclass
class _Raw:
    id: str
    dialect: str
    source: str
    reference: str
    where: str
    gloss: str | None
    domain: str | None
    systems: dict[str, str]


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _table_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        for lineno, row in read_jsonl(path):
            yield f"{path}:{lineno}", row
        return
    if path.suffix.lower() != ".csv":
        raise DataError(f"{path}: translation_quality reads .csv, .jsonl or a corpus .yaml, not {path.suffix!r}")
    for lineno, row in read_csv_rows(path, strict=True):
        yield f"{path}:{lineno}", dict(row)


def _from_table(path: Path, systems: list[str]) -> Iterator[_Raw]:
    first = True
    for where, row in _table_rows(path):
        if "variants" in row:  # an items file
            yield from _from_item_row(where, row)
            continue
        if first:
            missing = [c for c in (*BASE_COLUMNS, *systems) if c not in row]
            if missing:
                raise DataError(f"{where}: missing column(s) {', '.join(missing)}; a translation_quality table has "
                                f"columns {', '.join(BASE_COLUMNS)}, optional gloss and domain, and one column per "
                                f"system in `systems:` ({', '.join(systems) or 'none given'}); found: "
                                f"{', '.join(row) or '(none)'}")
            first = False
        gloss = next((_text(row.get(c)) for c in GLOSS_COLUMNS if _text(row.get(c))), None)
        yield _Raw(_text(row.get("id")), _text(row.get("dialect")).lower(), _text(row.get("source")),
                   _text(row.get("reference")), where, gloss, _text(row.get("domain")) or None,
                   {s: _text(row.get(s)) for s in systems if _text(row.get(s))})


def _from_item_row(where: str, row: dict[str, Any]) -> Iterator[_Raw]:
    variants = row["variants"]
    if isinstance(variants, str):
        try:
            variants = json.loads(variants)
        except json.JSONDecodeError:
            raise DataError(f"{where}: 'variants' is not a JSON object") from None
    if not isinstance(variants, dict):
        raise DataError(f"{where}: 'variants' must be an object of variant -> text")
    source = variants.get(STANDARD)
    for dialect, reference in variants.items():
        if dialect == STANDARD:
            continue
        if not isinstance(source, str) or not isinstance(reference, str):
            yield _Raw(_text(row.get("id")), dialect.lower(), "", "", where, None, None, {})  # rejected: not text
            continue
        yield _Raw(_text(row.get("id")), dialect.lower(), source.strip(), reference.strip(), where,
                   _text(row.get("gloss")) or None, _text(row.get("domain")) or None, {})


def _from_corpus(path: Path, split: str | None) -> Iterator[_Raw]:
    from dialectbias.data import load_corpus

    corpus = load_corpus(path)
    if split is not None and split not in corpus.splits():
        raise ConfigError(f"options.split: corpus {path} has no split {split!r}; its splits: "
                          f"{', '.join(corpus.splits()) or 'none'}")
    for pair in corpus.pairs:
        if split is None or pair.split == split:
            yield _Raw(pair.id, pair.dialect, pair.standard.strip(), pair.dialect_text.strip(),
                       f"{pair.source}:{pair.row}", None, None, {})


def load_rows(path: Path, *, systems: list[str], split: str | None, dialects: list[str] | None,
              extra_dialects: dict[str, list[str]]) -> TQLoad:
    """Rows of `data:` (a table, an items file or a corpus YAML), checked and keyed; see the module docstring."""
    if not path.exists():
        raise DataError(f"{path}: data file not found")
    is_corpus = path.suffix.lower() in (".yaml", ".yml")
    if split is not None and not is_corpus:
        raise ConfigError(f"options.split ({split!r}) selects a split of a corpus YAML; {path} is a table")
    raws = list(_from_corpus(path, split) if is_corpus else _from_table(path, systems))
    return _keyed(raws, dialects, known_variants(extra_dialects))


def _keyed(raws: list[_Raw], dialects: list[str] | None, known: frozenset[str]) -> TQLoad:
    load = TQLoad()
    wanted = {d.lower() for d in dialects} if dialects else None
    kept: list[_Raw] = []
    seen: set[tuple[str, str]] = set()
    for r in raws:
        if not r.id:
            load.reject("no id", r.where)
        elif not r.dialect or r.dialect == STANDARD:
            load.reject("no dialect", r.where)
        elif r.dialect not in known:
            raise DataError(f"{r.where}: dialect: {unknown_variant_message(r.dialect, known)}")
        elif wanted is not None and r.dialect not in wanted:
            load.reject("dialect not among `variants:`", r.where)
        elif not r.source:
            load.reject("empty source", r.where)
        elif not r.reference:
            load.reject("empty reference", r.where)
        elif (r.id, r.dialect) in seen:
            load.reject("duplicate id and dialect", r.where)
        else:
            seen.add((r.id, r.dialect))
            kept.append(r)
    ids = Counter(r.id for r in kept)
    for r in kept:
        key = r.id if ids[r.id] == 1 else f"{r.id}:{r.dialect}"
        load.rows.append(TQRow(key, r.id, r.dialect, r.source, r.reference, r.where, r.gloss, r.domain,
                               dict(r.systems)))
    return load


def rows_from_items(items: Iterator[Item], targets: list[str], source: str, where: str) -> TQLoad:
    """Rows from a translate experiment's own items: each item with a target variant (its human reference)."""
    raws = []
    for item in items:
        text = item.variants.get(source)
        for target in targets:
            reference = item.variants.get(target)
            if reference is None:
                continue
            both = (text.strip(), reference.strip()) if isinstance(text, str) and isinstance(reference, str) \
                else ("", "")
            raws.append(_Raw(item.id, target, *both, f"{where} item {item.id}", None, item.domain, {}))
    return _keyed(raws, None, frozenset({*targets}))


def attach_system(load: TQLoad, system: str, translations: list[tuple[str, str, str, str | None, str]]) -> None:
    """Add a system's translations to the rows: (item id, dialect, source text, translation or None, failure
    reason), matched by item id and dialect first, then by normalised source text and dialect."""
    by_id = {(r.id, r.dialect): r for r in load.rows}
    by_source: dict[tuple[str, str], list[TQRow]] = {}
    for r in load.rows:
        by_source.setdefault((match_key(r.source), r.dialect), []).append(r)
    for item_id, dialect, source, text, reason in translations:
        key = match_key(source)
        row = by_id.get((item_id, dialect))
        rows = [row] if row is not None and match_key(row.source) == key else by_source.get((key, dialect), [])
        if not rows:
            load.unmatched[system] += 1
            continue
        for r in rows:
            if text:
                r.systems[system] = text
            else:
                r.failed[system] = reason or "failed"
