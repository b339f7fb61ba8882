"""The CSV round trip of the review app's queue kinds (translation_score, validation, translation_correction,
error_coding): the same targets, forms and annotation records as the app, in a spreadsheet (SPEC §4 P1 Gold
labelling, P2; Bengali paper §4.1: human 0–10 scores of a stratified sample).

Export: one row per target of the queue (only its sample when it has one, `_sample`) that nobody has
annotated yet (or every target), with the columns `queue, target_id, item_id, dialect, domain, source,
translation, reference`, one `human_<field>` column per field of the kind's form (`human_score`,
`human_label`, `human_text`, `human_text.<key>` for the fields of an object variant, `human_categories`) and
`comment`; a README next to it gives each human column's values and anchors.

Import: a file is recognised by its `queue` column. Every row is validated through the kind's
`annotation()` — the function the app's form and API go through — before anything is stored (all or
nothing; each problem names its CSV line and column); rows whose human columns and comment are empty are
skipped (counted); each filled row is stored with `save_annotation` under the kind's annotation kind and
the given annotator, exactly the row the app writes, so re-importing a file changes nothing.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialectbias.errors import DataError
from dialectbias.review._annotators import NAME_PATTERN
from dialectbias.review._kinds import AnnotationError, QueueKind, ReviewConfig, queue_kind, save_annotation
from dialectbias.review._queue import MAX_REPORTED_PROBLEMS, ImportSummary, _records
from dialectbias.review._sample import queue_targets, stored_sample
from dialectbias.review._targets import FormField, ReviewTarget
from dialectbias.store import Store, annotated_targets, item_domains

#: the queue kinds whose targets the CSV round trip serves
CSV_QUEUES = ("translation_score", "validation", "translation_correction", "error_coding")
BASE_COLUMNS = ("queue", "target_id", "item_id", "dialect", "domain", "source", "translation", "reference")
HUMAN_PREFIX = "human_"
MAX_COMMENT_CHARS = 5000
#: a flags cell that says "no category applies" (an empty cell skips the row)
NONE_WORDS = frozenset({"none", "-", "no error", "no errors"})
_SOURCE_ROLES, _CANDIDATE_ROLES = ("source", "question"), ("candidate", "answer")


def csv_kind(name: str) -> QueueKind:
    if name not in CSV_QUEUES:
        raise DataError(f"queue {name!r} has no CSV round trip here; queues: judgments (the default), "
                        f"{', '.join(CSV_QUEUES)}")
    return queue_kind(name)


def human_column(field_name: str) -> str:
    return f"{HUMAN_PREFIX}{field_name}"


def _panel_text(target: ReviewTarget, roles: Iterable[str]) -> str:
    return next((p.text for p in target.panels if p.role in roles), "")


@dataclass
class QueueExport:
    """What `write_queue_csv` wrote."""

    path: Path
    queue: str
    rows: int = 0
    annotated: int = 0  # targets left out because someone annotated them already
    sampled: bool = False
    columns: tuple[str, ...] = ()


def queue_rows(kind: QueueKind, config: ReviewConfig, store: Store, *, include_done: bool = False
               ) -> tuple[list[dict[str, Any]], tuple[str, ...], list[FormField], int]:
    """The export's rows, its header, the distinct form fields (for the README) and how many targets were
    left out because they are annotated already."""
    done = set() if include_done else set(annotated_targets(store, [kind.annotation_kind]))
    domains = item_domains(store)
    rows: list[dict[str, Any]] = []
    fields: dict[str, FormField] = {}
    skipped = 0
    for t in queue_targets(kind, config, store):
        if t.target_id in done:
            skipped += 1
            continue
        form = kind.fields(config, t)
        for f in form:
            fields.setdefault(f.name, f)
        rows.append({"queue": kind.name, "target_id": t.target_id, "item_id": t.item_id, "dialect": t.dialect,
                     "domain": domains.get(t.item_id, ""), "source": _panel_text(t, _SOURCE_ROLES),
                     "translation": _panel_text(t, _CANDIDATE_ROLES),
                     "reference": _panel_text(t, ("reference",)),
                     **{human_column(f.name): "" for f in form}, "comment": ""})
    columns = (*BASE_COLUMNS, *(human_column(n) for n in fields), "comment")
    return rows, columns, list(fields.values()), skipped


def write_queue_csv(kind: QueueKind, config: ReviewConfig, store: Store, path: str | Path, *, excel: bool = False,
                    include_done: bool = False) -> QueueExport:
    """Write the queue as CSV (UTF-8; `excel` adds a BOM) and `<stem>.README.txt` next to it."""
    path = Path(path)
    rows, columns, fields, skipped = queue_rows(kind, config, store, include_done=include_done)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig" if excel else "utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore", restval="")
        writer.writeheader()
        writer.writerows(rows)
    path.with_name(f"{path.stem}.README.txt").write_text(queue_readme(kind, fields, path.name), encoding="utf-8")
    return QueueExport(path, kind.name, len(rows), skipped, stored_sample(store, kind.name) is not None, columns)


def queue_readme(kind: QueueKind, fields: Iterable[FormField], csv_name: str) -> str:
    """What each human column takes: values, anchors, how to skip a row."""
    lines = [f"{csv_name}: review queue {kind.name!r} — {kind.title}"
             + (f" ({kind.description})" if kind.description else ""), "",
             "Fill the human_* columns of a row (all of them), or none (the row is skipped), then run",
             f"`dialectbias review import EXP.yaml {csv_name} --annotator NAME`. The file is checked as a whole:",
             "on any problem nothing is stored. Do not edit the queue and target_id columns.", ""]
    for f in fields:
        col = human_column(f.name)
        if f.kind == "scale":
            lines.append(f"{col}: an integer {min(f.values)}–{max(f.values)} ({f.label})"
                         + (f" — {f.description}" if f.description else ""))
            lines += [f"    {v} = {text}" for v, text in sorted(f.anchors.items())]
        elif f.kind == "text":
            lines.append(f"{col}: the {f.label}: copy the translation (or its {f.name.partition('.')[2] or 'text'})"
                         " and correct it; the same text means the translation is right as it is"
                         + ("; one option per line" if f.description == "one option per line" else ""))
        elif f.kind == "flags":
            lines.append(f"{col}: every category that applies, separated by commas, or `none`")
            lines += [f"    {value} = {label}" for value, label in f.options]
        elif f.kind == "number":
            lines.append(f"{col}: a number {f.minimum}–{f.maximum} ({f.label})")
        else:
            lines.append(f"{col}: yes or no ({f.label})")
    lines += ["comment: optional (only with the human columns filled)", ""]
    return "\n".join(lines) + "\n"


def is_queue_csv(path: str | Path) -> bool:
    """Whether a file is a queue export (a `queue` column), not a judgments review CSV."""
    try:
        first = Path(path).read_bytes().decode("utf-8-sig").split("\n", 1)[0]
    except (OSError, UnicodeDecodeError):
        return False
    cells = {c.strip().strip('"') for d in ",;\t" for c in first.split(d)}
    return "queue" in cells and "target_id" in cells


@dataclass
class _Row:
    line: int
    kind: QueueKind
    target_id: str
    value: dict[str, Any]
    comment: str


def _cell_value(f: FormField, raw: str) -> Any:
    """A spreadsheet cell as the form would send it."""
    if f.kind == "scale":
        text = raw.strip()
        return text[:-2] if text.endswith(".0") else text  # spreadsheets sometimes write 3 as 3.0
    if f.kind == "flags":
        text = raw.strip()
        if text.lower() in NONE_WORDS:
            return []
        return [p.strip() for p in text.replace(";", ",").replace("|", ",").split(",") if p.strip()]
    return raw


def read_queue_csv(path: str | Path, store: Store, config: ReviewConfig) -> tuple[list[_Row], ImportSummary]:
    """Parse and validate every row of a filled queue export; raise DataError listing every problem."""
    path = Path(path)
    summary = ImportSummary()
    problems: list[str] = []
    targets: dict[str, dict[str, ReviewTarget]] = {}
    seen: dict[tuple[str, str], int] = {}
    out: list[_Row] = []
    for line, row_number, header, row in _records(path):
        if "queue" not in header or "target_id" not in header:
            raise DataError(f"{path}:1: missing column(s) queue/target_id (export the queue with `dialectbias "
                            "review export --queue NAME`)")
        summary.rows += 1
        where = f"{path}:{line}" + (f" (spreadsheet row {row_number})" if row_number != line else "")
        result = _read_row(row, header, line, store, config, targets, seen)
        if isinstance(result, _Row):
            out.append(result)
        elif result:
            problems.append(f"{where}: {result[0]}" if len(result) == 1 else "\n".join(
                [f"{where}: {len(result)} problems (target {row.get('target_id', '').strip()!r}):",
                 *(f"  - {p}" for p in result)]))
        else:
            summary.skipped_empty += 1
    if problems:
        shown = problems[:MAX_REPORTED_PROBLEMS]
        more = len(problems) - len(shown)
        raise DataError("\n".join([f"{path}: {len(problems)} invalid row{'' if len(problems) == 1 else 's'}; "
                                   "nothing was imported", *shown, *([f"… and {more} more row(s)"] if more else [])]))
    return out, summary


def _read_row(row: Mapping[str, str], header: list[str], line: int, store: Store, config: ReviewConfig,
              targets: dict[str, dict[str, ReviewTarget]], seen: dict[tuple[str, str], int]) -> _Row | list[str]:
    """The row's annotation, or its problems (`column X: message`; none = an empty row, skipped)."""
    queue = row.get("queue", "").strip()
    target_id = row.get("target_id", "").strip()
    comment = row.get("comment", "").strip()
    human = {c: row.get(c, "") for c in header if c.startswith(HUMAN_PREFIX)}
    if not any(v.strip() for v in human.values()) and not comment:
        return []
    if queue not in CSV_QUEUES:
        return [f"column queue: {queue!r} is not one of {', '.join(CSV_QUEUES)}"]
    if not target_id:
        return ["column target_id: empty"]
    kind = queue_kind(queue)
    if queue not in targets:
        targets[queue] = {t.target_id: t for t in kind.targets(config, store)}
    target = targets[queue].get(target_id)
    if target is None:
        return [f"column target_id: unknown target {target_id!r} of queue {queue} (not in {store.path}; was the "
                "file exported from another experiment?)"]
    if (queue, target_id) in seen:
        return [f"column target_id: {target_id!r} is also on line {seen[queue, target_id]} (one row per target)"]
    seen[queue, target_id] = line
    if len(comment) > MAX_COMMENT_CHARS:
        return [f"column comment: longer than {MAX_COMMENT_CHARS} characters"]
    form = kind.fields(config, target)
    missing = [human_column(f.name) for f in form if human_column(f.name) not in header]
    if missing:
        return [f"column {missing[0]}: not in the header, but target {target_id!r} needs it (re-export the queue)"]
    cells = {f.name: human[human_column(f.name)] for f in form}
    if not any(v.strip() for v in cells.values()):
        return [f"column {human_column(form[0].name)}: empty, but the row has a comment (fill the human columns, or "
                "clear the comment to skip the row)"]
    data = {f.name: _cell_value(f, cells[f.name]) for f in form}
    try:
        value = kind.annotation(config, store, target, data)
    except AnnotationError as exc:
        return [f"column {human_column(name) if name in cells else name}: {message}"
                for name, message in exc.problems.items()]
    return _Row(line, kind, target_id, value, comment)


def import_queue_csv(store: Store, config: ReviewConfig, path: str | Path, annotator: str, *,
                     now: float | None = None) -> ImportSummary:
    """Validate a filled queue export, then store each filled row as the annotator's annotation (the app's
    record); a row equal to the annotator's current answer is counted unchanged."""
    annotator = annotator.strip()
    if not NAME_PATTERN.match(annotator):
        raise DataError(f"--annotator: {annotator!r} is not a name (letters, digits, _ . -; it is stored with "
                        "every annotation)")
    rows, summary = read_queue_csv(path, store, config)
    for r in rows:
        if save_annotation(store, r.target_id, annotator, r.kind.annotation_kind, r.value, r.comment, now=now):
            summary.imported += 1
        else:
            summary.unchanged += 1
    return summary
