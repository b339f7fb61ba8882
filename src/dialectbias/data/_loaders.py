"""Read items from JSONL, CSV, Parquet or a Hugging Face dataset, with errors naming file and row."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from dialectbias.data._records import Item
from dialectbias.data._registry import unknown_variant_message
from dialectbias.errors import DataError

_KNOWN = {"id", "domain", "question_type", "variants", "gold", "validated_by"}
_VARIANT_PREFIX = "variants."


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line; errors name the file and line."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8").strip()
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
    reader = csv.DictReader(text.splitlines())
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
    if "id" not in row or str(row["id"]).strip() == "":
        raise DataError(f"{where}: missing 'id'")
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


def iter_items(source: str | Path, *, base_dir: Path | None = None, required_variants: tuple[str, ...] = (),
               known: frozenset[str] | None = None) -> Iterator[Item]:
    """Yield validated items; raise DataError naming the file and line/row of the first bad row.
    With `known`, every variant name must be in it (the dialect registry)."""
    text = str(source)
    if text.startswith("hf://"):
        rows, label = _rows_hf(text), text
    else:
        path = Path(source)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise DataError(f"{path}: data file not found")
        suffix = path.suffix.lower()
        readers = {".jsonl": read_jsonl, ".ndjson": read_jsonl, ".csv": _rows_csv, ".parquet": _rows_parquet}
        if suffix not in readers:
            raise DataError(f"{path}: unsupported data format {suffix!r}; use .jsonl, .csv, .parquet or hf://")
        rows, label = readers[suffix](path), str(path)
    seen: dict[str, int] = {}
    for lineno, row in rows:
        where = f"{label}:{lineno}"
        item = _to_item(row, where)
        if item.id in seen:
            raise DataError(f"{where}: duplicate id {item.id!r} (first seen at line {seen[item.id]})")
        seen[item.id] = lineno
        for name in item.variants if known is not None else ():
            if name.lower() not in known:
                raise DataError(f"{where}: item {item.id!r}: {unknown_variant_message(name, known)}")
        for name in required_variants:
            text_value = item.variants.get(name)
            if not isinstance(text_value, str) or not text_value.strip():
                raise DataError(f"{where}: item {item.id!r} has no {name!r} variant")
        yield item
