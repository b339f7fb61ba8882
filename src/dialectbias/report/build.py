"""Build a task's report from the store: CSV tables plus a self-contained index.html. Every report, whatever
the task, also says how many variants of its items are human-validated (`human_validated.csv`, SPEC §4 P1
Gold labelling)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from dialectbias.config import Experiment
from dialectbias.report._content import ReportContent
from dialectbias.report._departures import departures_changed, departures_section
from dialectbias.report._html import Section, write_html
from dialectbias.store import Store, call_totals, models_with_imports

HUMAN_VALIDATED_CSV = "human_validated.csv"

#: a task's `report(store, out_dir)`: writes its CSV tables and returns what index.html shows of it
TaskReport = Callable[[Store, Path], ReportContent]


def write_report(exp: Experiment, task_report: TaskReport, out_dir: str | Path, alerts: Sequence[str] = ()) -> Path:
    """Run the task's report over the experiment's store and write `out_dir/index.html`
    (`dialectbias.api.build_report` does it from the experiment file). `alerts` (e.g. "nothing scored: …")
    are shown at the top, above everything else."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with Store.open(exp.store_path, create=False) as store:
        result, validated = write_tables(task_report, store, out)
        calls = call_totals(store)
        changed = departures_changed(exp, store.get_meta("departures"))
        imported = [] if exp.models else models_with_imports(store, "generate")
    metadata = {"experiment": exp.name, "task": exp.task, "experiment file": str(exp.path),
                "store": str(exp.store_path), "models": ", ".join(m.id for m in exp.models)
                or (f"{', '.join(imported)} (generations imported)" if imported else "none"),
                "judges": ", ".join(f"{j.id} ({j.role or 'primary'})" for j in exp.judges) or "none",
                "results stored": calls.results, "failed requests": calls.failed,
                "tokens in/out": f"{calls.tokens_in:,} / {calls.tokens_out:,}", "replicate": exp.replicate,
        **result.metadata}
    departures = departures_section(exp, out)
    sections = [*result.sections, validated, *([departures] if departures else [])]
    return write_html(out / "index.html", result.title, sections, metadata, note=exp.note,
                      alerts=[*alerts, *([changed] if changed else [])])


def write_tables(task_report: TaskReport, store: Store, out: Path) -> tuple[ReportContent, Section]:
    """Write every CSV table of the report into `out` (the task's, then `human_validated.csv`; `departures.csv`
    is the experiment file's, `departures_section`) and return the task's content and the human-validated
    section. `dialectbias view` reads its tables through here too, so both show the same figures."""
    return task_report(store, out), human_validated_section(store, out)


def human_validated_section(store: Store, out: Path) -> Section:
    """Write `human_validated.csv` (per variant: items, human-validated, machine, corrected in review, the
    3-point validation labels) and return its report section."""
    from dialectbias.review import HUMAN_VALIDATED_COLUMNS, HUMAN_VALIDATED_LEGEND, human_validated_rows

    table = pd.DataFrame(human_validated_rows(store), columns=list(HUMAN_VALIDATED_COLUMNS))
    table.to_csv(out / HUMAN_VALIDATED_CSV, index=False)
    machine = int(table["machine"].sum()) if not table.empty else 0
    return Section(heading="Human-validated variants", table=table, legend=HUMAN_VALIDATED_LEGEND,
                   text=f"How many variants of the items a native speaker validated ({HUMAN_VALIDATED_CSV}); "
                        f"{machine} variant(s) are machine translations nobody has validated yet. Correct them in "
                        "review (queue translation_correction) and `dialectbias export --items` applies the "
                        "corrections and marks the variants human-validated.",
                   empty="no items in the store")
