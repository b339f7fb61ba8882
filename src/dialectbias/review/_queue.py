"""The RLAIF review queue as a CSV round trip (SPEC §4 P3 Human fallback; Bengali paper §3.4).

Export: one row per judgment that needs a human (low confidence or flagged, no override yet), with both
questions, both responses, the judge's reasoning and scores, and empty `human_*` columns. Import: each
filled row becomes an `rlaif_override` annotation whose score replaces the judge's in the final table
(`dialectbias.tasks._qa_report.FINAL_SCORES_SQL`: the latest override per judgment wins).
"""

from __future__ import annotations

import csv
import io
import json
import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.errors import DataError
from dialectbias.judges import RLAIF_CATEGORIES, rlaif_score
from dialectbias.store import OVERRIDE_KIND, Store, dumps

LIKERT_FIELDS: tuple[str, ...] = tuple(name for name, _ in RLAIF_CATEGORIES)
JUDGE_COLUMNS: tuple[str, ...] = tuple(f"judge_{name}" for name in LIKERT_FIELDS)
HUMAN_COLUMNS: tuple[str, ...] = tuple(f"human_{name}" for name in LIKERT_FIELDS)
SCRIPT_COLUMN = "human_script_valid"
QUEUE_COLUMNS: tuple[str, ...] = (
    "judgment_id", "judge", "model", "item_id", "dialect", "standard_question", "dialect_question",
    "standard_response", "dialect_response", "judge_reasoning", *JUDGE_COLUMNS, "judge_score", "confidence",
    "flagged", "reason", *HUMAN_COLUMNS, SCRIPT_COLUMN, "comment")
CONFIDENCE_LEVELS = (1, 2, 3, 4, 5)
MAX_REPORTED_PROBLEMS = 20

_TRUE = {"1", "yes", "y", "true", "t", "valid", "হ্যাঁ", "হ্যা"}
_FALSE = {"0", "no", "n", "false", "f", "invalid", "না"}

# The latest judgment per (judge, model, item, variant), as in the final table, with its two answers.
_JUDGMENTS_SQL = """
SELECT j.request_id, j.judge_id, j.model_id, j.item_id, j.variant, j.parsed, j.score, j.confidence,
       j.flagged, j.reason, std.output AS standard_response, dia.output AS dialect_response
FROM judgments j
JOIN requests q ON q.request_id = j.request_id
LEFT JOIN results std ON std.request_id = json_extract(q.refs, '$[0]')
LEFT JOIN results dia ON dia.request_id = json_extract(q.refs, '$[1]')
WHERE j.rowid IN (SELECT MAX(j2.rowid) FROM judgments j2 JOIN current_requests c ON c.request_id = j2.request_id
                  GROUP BY j2.judge_id, j2.model_id, j2.item_id, j2.variant)
  AND j.judge_id = ? AND j.model_id IN ({models})
"""


@dataclass
class ImportSummary:
    """What `ReviewQueue.import_csv` did with the rows of one file."""

    imported: int = 0
    unchanged: int = 0
    skipped_empty: int = 0
    rows: int = 0


@dataclass
class CalibrationSample:
    rows: list[dict[str, Any]]
    per_level: dict[int, int] = field(default_factory=dict)
    available: dict[int, int] = field(default_factory=dict)


@dataclass
class _Override:
    line: int
    judgment_id: str
    value: dict[str, Any]
    comment: str


class ReviewQueue:
    """The judgments of one judge (the primary one, normally) over some models, for human review."""

    def __init__(self, store: Store, judge_id: str, model_ids: Iterable[str], *,
                 confidence_threshold: int = 3) -> None:
        self.store = store
        self.judge_id = judge_id
        self.model_ids = list(model_ids)
        self.confidence_threshold = confidence_threshold

    # -- export -------------------------------------------------------------------------------
    def _select(self, where: str = "", params: tuple[Any, ...] = ()) -> Iterator[dict[str, Any]]:
        if not self.model_ids:
            return
        sql = _JUDGMENTS_SQL.format(models=",".join("?" * len(self.model_ids))) + where
        sql += " ORDER BY j.model_id, j.variant, j.item_id, j.request_id"
        items = {item.id: item.variants for item in self.store.iter_items()}
        for row in self.store.iter_query(sql, (self.judge_id, *self.model_ids, *params)):
            yield _queue_row(row, items.get(row["item_id"], {}))

    def pending(self) -> Iterator[dict[str, Any]]:
        """Judgments marked needs_review (confidence ≤ threshold, flagged, or unparsed) that no human has
        overridden yet, in (model, dialect, item) order."""
        yield from self._select(
            " AND j.needs_review = 1 AND NOT EXISTS (SELECT 1 FROM annotations a "
            "WHERE a.target_id = j.request_id AND a.kind = ?)", (OVERRIDE_KIND,))

    def calibration_sample(self, per_level: int, seed: int = 0) -> CalibrationSample:
        """A stratified random sample: `per_level` judgments per judge confidence level 1–5 (all of a level
        when it has fewer), to check the review threshold against human scores. Seeded and stable."""
        marks = ",".join("?" * len(self.model_ids))
        ids: dict[int, list[str]] = {level: [] for level in CONFIDENCE_LEVELS}
        if self.model_ids:
            for row in self.store.iter_query(
                    f"SELECT confidence, request_id FROM judgments WHERE judge_id = ? "
                    f"AND model_id IN ({marks}) AND confidence IS NOT NULL AND rowid IN "
                    "(SELECT MAX(j.rowid) FROM judgments j JOIN current_requests c ON c.request_id = j.request_id "
                    "GROUP BY j.judge_id, j.model_id, j.item_id, j.variant) "
                    "ORDER BY request_id",
                    (self.judge_id, *self.model_ids)):
                if row[0] in ids:
                    ids[row[0]].append(row[1])
        rng = random.Random(seed)
        chosen: dict[str, int] = {}
        sample = CalibrationSample(rows=[])
        for level in CONFIDENCE_LEVELS:
            picked = rng.sample(ids[level], min(per_level, len(ids[level])))
            sample.available[level] = len(ids[level])
            sample.per_level[level] = len(picked)
            chosen.update({request_id: level for request_id in picked})
        rows = [r for r in self._select() if r["judgment_id"] in chosen]
        rows.sort(key=lambda r: (chosen[r["judgment_id"]], r["model"], r["dialect"], r["item_id"]))
        sample.rows = rows
        return sample

    # -- import -------------------------------------------------------------------------------
    def import_csv(self, path: str | Path, annotator: str, *, now: float | None = None) -> ImportSummary:
        """Validate every row, then store the filled ones as `rlaif_override` annotations in one transaction.

        Rows whose human columns are all empty are skipped; a row identical to a stored annotation (same
        judgment, annotator, scores and comment) is left alone, so importing a file twice changes nothing.
        Raises DataError naming the file, line and column of every problem (nothing is stored then).
        """
        annotator = annotator.strip()
        if not annotator:
            raise DataError("--annotator: give the annotator's name (it is stored with every score)")
        path = Path(path)
        overrides, summary = read_review_csv(path, self.store)
        created = time.time() if now is None else now
        with self.store.transaction():
            for o in overrides:
                cur = self.store.conn.execute(
                    "INSERT OR IGNORE INTO annotations "
                    "(target_id, annotator, kind, value, comment, created_at) VALUES (?,?,?,?,?,?)",
                    (o.judgment_id, annotator, OVERRIDE_KIND, dumps(o.value), o.comment, created))
                if cur.rowcount:
                    summary.imported += 1
                else:
                    summary.unchanged += 1
        return summary


def _queue_row(row: Any, variants: dict[str, Any]) -> dict[str, Any]:
    parsed = json.loads(row["parsed"]) if row["parsed"] else {}
    out: dict[str, Any] = {
        "judgment_id": row["request_id"], "judge": row["judge_id"], "model": row["model_id"],
        "item_id": row["item_id"], "dialect": row["variant"],
        "standard_question": _text(variants.get("standard")),
        "dialect_question": _text(variants.get(row["variant"])),
        "standard_response": row["standard_response"] or "",
        "dialect_response": row["dialect_response"] or "",
        "judge_reasoning": parsed.get("chain_of_thought_reasoning", ""),
        **{col: parsed.get(name, "") for col, name in zip(JUDGE_COLUMNS, LIKERT_FIELDS, strict=True)},
        "judge_score": "" if row["score"] is None else row["score"],
        "confidence": "" if row["confidence"] is None else row["confidence"],
        "flagged": row["flagged"], "reason": row["reason"] or ""}
    return out | {col: "" for col in (*HUMAN_COLUMNS, SCRIPT_COLUMN, "comment")}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else dumps(value)


def write_review_csv(rows: Iterable[dict[str, Any]], path: str | Path, *, excel: bool = False) -> int:
    """Write queue rows as CSV (UTF-8; `excel=True` adds a BOM so Excel reads Bengali correctly)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8-sig" if excel else "utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=QUEUE_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
            n += 1
    return n


# -- reading a filled-in queue -----------------------------------------------------------------------


def _records(path: Path) -> Iterator[tuple[int, int, list[str], dict[str, str]]]:
    """(first line of the record, spreadsheet row, header, row) for each CSV record (the header is row 1;
    lines and rows differ when cells hold line breaks); accepts a BOM and `;`/tab delimiters (what a
    spreadsheet may write back)."""
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not UTF-8 ({exc.reason} at byte {exc.start}); save the CSV as "
                        "UTF-8") from None
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=lambda d: ("judgment_id" in first.split(d), first.count(d)))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise DataError(f"{path}: empty file (expected the header row of a review queue)") from None
    start = reader.line_num + 1
    for row_number, record in enumerate(reader, start=2):
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in record):
            continue
        if len(record) > len(header):
            raise DataError(f"{path}:{line}: {len(record)} fields but the header has {len(header)}")
        yield line, row_number, header, dict(zip(header, record, strict=False))


def _likert(raw: str) -> int | None:
    text = raw.strip()
    if text.endswith(".0"):
        text = text[:-2]  # spreadsheets sometimes write 3 as 3.0
    try:
        value = int(text)  # int() also reads Bengali digits (৩)
    except ValueError:
        return None
    return value if 0 <= value <= 5 else None


def read_review_csv(path: Path, store: Store) -> tuple[list[_Override], ImportSummary]:
    """Parse and validate a filled-in queue; all problems are reported together (one entry per row, naming
    its line and every bad cell), nothing is returned partially."""
    required = ("judgment_id", *HUMAN_COLUMNS)
    summary = ImportSummary()
    overrides: list[_Override] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    header_checked = False
    for line, row_number, header, row in _records(path):
        if not header_checked:
            missing = [c for c in required if c not in header]
            if missing:
                raise DataError(f"{path}:1: missing column(s) {', '.join(missing)} (export the queue with "
                                "`dialectbias review export` and fill in the human_* columns)")
            header_checked = True
        summary.rows += 1
        where = f"{path}:{line}" + (f" (spreadsheet row {row_number})" if row_number != line else "")
        result = _read_row(row, line, seen, store)
        if isinstance(result, list):
            if len(result) == 1:
                problems.append(f"{where}: {result[0]}")
            elif result:
                judgment = row.get("judgment_id", "").strip()
                problems.append("\n".join([f"{where}: {len(result)} invalid cells (judgment {judgment!r}):",
                                           *(f"  - {p}" for p in result)]))
            else:
                summary.skipped_empty += 1
            continue
        overrides.append(result)
    if problems:
        shown = problems[:MAX_REPORTED_PROBLEMS]
        more = len(problems) - len(shown)
        rows = f"{len(problems)} invalid row{'' if len(problems) == 1 else 's'}"
        raise DataError("\n".join([f"{path}: {rows}; nothing was imported", *shown,
                                   *([f"… and {more} more row(s)"] if more else [])]))
    return overrides, summary


def _read_row(row: dict[str, str], line: int, seen: dict[str, int], store: Store) -> _Override | list[str]:
    """The row's override, or its problems (`column X: message` each; none = a row left empty, skipped)."""
    judgment_id = row.get("judgment_id", "").strip()
    human = {c: row.get(c, "").strip() for c in HUMAN_COLUMNS}
    script_raw = row.get(SCRIPT_COLUMN, "").strip()
    comment = row.get("comment", "").strip()
    if not judgment_id:
        return ["column judgment_id: empty"]
    if not any(human.values()) and not script_raw and not comment:
        return []
    if judgment_id in seen:
        return [f"column judgment_id: {judgment_id!r} is also on line {seen[judgment_id]} (one row per judgment)"]
    seen[judgment_id] = line
    if not store.query("SELECT 1 FROM judgments WHERE request_id = ?", (judgment_id,)):
        return [f"column judgment_id: unknown judgment {judgment_id!r} (not in {store.path}; was the queue "
                "exported from another experiment?)"]
    problems: list[str] = []
    script_valid: bool | None = None
    if script_raw:
        if script_raw.lower() in _TRUE:
            script_valid = True
        elif script_raw.lower() in _FALSE:
            script_valid = False
        else:
            problems.append(f"column {SCRIPT_COLUMN}: {script_raw!r} is not yes/no (or empty)")
    filled = [c for c, v in human.items() if v]
    likert: list[int] = [0] * len(LIKERT_FIELDS)  # invalid script with no scores: every category is 0 (App. B.2)
    if not filled and script_valid is not False:
        if not problems:
            problems.append(f"column {HUMAN_COLUMNS[0]}: no human scores, but the row has a "
                            f"{'comment' if comment else SCRIPT_COLUMN} (fill the five Likert columns, or clear "
                            "the row's human columns and comment to skip it)")
    elif filled:
        values = {c: _likert(v) for c, v in human.items() if v}
        problems.extend(f"column {c}: {human[c]!r} is not an integer 0–5" for c, v in values.items() if v is None)
        empty = [c for c in HUMAN_COLUMNS if c not in filled]
        if empty:
            problems.append(f"column {empty[0]}: empty while other human columns are filled (fill all five "
                            f"Likert columns {HUMAN_COLUMNS[0]} … {HUMAN_COLUMNS[-1]}, or leave the row's human "
                            "columns and comment empty to skip it)")
        if not problems:
            likert = [values[c] for c in HUMAN_COLUMNS]  # type: ignore[misc]
    if problems:
        return problems
    score = 0.0 if script_valid is False else rlaif_score(likert)
    return _Override(line, judgment_id, {"likert": likert, "score": score, "script_valid": script_valid}, comment)
