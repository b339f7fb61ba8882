"""Read items from JSONL, CSV, Parquet or a Hugging Face dataset, with errors naming file and row."""

from __future__ import annotations

import csv
import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from dialectbias.data._media import check_item_image, resolve_item_image
from dialectbias.data._records import InputLimits, Item
from dialectbias.dialects import STANDARD, unknown_variant_message
from dialectbias.errors import DataError

_KNOWN = {"id", "domain", "question_type", "variants", "gold", "validated_by"}
_VARIANT_PREFIX = "variants."
#: items named in one warning; the rest are counted
MAX_NAMED = 5
_EXPECTED = {
    ".jsonl": 'one JSON object per line, e.g. {"id": "q001", "variants": {"standard": "…", "chittagong": "…"}}',
    ".csv": "a header row id,variants.standard,variants.<dialect>,… (optional domain, question_type, gold, "
            "validated_by) and one row per item",
    ".parquet": "columns id and variants (or variants.standard, variants.<dialect>, …)",
}
_EXPECTED[".ndjson"] = _EXPECTED[".jsonl"]


def read_jsonl(path: Path, *, containing: Collection[bytes] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line; errors name the file and line. With `containing`, only
    lines holding one of those byte strings are parsed (a fast scan for a rarely used key)."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if containing and not any(token in raw for token in containing):
                continue
            try:  # a byte-order mark (Excel, Notepad) starts the first line: read as CSV files are
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").strip()
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            yield lineno, row


def _rows_csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        return
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames is not None:
        header = reader.fieldnames = [name.strip() for name in reader.fieldnames]
        missing = [name for name in ("id",) if name not in header]
        if "variants" not in header and not any(name.startswith(_VARIANT_PREFIX) for name in header):
            missing.append("variants.standard")
        if missing:
            hint = (" (is the file separated by ';' or tabs? use commas)"
                    if any(";" in name or "\t" in name for name in header) else "")
            raise DataError(f"{path}:1: missing column(s) {', '.join(missing)}; expected columns: id, "
                            "variants.standard, variants.<dialect>, … (or one 'variants' column holding a JSON "
                            "object), optional domain, question_type, gold, validated_by; found: "
                            f"{', '.join(header) or '(none)'}{hint}")
    for row in reader:
        if None in row:
            raise DataError(f"{path}:{reader.line_num}: more fields than the header has")
        yield reader.line_num, {k: v for k, v in row.items() if v not in ("", None)}


def _rows_records(records: Iterator[dict[str, Any]], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, row in enumerate(records, start=1):
        yield i, {k: v for k, v in row.items() if v is not None}


def _rows_parquet(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(path)
    except Exception as exc:
        raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
    offset = 0
    for batch in table.iter_batches(batch_size=4096):
        for i, row in enumerate(batch.to_pylist(), start=offset + 1):
            yield i, {k: v for k, v in row.items() if v is not None}
        offset += batch.num_rows


def _rows_hf(uri: str) -> Iterator[tuple[int, dict[str, Any]]]:
    parsed = urlparse(uri)
    # hf://org/name is a Hub dataset (or its local cache); hf:///abs/dir a dataset folder on disk
    name = parsed.path if not parsed.netloc and Path(parsed.path).is_dir() else (parsed.netloc + parsed.path).strip("/")
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    try:
        import datasets
    except ImportError:
        raise DataError(f"{uri}: reading Hugging Face datasets needs: pip install 'dialectbias[hf]'") from None
    try:
        ds = datasets.load_dataset(name, query.get("config"), split=query.get("split", "train"))
    except Exception as exc:
        raise DataError(f"{uri}: cannot load the dataset ({type(exc).__name__}: {exc})") from None
    yield from _rows_records(iter(ds), uri)


def _to_item(row: dict[str, Any], where: str) -> Item:
    if "id" in row and str(row["id"]).strip() == "":
        raise DataError(f"{where}: 'id' is empty")
    if "id" not in row:
        found = ", ".join(map(str, row)) or "(none)"
        raise DataError(f"{where}: missing 'id' (an item needs 'id' and 'variants'; optional: domain, "
                        f"question_type, gold, validated_by; found: {found})")
    variants = row.get("variants")
    if isinstance(variants, str):
        try:
            variants = json.loads(variants)
        except json.JSONDecodeError:
            raise DataError(f"{where}: 'variants' is not a JSON object") from None
    variants = dict(variants or {})
    for key in list(row):
        if key.startswith(_VARIANT_PREFIX):
            variants[key[len(_VARIANT_PREFIX):]] = row[key]
    if not isinstance(variants, dict) or not variants:
        raise DataError(f"{where}: item {row['id']!r} has no 'variants' (an object of variant name -> text)")
    for name, value in variants.items():
        if value is not None and not isinstance(value, str | dict):
            raise DataError(f"{where}: item {row['id']!r}: variant {name!r} is {_kind(value)} "
                            f"({json.dumps(value, ensure_ascii=False, default=str)[:60]}), not a text; write it "
                            "as a string (vqa and caption items: an object)")
    validated = row.get("validated_by") or {}
    if isinstance(validated, str):
        try:
            validated = json.loads(validated)
        except json.JSONDecodeError:
            raise DataError(f"{where}: 'validated_by' is not a JSON object of variant -> annotator") from None
    if not isinstance(validated, dict):
        raise DataError(f"{where}: 'validated_by' must be an object of variant -> annotator")
    meta = {k: v for k, v in row.items() if k not in _KNOWN and not k.startswith(_VARIANT_PREFIX)}
    return Item(id=str(row["id"]), domain=row.get("domain"), question_type=row.get("question_type"),
                variants=variants, gold=row.get("gold"), validated_by=validated, metadata=meta)


def _kind(value: Any) -> str:
    """'a number', 'a list', … for a JSON value, in an error message."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


_READERS = {".jsonl": read_jsonl, ".ndjson": read_jsonl, ".csv": _rows_csv, ".parquet": _rows_parquet}


def field_values(path: Path, fields: Collection[str]) -> Iterator[tuple[str, Any]]:
    """(item id, value) of the given fields in every row of a local data file, unchecked (for fingerprints:
    which images the items name, without loading the items)."""
    if path.suffix.lower() in (".jsonl", ".ndjson"):  # only lines that name one of the fields
        rows = read_jsonl(path, containing=[json.dumps(name).encode() for name in fields])
    else:
        rows = _READERS[path.suffix.lower()](path)
    for _, row in rows:
        for name in fields:
            if row.get(name) is not None:
                yield str(row.get("id")), row[name]


@dataclass
class LoadReport:
    """What loading the items found short of an error, counted and named for the run summary: refused and
    oversized fields (`InputLimits`), items without a dialect variant, variants some items lack."""

    source: str
    limits: InputLimits = field(default_factory=InputLimits)
    unit: str = "line"
    items: int = 0
    refused: list[str] = field(default_factory=list)
    large: list[str] = field(default_factory=list)
    #: items skipped because an image they name is missing or unreadable (each with the reason)
    bad_images: list[str] = field(default_factory=list)
    _variants: list[tuple[str, frozenset[str]]] = field(default_factory=list)

    def note(self, where: str, item: Item) -> None:
        """Count an accepted item and remember its variant names."""
        self.items += 1
        self._variants.append((where, frozenset(name for name, text in item.variants.items()
                                                if isinstance(text, str) and text.strip())))

    def check_size(self, where: str, item: Item) -> bool:
        """False (and the item recorded as refused) when a field exceeds `max_field_chars`; fields above
        `warn_field_chars` are recorded as a warning."""
        sizes = sorted(_field_sizes(item), key=lambda fs: -fs[1])
        too_big = [(f, n) for f, n in sizes if n > self.limits.max_field_chars]
        large = [(f, n) for f, n in sizes if n > self.limits.warn_field_chars]
        if too_big:
            self.refused.append(f"{where} {', '.join(f'{f} ({n:,} characters)' for f, n in too_big)}")
            return False
        if large:
            self.large.append(f"{where} {', '.join(f'{f} ({n:,} characters)' for f, n in large)}")
        return True

    @property
    def without_dialect(self) -> list[str]:
        """Items whose only non-empty variant is `standard`."""
        return [where for where, names in self._variants if not names - {STANDARD}]

    def missing_variants(self) -> dict[str, list[str]]:
        """variant -> items lacking it (empty or absent) while other items have it; items without any
        dialect variant are reported apart (`without_dialect`)."""
        seen = sorted({name for _, names in self._variants for name in names})
        return {name: missing for name in seen
                if (missing := [where for where, names in self._variants if name not in names and names - {STANDARD}])}

    def warnings(self, *, compares_dialects: bool = False) -> list[str]:
        """One line per kind of problem, with its count and the first items named."""
        lines = []
        if self.refused:
            lines.append(f"{_count(self.refused, 'item')} in {self.source} refused (not stored, not sent): a field "
                         f"is longer than limits.max_field_chars = {self.limits.max_field_chars:,} characters: "
                         f"{_named(self.refused)}")
        if self.bad_images:
            lines.append(f"{_count(self.bad_images, 'item')} in {self.source} skipped (not stored, not sent): "
                         f"image missing or unreadable: {_named(self.bad_images)}")
        if self.large:
            lines.append(f"{_count(self.large, 'item')} in {self.source} with a field longer than "
                         f"limits.warn_field_chars = {self.limits.warn_field_chars:,} characters (sent as is): "
                         f"{_named(self.large)}")
        lonely = self.without_dialect
        if compares_dialects and lonely:
            lines.append(f"{len(lonely)} of {_count(self.items, 'item')} in {self.source} have no dialect "
                         f"variant, only 'standard', so nothing compares with them: {_named(lonely)}. "
                         f"{DIALECT_HINT}")
        for name, missing in self.missing_variants().items():
            lines.append(f"variant {name!r} missing (absent or empty) in {len(missing)} of "
                         f"{_count(self.items, 'item')} in {self.source}: {_named(missing)}")
        return lines


DIALECT_HINT = ("Add the dialect versions by hand, e.g. \"variants\": {\"standard\": \"…\", \"chittagong\": \"…\"} "
                "(CSV: a variants.chittagong column), or translate standard-only items (what `dialectbias build "
                "questions` writes) with a `task: translate` experiment and `dialectbias export EXP --items OUT`.")


def _count(n: int | Collection[Any], noun: str) -> str:
    k = n if isinstance(n, int) else len(n)
    return f"{k:,} {noun}{'' if k == 1 else 's'}"


def _named(entries: list[str]) -> str:
    more = len(entries) - MAX_NAMED
    return "; ".join(entries[:MAX_NAMED]) + (f"; … and {more} more" if more > 0 else "")


def _field_sizes(item: Item) -> Iterator[tuple[str, int]]:
    """(field, characters) of every text an item carries: each variant, gold, domain, question type and
    metadata value (non-strings measured as JSON)."""
    def size(value: Any) -> int:
        return len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False, default=str))

    for name, text in item.variants.items():
        yield f"variants.{name}", size(text)
    for name in ("domain", "question_type", "gold"):
        value = getattr(item, name)
        if value is not None:
            yield name, size(value)
    for name, value in item.metadata.items():
        yield name, size(value)


def _images_ok(item: Item, image_fields: Collection[str], data_dir: Path | None, where: str, named: str,
               report: LoadReport) -> bool:
    """Check the images an item names (`image_fields` of its metadata): a path leading out of the data folder
    is a DataError; a missing or unreadable file skips the item (counted and named in `report`)."""
    for name in image_fields:
        ref = item.metadata.get(name)
        if ref is None:
            continue
        problem = check_item_image(resolve_item_image(ref, data_dir, where, item.id), f"image {ref!r}")
        if problem:
            report.bad_images.append(f"{named}: {problem}")
            return False
    return True


def iter_items(source: str | Path, *, base_dir: Path | None = None, required_variants: tuple[str, ...] = (),
               known: frozenset[str] | None = None, variants: Collection[str] | None = None,
               limits: InputLimits | None = None, report: LoadReport | None = None,
               image_fields: Collection[str] = ()) -> Iterator[Item]:
    """Yield validated items; raise DataError naming the file and line/row of the first bad row, or the
    file when it holds no item. With `known`, every variant name must be in it (the dialect registry);
    with `variants`, items keep only those variants. Items with a field above `limits.max_field_chars` are
    refused (skipped); `report` (when given) counts and names them and what else loading found.
    `image_fields` name item fields holding an image (`data/_media.py`: a path under the data file's folder
    or an http(s) URL): an item whose image file is missing or unreadable is skipped and reported."""
    text = str(source)
    path: Path | None = None
    if text.startswith("hf://"):
        rows, label, unit = _rows_hf(text), text, "row"
    else:
        path = Path(source)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if path.is_dir():
            raise DataError(f"{path}: a folder, not a data file (.jsonl, .csv, .parquet): only vqa, caption and "
                            "csu read a folder (the BanglaVerse layout); `dialectbias export EXP --items OUT.jsonl` "
                            "on such an experiment writes its items as a JSONL file")
        if not path.is_file():
            raise DataError(f"{path}: data file not found")
        suffix = path.suffix.lower()
        if suffix not in _READERS:
            raise DataError(f"{path}: unsupported data format {suffix!r}; use .jsonl, .csv, .parquet or hf://")
        rows, label, unit = _READERS[suffix](path), str(path), "row" if suffix == ".parquet" else "line"
    limits = limits or (report.limits if report else InputLimits())
    if report is None:
        report = LoadReport(label, limits)
    report.source, report.limits, report.unit = label, limits, unit
    wanted = set(variants) if variants is not None else None
    seen: dict[str, int] = {}
    n_rows = 0
    for lineno, row in rows:
        n_rows += 1
        where = f"{label}:{lineno}"
        item = _to_item(row, where)
        if item.id in seen:
            raise DataError(f"{where}: duplicate id {item.id!r} (first seen at line {seen[item.id]})")
        seen[item.id] = lineno
        if known is not None:
            for name in item.variants:
                if name.lower() not in known:
                    raise DataError(f"{where}: item {item.id!r}: {unknown_variant_message(name, known)}")
        for name in required_variants:
            text_value = item.variants.get(name)
            if not isinstance(text_value, str) or not text_value.strip():
                raise DataError(f"{where}: item {item.id!r} has no {name!r} variant")
        if wanted is not None:
            item = item.model_copy(update={"variants": {k: v for k, v in item.variants.items() if k in wanted}})
        named = f"{item.id!r} ({unit} {lineno})"
        if not report.check_size(named, item):
            continue
        if image_fields and not _images_ok(item, image_fields, path.parent if path else None, where, named,
                                           report):
            continue
        report.note(named, item)
        yield item
    if n_rows == 0:
        blank = path is not None and path.suffix.lower() != ".parquet" and not path.read_bytes().strip()
        expected = _EXPECTED.get(path.suffix.lower(), "") if path is not None else ""
        raise DataError(f"{label}: {'the data file is empty' if blank else 'no items (no data rows)'}"
                        f"{f'; expected {expected}' if expected else ''}")
    if report.items == 0:
        reasons = ([f"a field longer than limits.max_field_chars = {limits.max_field_chars:,} characters: "
                    f"{_named(report.refused)}"] if report.refused else []) + (
                   [f"an image missing or unreadable: {_named(report.bad_images)}"] if report.bad_images else [])
        raise DataError(f"{label}: no usable items: every item was refused for {'; or for '.join(reasons)}")
