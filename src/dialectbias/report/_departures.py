"""The report's "Departures from the papers" block: which value each departure took in this experiment
(`Experiment.departures`; `replicate: paper` sets them all to the paper's; docs/departures.md lists them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from dialectbias.config import Experiment
from dialectbias.report._html import Section

DEPARTURES_CSV = "departures.csv"
DEPARTURES_COLUMNS = ("option", "value", "paper_value", "used", "section", "why")
DEPARTURES_LEGEND = {
    "option": "the task option (under `options:`) where the toolkit's default departs from the paper",
    "value": "the value this experiment used",
    "paper_value": "the value that reproduces the paper (`replicate: paper` sets it)",
    "used": "paper: the paper's value; toolkit default: ours (see why); own value: set in the experiment file",
    "section": "where the paper (or PROCEDURES.md, for its released code) gives its value",
    "why": "why the toolkit's default differs",
}


def _cell(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def departure_table(exp: Experiment) -> list[dict[str, Any]]:
    """The experiment's departures as table rows (values as text: a string as it is, anything else as JSON),
    for `departures.csv` and `dialectbias export`'s `departures` table."""
    return [{k: _cell(r[k]) for k in DEPARTURES_COLUMNS} for r in exp.departure_rows()]


def departures_changed(exp: Experiment, last_run: str | None) -> str | None:
    """An alert when a departure's value differs from the one the last `run` stored (the store's `departures`
    metadata): the report states the file's values, while the stored answers were asked under the old ones
    until the experiment is run again. None when nothing changed or nothing was run (imported answers only)."""
    if not last_run:
        return None
    before = {r["option"]: r["value"] for r in json.loads(last_run)}
    changes = [f"{r['option']}: {_cell(before[r['option']])} → {_cell(r['value'])}" if r["option"] in before
               else f"{r['option']}: new" for r in exp.departure_rows()
               if r["option"] not in before or before[r["option"]] != r["value"]]
    if not changes:
        return None
    return (f"Departure settings changed since the last run ({'; '.join(changes)}). Settings that shape the "
            "requests (prompts, sampling, extraction) reach the numbers only after `dialectbias run`; those applied "
            "when scoring are already in this report. Run the experiment again before publishing.")


def departures_section(exp: Experiment, out: Path) -> Section | None:
    """Write `departures.csv` and return its section; None when the task declares no departure."""
    rows = exp.departure_rows()
    if not rows:
        return None
    table = pd.DataFrame(departure_table(exp), columns=list(DEPARTURES_COLUMNS))
    table.to_csv(out / DEPARTURES_CSV, index=False)
    paper = sum(r["used"] == "paper" for r in rows)
    return Section(heading="Departures from the papers", table=table, legend=DEPARTURES_LEGEND,
                   text=f"replicate: {exp.replicate}. {paper} of {len(rows)} setting(s) where the toolkit departs "
                        f"from the paper take the paper's value ({DEPARTURES_CSV}; docs/departures.md). "
                        "`replicate: paper` in the experiment file sets them all to the paper's.")


__all__ = ["DEPARTURES_CSV", "departure_table", "departures_changed", "departures_section"]
