"""Two experiments, or two models of one, compared: each report table cell by cell (rows matched on their key
columns; Δ = B − A for every numeric column both have), and the answers whose verdict changed.

The verdict of an answer (model, item, variant) is its final score from the primary judge, as the report
reads it: the human score where a human overrode the judgment (`review.human_score`), else the judge's score;
an answer whose judgment did not parse has no verdict ("unscored"). A verdict flipped when it differs between
A and B (a score that changed, or scored in one and unscored in the other). Dialects the report routes to
another judge (`review.on_miscalibrated`) are compared on the primary's verdict all the same. Tasks without a
judge have no verdicts (their tables are still compared)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dialectbias.store import Store, judgment_columns
from dialectbias.view._experiments import LoadedExperiment
from dialectbias.view._tables import ReportTable, as_number

#: two verdicts closer than this are the same
TOLERANCE = 1e-9

Verdicts = dict[tuple[str, str, str], float | None]


@dataclass
class DiffRow:
    key: list[str]
    cells: list[tuple[str, str, float | None]]  # (A's text, B's text, B − A or None)


@dataclass
class TableDiff:
    name: str
    heading: str
    keys: list[str]
    values: list[str]
    rows: list[DiffRow] = field(default_factory=list)
    only_a: int = 0
    only_b: int = 0


def _keyed(table: ReportTable, keys: list[str], where: tuple[str, str] | None) -> dict[tuple[str, ...], list[str]]:
    """Rows by their key values (a repeated key gets its occurrence number), optionally only where column = value."""
    out: dict[tuple[str, ...], list[str]] = {}
    seen: dict[tuple[str, ...], int] = {}
    for row in table.rows:
        rec = table.record(row)
        if where and rec.get(where[0]) != where[1]:
            continue
        k = tuple(rec[c] for c in keys)
        seen[k] = seen.get(k, 0) + 1
        out[(*k, str(seen[k])) if seen[k] > 1 else k] = row
    return out


def table_diff(a: ReportTable, b: ReportTable, *, model_column: str | None = None,
               models: tuple[str, str] | None = None) -> TableDiff:
    """A's and B's table cell by cell. With `model_column` and `models`, A is the first model's rows of `a`
    and B the second's of `b` (the same table, two models), matched on the other key columns."""
    keys = [k for k in a.keys if k in b.columns and k != model_column]
    values = [c for c, n in zip(a.columns, a.numeric, strict=True) if c not in keys and c != model_column
              and c in b.columns and (n or b.numeric[b.columns.index(c)])]
    rows_a = _keyed(a, keys, (model_column, models[0]) if model_column and models else None)
    rows_b = _keyed(b, keys, (model_column, models[1]) if model_column and models else None)
    diff = TableDiff(a.name, a.heading, keys, values)
    for k, ra in rows_a.items():
        rb = rows_b.get(k)
        if rb is None:
            diff.only_a += 1
            continue
        cells = []
        for c in values:
            ta, tb = ra[a.columns.index(c)], rb[b.columns.index(c)]
            va, vb = as_number(ta), as_number(tb)
            cells.append((ta, tb, vb - va if va is not None and vb is not None else None))
        diff.rows.append(DiffRow(list(k[:len(keys)]), cells))
    diff.only_b = sum(1 for k in rows_b if k not in rows_a)
    return diff


def verdicts(loaded: LoadedExperiment, store: Store, model_ids: list[str] | None = None) -> Verdicts:
    """(model, item, variant) -> final score of the primary judge's latest current judgment (None: unscored),
    read as the report reads it (`store.judgment_columns`)."""
    judge = loaded.primary_judge
    models = model_ids or loaded.model_ids
    out: Verdicts = {}
    if judge is None:
        return out
    for chunk in judgment_columns(store, [judge], models, human=loaded.exp.review.human_score):
        for m, item, variant, score, human, unscored in zip(chunk["model"], chunk["item_id"], chunk["variant"],
                                                             chunk["score"], chunk["human_score"],
                                                             chunk["unscored"], strict=True):
            out[(models[m], item, variant)] = None if unscored and human is None else (
                human if human is not None else score)
    return out


@dataclass(frozen=True)
class Flip:
    item_id: str
    variant: str
    model_a: str
    model_b: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return self.b - self.a if self.a is not None and self.b is not None else None


def _differ(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return abs(a - b) > TOLERANCE


def flipped(a: Verdicts, b: Verdicts, models: tuple[str, str] | None = None) -> list[Flip]:
    """The answers judged in both A and B whose verdict differs. Without `models`, A and B are two experiments
    (same model, item, variant); with `models` = (m1, m2), m1's verdicts against m2's (same item and variant)."""
    flips = []
    if models is None:
        for (m, item, variant), va in sorted(a.items()):
            if (m, item, variant) in b and _differ(va, b[(m, item, variant)]):
                flips.append(Flip(item, variant, m, m, va, b[(m, item, variant)]))
        return flips
    m1, m2 = models
    for (m, item, variant), va in sorted(a.items()):
        if m == m1 and (m2, item, variant) in b and _differ(va, b[(m2, item, variant)]):
            flips.append(Flip(item, variant, m1, m2, va, b[(m2, item, variant)]))
    return flips
