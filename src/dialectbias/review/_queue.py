"""The review queue of any rubric as a CSV round trip (SPEC §4 P3 Human fallback; Bengali paper §3.4).

Export: one row per judgment that needs a human (low confidence, flagged or clipped, no override yet), with
one column per panel of what the judge judged (`_judgment_panels`: by default both questions and both
responses; a task's own panels otherwise), the judge's reasoning and field values, and empty `human_<field>`
columns, one per numeric field of the judge's rubric (a README next to the CSV gives each column's range and
anchors). Import: each filled row becomes a `judgment_override` annotation whose score, recomputed through
the rubric (weights, ceilings), replaces the judge's in the final table (the latest override wins).
"""

from __future__ import annotations

import csv
import io
import random
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.errors import DataError
from dialectbias.judges import Rubric, RubricField, judge_answer
from dialectbias.judges import override_value as judge_override_value
from dialectbias.review._judgment_panels import DEFAULT_PANEL_COLUMNS, PanelsOf, judgment_panels, panel_cells
from dialectbias.review._rubrics import judge_rubric
from dialectbias.store import (
    OVERRIDE_KIND,
    JudgmentRecord,
    NewAnnotation,
    Store,
    add_annotations,
    dumps,
    get_judgment,
    iter_judgments,
)

SCRIPT_COLUMN = "human_script_valid"
CONFIDENCE_LEVELS = (1, 2, 3, 4, 5)
MAX_REPORTED_PROBLEMS = 20


def judge_columns(rubric: Rubric) -> tuple[str, ...]:
    return tuple(f"judge_{f.name}" for f in rubric.numeric_fields)


def human_columns(rubric: Rubric) -> tuple[str, ...]:
    """`human_<field>` for every numeric field of the rubric, in its order."""
    return tuple(f"human_{f.name}" for f in rubric.numeric_fields)


def has_script_column(rubric: Rubric) -> bool:
    return "script" in rubric.checks


def queue_columns(rubric: Rubric, panel_columns: Iterable[str] = DEFAULT_PANEL_COLUMNS) -> tuple[str, ...]:
    """The header of a review CSV for judgments on `rubric` showing panels `panel_columns` (default: both
    questions and both responses)."""
    return ("judgment_id", "judge", "rubric", "model", "item_id", "dialect", *panel_columns, "judge_reasoning",
            *judge_columns(rubric), "judge_score", "confidence", "flagged", "reason", *human_columns(rubric),
            *((SCRIPT_COLUMN,) if has_script_column(rubric) else ()), "comment")

_TRUE = {"1", "yes", "y", "true", "t", "valid", "হ্যাঁ", "হ্যা"}
_FALSE = {"0", "no", "n", "false", "f", "invalid", "না"}


def review_readme(rubric: Rubric, csv_name: str) -> str:
    """What each human column of a queue on `rubric` takes: its range, meaning and anchors."""
    lines = [f"{csv_name}: human review of judgments on the rubric {rubric.name!r}"
             + (f" ({rubric.description})" if rubric.description else ""), "",
             "Fill, per row, every human_<field> column below (or none: the row is skipped), then run "
             "`dialectbias review import EXP.yaml FILE --annotator NAME`.", ""]
    for f in rubric.numeric_fields:
        kind = "integer" if f.type == "integer" else "number"
        lines.append(f"human_{f.name}: {kind} {f.range_words()}" + (f" — {f.description}" if f.description else ""))
        for value, text in sorted((f.anchors or {}).items()):
            lines.append(f"    {_fmt(value)} = {text}")
    if has_script_column(rubric):
        lines.append(f"{SCRIPT_COLUMN}: optional yes/no; no = the answer is not in the required script: the score "
                     "is the rubric's lowest, whatever the fields")
    lines += ["comment: optional", "", f"The score is recomputed through the rubric ({rubric.score})."]
    return "\n".join(lines) + "\n"


def _fmt(x: float) -> str:
    return f"{int(x) if float(x).is_integer() else x}"


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
    """The judgments of one judge (the primary one, normally) over some models, for human review.
    `rubrics`: the rubric of each judge, as the experiment's task declares it (a judge without one is a
    ConfigError, `_rubrics.judge_rubric`); `judgment_panels`: the task's view of what a judgment judged
    (`ReviewConfig.judgment_panels`; default: both questions and both answers), the CSV's text columns."""

    def __init__(self, store: Store, judge_id: str, model_ids: Iterable[str], *,
                 confidence_threshold: int = 3, rubrics: Mapping[str, Rubric] | None = None,
                 routed: Iterable[tuple[str, str]] = (), judgment_panels: PanelsOf | None = None) -> None:
        self.store = store
        self.judge_id = judge_id
        self.model_ids = list(model_ids)
        self.confidence_threshold = confidence_threshold
        #: the dialects whose every judgment of this judge goes to review (`review.on_miscalibrated: review`)
        self.routed_variants = sorted({dialect for judge, dialect in routed if judge == judge_id})
        self.rubrics = dict(rubrics or {})
        self.rubric = judge_rubric(self.rubrics, judge_id)
        self.judgment_panels = judgment_panels

    @property
    def columns(self) -> tuple[str, ...]:
        """The CSV header with the default panels' columns (`columns_for` with the task's own panels)."""
        return queue_columns(self.rubric)

    def columns_for(self, rows: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
        """The CSV header of exported rows: the default panels' columns, or, with the task's own panels, the
        panel columns the rows have (in order of first appearance)."""
        if self.judgment_panels is None:
            return self.columns
        fixed = {*queue_columns(self.rubric, ()), SCRIPT_COLUMN}
        return queue_columns(self.rubric, dict.fromkeys(c for r in rows for c in r if c not in fixed))

    def rubric_of(self, record: JudgmentRecord) -> Rubric:
        return judge_rubric(self.rubrics, record.judge_id)

    # -- export -------------------------------------------------------------------------------
    def _select(self, *, pending: bool = False) -> Iterator[dict[str, Any]]:
        items = {item.id: item.variants for item in self.store.iter_items()}
        for record in iter_judgments(self.store, self.judge_id, self.model_ids, pending_review=pending,
                                     with_refs=True, routed_variants=self.routed_variants):
            panels = judgment_panels(self.judgment_panels, self.store, record, items.get(record.item_id, {}))
            yield _queue_row(record, self.rubric_of(record), panel_cells(panels))

    def pending(self) -> Iterator[dict[str, Any]]:
        """Judgments marked needs_review (confidence ≤ threshold, flagged, clipped or unparsed), or in a routed
        dialect, that no human has overridden yet, in (model, dialect, item) order."""
        yield from self._select(pending=True)

    def calibration_sample(self, per_level: int, seed: int = 0) -> CalibrationSample:
        """A stratified random sample: `per_level` judgments per judge confidence level 1–5 (all of a level
        when it has fewer), to check the review threshold against human scores. Seeded and stable."""
        ids: dict[int, list[str]] = {level: [] for level in CONFIDENCE_LEVELS}
        for record in iter_judgments(self.store, self.judge_id, self.model_ids):
            if record.confidence in ids:
                ids[record.confidence].append(record.request_id)
        for request_ids in ids.values():
            request_ids.sort()
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
        """Validate every row, then store the filled ones as `judgment_override` annotations in one transaction.

        Rows whose human columns are all empty are skipped; a row identical to a stored annotation (same
        judgment, annotator, scores and comment) is left alone, so importing a file twice changes nothing.
        Raises DataError naming the file, line and column of every problem (nothing is stored then).
        """
        annotator = annotator.strip()
        if not annotator:
            raise DataError("--annotator: give the annotator's name (it is stored with every score)")
        path = Path(path)
        overrides, summary = read_review_csv(path, self.store, self)
        created = time.time() if now is None else now
        added = add_annotations(self.store, [NewAnnotation(o.judgment_id, annotator, OVERRIDE_KIND, dumps(o.value),
                                                           o.comment, created) for o in overrides])
        summary.imported += sum(added)
        summary.unchanged += len(added) - sum(added)
        return summary


def _queue_row(record: JudgmentRecord, rubric: Rubric, panels: Mapping[str, str]) -> dict[str, Any]:
    parsed = record.parsed or {}
    reasoning = parsed.get(rubric.reasoning_field, "") if rubric.reasoning else ""
    if not reasoning and rubric.explanation:
        reasoning = parsed.get(rubric.explanation_field, "")
    out: dict[str, Any] = {
        "judgment_id": record.request_id, "judge": record.judge_id, "rubric": rubric.name, "model": record.model_id,
        "item_id": record.item_id, "dialect": record.variant, **panels, "judge_reasoning": reasoning,
        **{f"judge_{f.name}": parsed.get(f.name, "") for f in rubric.numeric_fields},
        "judge_score": "" if record.score is None else record.score,
        "confidence": "" if record.confidence is None else record.confidence,
        "flagged": int(record.flagged), "reason": record.reason or ""}
    return out | {col: "" for col in (*human_columns(rubric), SCRIPT_COLUMN, "comment")}


def write_review_csv(rows: Iterable[dict[str, Any]], path: str | Path, *, columns: Iterable[str],
                     excel: bool = False) -> int:
    """Write queue rows as CSV (UTF-8; `excel=True` adds a BOM so Excel reads Bengali correctly) with the
    header `columns` (a `ReviewQueue`'s `.columns_for(rows)`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8-sig" if excel else "utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
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


def _value(raw: str, f: RubricField) -> int | float | None:
    """A human cell as the field's value, or None when it is not one (wrong type or out of range)."""
    text = raw.strip()
    try:
        if f.type == "integer":
            if text.endswith(".0"):
                text = text[:-2]  # spreadsheets sometimes write 3 as 3.0
            value: int | float = int(text)  # int() also reads Bengali digits (৩)
        else:
            value = float(text.replace(",", ".") if text.count(",") == 1 and "." not in text else text)
    except ValueError:
        return None
    if (f.minimum is not None and value < f.minimum) or (f.maximum is not None and value > f.maximum):
        return None
    return value


def _kind(f: RubricField) -> str:
    lo = "" if f.minimum is None else _fmt(f.minimum)
    hi = "" if f.maximum is None else _fmt(f.maximum)
    bounds = f" {lo}–{hi}" if lo and hi else (f" ≥ {lo}" if lo else (f" ≤ {hi}" if hi else ""))
    return f"{'an integer' if f.type == 'integer' else 'a number'}{bounds}"


def read_review_csv(path: Path, store: Store, queue: ReviewQueue) -> tuple[list[_Override], ImportSummary]:
    """Parse and validate a filled-in queue; all problems are reported together (one entry per row, naming
    its line and every bad cell), nothing is returned partially. Each row is read with the rubric of its
    judgment's judge (`queue.rubric_of`)."""
    summary = ImportSummary()
    overrides: list[_Override] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    header_checked = False
    for line, row_number, header, row in _records(path):
        if not header_checked:
            candidates = [queue.rubric, *queue.rubrics.values()]
            if not any(set(human_columns(r)) <= set(header) for r in candidates) or "judgment_id" not in header:
                missing = [c for c in ("judgment_id", *human_columns(queue.rubric)) if c not in header]
                raise DataError(f"{path}:1: missing column(s) {', '.join(missing)} (export the queue with "
                                "`dialectbias review export` and fill in the human_* columns)")
            header_checked = True
        summary.rows += 1
        where = f"{path}:{line}" + (f" (spreadsheet row {row_number})" if row_number != line else "")
        result = _read_row(row, line, seen, store, queue, header)
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


def _read_row(row: dict[str, str], line: int, seen: dict[str, int], store: Store, queue: ReviewQueue,
              header: list[str]) -> _Override | list[str]:
    """The row's override, or its problems (`column X: message` each; none = a row left empty, skipped)."""
    judgment_id = row.get("judgment_id", "").strip()
    human_raw = {c: row.get(c, "").strip() for c in header if c.startswith("human_") and c != SCRIPT_COLUMN}
    script_raw = row.get(SCRIPT_COLUMN, "").strip()
    comment = row.get("comment", "").strip()
    if not judgment_id:
        return ["column judgment_id: empty"]
    if not any(human_raw.values()) and not script_raw and not comment:
        return []
    if judgment_id in seen:
        return [f"column judgment_id: {judgment_id!r} is also on line {seen[judgment_id]} (one row per judgment)"]
    seen[judgment_id] = line
    record = get_judgment(store, judgment_id)
    if record is None:
        return [f"column judgment_id: unknown judgment {judgment_id!r} (not in {store.path}; was the queue "
                "exported from another experiment?)"]
    rubric = queue.rubric_of(record)
    columns = human_columns(rubric)
    missing = [c for c in columns if c not in header]
    if missing:
        return [f"column {missing[0]}: not in the header, but judgment {judgment_id!r} is on the rubric "
                f"{rubric.name!r} (export its judge's queue with `dialectbias review export --judge`)"]
    human = {c: human_raw[c] for c in columns}
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
    values: dict[str, Any] = {}
    if not filled and script_valid is not False:
        if not problems:
            problems.append(f"column {columns[0]}: no human scores, but the row has a "
                            f"{'comment' if comment else SCRIPT_COLUMN} (fill the {len(columns)} human columns, "
                            "or clear the row's human columns and comment to skip it)")
    elif filled:
        by_column = {f"human_{f.name}": f for f in rubric.numeric_fields}
        for c in filled:
            value = _value(human[c], by_column[c])
            if value is None:
                problems.append(f"column {c}: {human[c]!r} is not {_kind(by_column[c])}")
            values[c[len("human_"):]] = value
        empty = [c for c in columns if c not in filled]
        if empty:
            problems.append(f"column {empty[0]}: empty while other human columns are filled (fill all "
                            f"{len(columns)} columns {columns[0]} … {columns[-1]}, or leave the row's human "
                            "columns and comment empty to skip it)")
    if problems:
        return problems
    try:
        override = override_value(rubric, record, values if filled else None, script_valid)
    except ValueError as exc:
        return [f"column human_{exc}"]
    return _Override(line, judgment_id, override, comment)


def override_value(rubric: Rubric, record: JudgmentRecord, values: Mapping[str, Any] | None,
                   script_valid: bool | None) -> dict[str, Any]:
    """The `judgment_override` value of a human's field values for a judgment (the CSV import and the review
    app store the same record; `dialectbias.judges.override_value`, which also re-scores it when the rubric
    changes). Raises ValueError naming the field at fault."""
    return judge_override_value(rubric, judge_answer(record.parsed or {}, record.clipped), values, script_valid)
