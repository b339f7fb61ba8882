"""Dump generations and judgments with every field, streaming (CSV, JSONL or Parquet); each generation and
judgment says whether it is `current` (part of the experiment as it is now) or superseded. `rendered_prompt`
is the full prompt: text stored by reference is filled in, images show as {"type": "image", "sha256", "mime"}
(their bytes are in the store's `content` table)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any, Literal

from dialectbias.errors import StoreError
from dialectbias.store._judgments import JSON_COLUMNS
from dialectbias.store._store import REASK_SUFFIX, Store, dumps, is_current

ExportFormat = Literal["csv", "jsonl", "parquet"]

# `current`: true when the row belongs to the experiment as it is now (`is_current`); superseded rows (an
# edited item's old generation, a removed model's requests, …) are exported for provenance with false
#: a judgment's columns as exported: the table's, in its order, but its integer key (`rid`, schema v15: the
#: store's own, not part of the record)
JUDGMENT_COLUMNS = ("request_id", "judge_id", "model_id", "item_id", "variant", "rubric", "raw_output", "parsed",
                    "score", "confidence", "parse_status", "needs_review", "flagged", "reason", "source_request_id",
                    "checks", "flags", "clipped", "scoring")
BOOLEAN_COLUMNS = ("current",)

#: the export's order of each table it sorts (a row's columns as exported), checked while it is written
GENERATIONS_ORDER = ("model", "item_id", "variant", "request_id")
JUDGMENTS_ORDER = ("judge_id", "model_id", "item_id", "variant", "request_id")

# Each sorted table is read in two steps: its keys sorted (narrow rows; `LIMIT -1` keeps SQLite from merging the
# sorted subquery into the outer one, which reads the rows in that order), then each row fetched by its integer
# key. Compile order is nearly the export's, so the fetches go through the table almost in storage order. Sorting
# the rows themselves sorted wide rows (4.8 GB at 10× the paper) through temporary files; reading them in the
# index's (model, variant, item) order read the judgments' pages nine times over (issue 23, benchmarks/README.md).
GENERATIONS_SQL = f"""
SELECT r.request_id, {is_current("r")} AS current, r.model_id AS model, r.item_id, r.variant,
       r.template AS prompt_template,
       r.prompt_hash, r.messages AS rendered_prompt, r.params, s.status, s.output, s.finish_reason,
       s.tokens_in, s.tokens_out, s.latency_s, s.cache_hit, s.retries, s.error, s.completed_at
FROM (SELECT k.rid FROM requests k WHERE k.stage = ? ORDER BY k.model_id, k.item_id, k.variant, k.request_id
      LIMIT -1) o
CROSS JOIN requests r ON r.rid = o.rid LEFT JOIN results s ON s.rid = r.rid
"""

JUDGMENTS_SQL = f"""
SELECT {", ".join(f"j.{c}" for c in JUDGMENT_COLUMNS)}, {is_current("j")} AS current,
       r.refs AS generation_ids, r.template AS prompt_template,
       r.prompt_hash,
       s.tokens_in, s.tokens_out, s.latency_s, s.cache_hit, s.completed_at
FROM (SELECT k.rowid AS rid FROM judgments k INDEXED BY judgments_key
      ORDER BY k.judge_id, k.model_id, k.item_id, k.variant, k.request_id LIMIT -1) o
CROSS JOIN judgments j ON j.rowid = o.rid JOIN requests r ON r.rid = j.rid LEFT JOIN results s ON s.rid = j.rid
"""
# (the request id orders a key's several judgments, which came in an order of SQLite's choosing before)

# re-asks after a structured output failed validation: the request (its prompt is the first conversation,
# the first answer and the error), its result, and `reask_of` = the first request; a judgment parsed from a
# re-ask has `source_request_id` = the re-ask's `request_id`
REASKS_SQL = f"""
SELECT r.request_id, {is_current("r")} AS current, json_extract(r.meta, '$.reask_of') AS reask_of,
       r.stage, r.model_id AS model, r.item_id,
       r.variant, r.refs, r.template AS prompt_template, r.prompt_hash, r.messages AS rendered_prompt, r.params,
       r.meta, f.output AS first_output, s.status, s.output, s.finish_reason, s.tokens_in, s.tokens_out,
       s.latency_s, s.cache_hit, s.retries, s.error, s.completed_at
FROM requests r LEFT JOIN results s ON s.rid = r.rid
LEFT JOIN requests fq ON fq.request_id = json_extract(r.meta, '$.reask_of') LEFT JOIN results f ON f.rid = fq.rid
WHERE r.stage LIKE '%{REASK_SUFFIX}' ORDER BY r.model_id, r.item_id, r.variant, r.request_id
"""

ANNOTATIONS_SQL = "SELECT * FROM annotations ORDER BY annotation_id"


def _write(rows: Iterator[dict], columns: list[str], path: Path, fmt: ExportFormat) -> int:
    n = 0
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
    elif fmt == "csv":
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow(row)
                n += 1
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        writer = None
        while chunk := list(islice(rows, 5000)):
            table = pa.Table.from_pylist(chunk)
            if writer is None:  # columns that are all-null in the first chunk are text
                schema = pa.schema([pa.field(f.name, pa.string() if pa.types.is_null(f.type) else f.type)
                                    for f in table.schema])
                writer = pq.ParquetWriter(path, schema)
            writer.write_table(table.cast(writer.schema))
            n += len(chunk)
        if writer is None:
            pq.write_table(pa.table({c: pa.array([], pa.string()) for c in columns}), path)
        else:
            writer.close()
    return n


def write_rows(rows: list[dict[str, Any]], path: Path, fmt: ExportFormat) -> int:
    """Write a task's own table (a list of records with the same keys) in the export's format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(rows[0]) if rows else []
    return _write(iter(rows), columns, path, fmt)


def export_store(store: Store, out_dir: Path, fmt: ExportFormat,
                 superseded: dict[str, int] | None = None) -> dict[str, int]:
    """Write generations, judgments, re-asks and annotations tables; return the row count of each (and,
    into `superseded` when given, how many of a table's rows are not current).

    Judgments, for any rubric: judge_id, rubric (its name), item_id, variant, model_id, parsed (the judge's
    answer with its fields after ceilings), score, confidence, checks (the code checks' results), flags
    (reasons), clipped (ceilings), parse_status, needs_review, flagged, reason, source_request_id, current …
    The JSON columns are objects in JSONL and JSON text in CSV and Parquet."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, sql, params in (("generations", GENERATIONS_SQL, ("generate",)),
                              ("judgments", JUDGMENTS_SQL, ()), ("reasks", REASKS_SQL, ()),
                              ("annotations", ANNOTATIONS_SQL, ())):
        cur = store._conn.execute(sql, params)
        columns = [d[0] for d in cur.description]

        decode = [c for c in JSON_COLUMNS if c in columns] if name == "judgments" and fmt == "jsonl" else []
        flags = [c for c in BOOLEAN_COLUMNS if c in columns]

        order = {"generations": GENERATIONS_ORDER, "judgments": JUDGMENTS_ORDER}.get(name)

        def rows(cur=cur, columns=columns, decode=decode, flags=flags, name=name, order=order) -> Iterator[dict]:
            last: tuple[Any, ...] = ()
            while batch := cur.fetchmany(2000):
                for r in batch:
                    row = dict(zip(columns, r, strict=True))
                    if order is not None:  # the outer query has no ORDER BY: its order is the subquery's
                        key = tuple(row[c] for c in order)
                        if key < last:
                            raise StoreError(f"{store.path}: the {name} export came out of order at {key} "
                                             f"(after {last}); nothing is wrong with the store, but this SQLite "
                                             "reads it differently: please report it")
                        last = key
                    for col in flags:
                        row[col] = bool(row[col])
                    if superseded is not None and row.get("current") is False:
                        superseded[name] = superseded.get(name, 0) + 1
                    for col in decode:
                        row[col] = None if row[col] is None else json.loads(row[col])
                    prompt = row.get("rendered_prompt")
                    if isinstance(prompt, str) and '"sha256"' in prompt:  # parts stored by reference
                        row["rendered_prompt"] = dumps(store.resolve_messages(prompt, images="ref"))
                    yield row

        counts[name] = _write(rows(), columns, out_dir / f"{name}.{fmt}", fmt)
    return counts
