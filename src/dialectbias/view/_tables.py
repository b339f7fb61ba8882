"""The tables of an experiment's report, for the explorer: written by the report's own code
(`report.build.write_tables`: the task's `report` hook and the human-validated table; `departures_section`)
into a temporary folder and read back from the CSV files, so every figure the explorer shows is the one
`dialectbias report` writes, character for character. Rebuilt whenever the store changes (`StoreWatch`).

Each table knows its key columns (the facets a row is about: model, variant or dialect, domain, strategy,
trait, judge …) and which cells lead to answers: a cell of a row naming a model, variant, domain or
question type lists the answers of that model, variant, domain … (a column named after a variant, as in the
model × dialect table, is that variant)."""

from __future__ import annotations

import csv
import math
import sqlite3
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.errors import DialectBiasError
from dialectbias.report import Section, departures_section
from dialectbias.report.build import write_tables
from dialectbias.store import StoreWatch
from dialectbias.view._experiments import LoadedExperiment

#: column names that say what a row is about (matched case-insensitively); rows are matched on them in a comparison
FACETS = ("model", "model_id", "variant", "dialect", "domain", "question_type", "strategy", "trait", "judge",
          "judge_id", "judges", "primary", "secondary", "model_a", "model_b", "dialect_a", "dialect_b", "family",
          "size", "field", "queue", "value", "pair", "system", "stage", "rubric", "metric", "topic", "condition",
          "category", "language", "template", "kind", "group", "attribute", "term", "label", "instruction")
#: the columns a cell's answers are filtered by, and the query parameter each sets
FILTER_COLUMNS = {"model": "model", "model_id": "model", "system": "model", "variant": "variant",
                  "dialect": "variant", "domain": "domain", "question_type": "question_type"}


@dataclass
class ReportTable:
    """One CSV table of the report: its rows as the CSV's exact texts."""

    name: str
    heading: str
    text: str
    legend: dict[str, str]
    columns: list[str]
    rows: list[list[str]]
    numeric: list[bool] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def column(self, name: str) -> list[str]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def record(self, row: list[str]) -> dict[str, str]:
        return dict(zip(self.columns, row, strict=True))


@dataclass
class ExperimentTables:
    """The report's tables of one experiment at one state of its store (`mark`); `alert` when they cannot be
    shown (stale scores: see `LoadedExperiment.stale_scores`)."""

    mark: tuple[int, ...]
    title: str
    tables: list[ReportTable]
    alert: str | None = None

    def table(self, name: str) -> ReportTable | None:
        return next((t for t in self.tables if t.name == name), None)


def as_number(text: str) -> float | None:
    """A CSV cell's number, or None (empty, text)."""
    try:
        v = float(text)
    except ValueError:
        return None
    return None if math.isnan(v) else v


def display(text: str) -> str:
    """A CSV cell as the HTML report shows it: numbers with three decimals (integers whole), — when empty."""
    if text == "" or text.lower() == "nan":
        return "—"
    v = as_number(text)
    if v is None:
        return text
    if v.is_integer() and "." not in text and "e" not in text.lower():
        return str(int(v))
    return f"{v:.3f}"


def read_csv_table(path: Path, section: Section | None) -> ReportTable:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        columns = next(reader, [])
        rows = [r + [""] * (len(columns) - len(r)) for r in reader]
    numeric = [all(as_number(r[i]) is not None for r in rows if r[i] not in ("", "nan")) and
               any(r[i] not in ("", "nan") for r in rows) for i in range(len(columns))]
    facets = [c for c in columns if c.lower() in FACETS]
    keys = facets or [c for c, n in zip(columns, numeric, strict=True) if not n]
    return ReportTable(name=path.stem, heading=section.heading if section else path.stem, text=section.text if section
                       else "", legend=dict(section.legend) if section else {}, columns=columns, rows=rows,
                       numeric=numeric, keys=keys)


def _section_for(columns: list[str], sections: list[Section], used: set[int]) -> Section | None:
    """The report section showing this table (same columns), if any."""
    for i, s in enumerate(sections):
        if i not in used and s.table is not None and [str(c) for c in s.table.columns] == columns:
            used.add(i)
            return s
    return None


def build_tables(loaded: LoadedExperiment, mark: tuple[int, ...]) -> ExperimentTables:
    """Write the report's tables with the report's code into a temporary folder and read them back; `mark`:
    the store's as of before the build (a write during it changes the next mark: the tables are built again)."""
    with loaded.open() as store:
        alert = loaded.stale_scores(store)
        if alert:
            return ExperimentTables(mark, f"{loaded.exp.name}: {loaded.exp.task}", [], alert)
        with tempfile.TemporaryDirectory(prefix="dialectbias-view-") as tmp:
            out = Path(tmp)
            try:
                content, validated = write_tables(loaded.task.report, store, out)
            except DialectBiasError as exc:  # e.g. a checkpoint the report needs is missing
                return ExperimentTables(mark, f"{loaded.exp.name}: {loaded.exp.task}", [], f"The report failed: {exc}")
            except sqlite3.OperationalError as exc:  # the task's report wrote to the store: not here
                return ExperimentTables(mark, f"{loaded.exp.name}: {loaded.exp.task}", [], (
                    f"The {loaded.exp.task} report needs to write to the store ({exc}); run `dialectbias report "
                    f"{loaded.exp.path.name} --out DIR` once, then reload: the explorer never writes."))
            departures = departures_section(loaded.exp, out)
            sections = [*content.sections, validated, *([departures] if departures else [])]
            used: set[int] = set()
            tables = []
            for path in sorted(out.glob("*.csv")):
                with path.open(encoding="utf-8") as fh:
                    header = next(csv.reader(fh), [])
                tables.append(read_csv_table(path, _section_for(header, sections, used)))
    order = {id(s): i for i, s in enumerate(sections)}
    by_section = {t.name: min((order[id(s)] for s in sections if s.heading == t.heading), default=len(order))
                  for t in tables}
    tables.sort(key=lambda t: (by_section[t.name], t.name))
    return ExperimentTables(mark, content.title, tables)


class TableCache:
    """The tables of each experiment, rebuilt when its store changed since they were built (any commit,
    updates and deletes included), and whether its stored scores can be shown (`stale`). A build (the
    report's code: ~50 s on a 10×-paper store) never holds up `stale`, which every answer page asks."""

    def __init__(self) -> None:
        self._built: dict[str, ExperimentTables] = {}
        self._stale: dict[str, tuple[tuple[int, ...], str | None]] = {}
        self._watches: dict[str, StoreWatch] = {}
        self._watch_lock = threading.Lock()  # the watches' connections
        self._build_lock = threading.Lock()
        self._stale_lock = threading.Lock()

    def _mark(self, loaded: LoadedExperiment) -> tuple[int, ...]:
        with self._watch_lock:
            return self._watches.setdefault(loaded.key, StoreWatch(loaded.exp.store_path)).mark()

    def get(self, loaded: LoadedExperiment) -> ExperimentTables:
        with self._build_lock:
            mark = self._mark(loaded)
            cached = self._built.get(loaded.key)
            if cached is None or cached.mark != mark:
                cached = self._built[loaded.key] = build_tables(loaded, mark)
            return cached

    def stale(self, loaded: LoadedExperiment) -> str | None:
        """Why the experiment's stored scores (a judgment's score, review flag, final score) cannot be shown
        as its own now (`LoadedExperiment.stale_scores`), or None; asked again only when the store changed."""
        with self._stale_lock:
            mark = self._mark(loaded)
            known = self._stale.get(loaded.key)
            if known is None or known[0] != mark:
                with loaded.open() as store:
                    known = self._stale[loaded.key] = (mark, loaded.stale_scores(store))
            return known[1]

    def close(self) -> None:
        """Close the watches' connections."""
        with self._watch_lock:
            for watch in self._watches.values():
                watch.close()
            self._watches.clear()


def cell_filters(loaded: LoadedExperiment, table: ReportTable, row: list[str], column: str) -> dict[str, str] | None:
    """The answer filters of a numeric cell (model, variant, domain, question_type), or None when the cell
    leads nowhere (a text cell, or a table about nothing the answers are filtered by)."""
    i = table.columns.index(column)
    if not table.numeric[i] or as_number(row[i]) is None:
        return None
    known_models = set(loaded.model_ids) | set(loaded.task.review_model_ids())
    filters: dict[str, str] = {}
    for c, v in zip(table.columns, row, strict=True):
        param = FILTER_COLUMNS.get(c.lower())
        if param is None or not v:
            continue
        if param == "model" and v not in known_models:
            continue  # a summary row ("all", "dialect_avg")
        if v.lower() in ("all", "overall", "total"):
            continue  # a summary row
        filters.setdefault(param, v)
    if "variant" not in filters and column in variants_of(loaded):
        filters["variant"] = column
    return filters if filters else None


def variants_of(loaded: LoadedExperiment) -> set[str]:
    variants = set(loaded.exp.variants or [])
    variants |= {v for vs in loaded.exp.dialects.values() for v in vs}
    from dialectbias.dialects import known_variants

    return variants | set(known_variants(dict(loaded.exp.dialects)))


def filtered_rows(table: ReportTable, filters: dict[str, str], sort: str | None, descending: bool) -> list[list[str]]:
    """The server-side fallback of the page's script: rows whose columns equal `filters`, sorted by `sort`
    (numbers as numbers, empty cells last)."""
    rows = [r for r in table.rows if all(c not in table.columns or r[table.columns.index(c)] == v
                                         for c, v in filters.items())]
    if sort in table.columns:
        i = table.columns.index(sort)

        def key(r: list[str]) -> tuple[int, Any]:
            v = as_number(r[i])
            if r[i] == "":
                return (2, 0)
            return (0, v) if v is not None else (1, r[i])

        present = sorted((r for r in rows if r[i] != ""), key=key, reverse=descending)
        rows = present + [r for r in rows if r[i] == ""]
    return rows
