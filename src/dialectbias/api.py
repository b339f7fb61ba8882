"""The Python API: what the CLI commands do, callable from notebooks and scripts.

This is the layer that resolves an experiment file's task and hands it to the run machinery and the
report, so neither of them looks tasks up (the sub-packages import each other in one direction only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from dialectbias.config import Experiment
from dialectbias.config import load_experiment as load_experiment_file
from dialectbias.run import GenerationImport, RunSummary, check_executor, run_task
from dialectbias.run import import_generations as import_into_store
from dialectbias.run._stage import yield_problems
from dialectbias.run._status import StatusReport
from dialectbias.run._status import read_status as read_store_status
from dialectbias.store import Store, check_owner
from dialectbias.tasks import Task, load_task
from dialectbias.tasks._judgment_row import out_of_range_alerts


def open_experiment(path: str | Path, *, take_over: bool = False, rescore: bool = True) -> tuple[Experiment, Task]:
    """The experiment file and its task, both checked (keys, models, roles, task options, executor), and its
    store, when it exists, the file's own (StoreError naming both files otherwise; `take_over`: no check, the
    caller is about to take the store over). The values the store derived from the settings (judgment scores,
    ceilings, flags, review routing, human overrides' scores) are then brought up to date with the file as it
    is now (`Task.rescore`, no model call), so every command reads the current values; `rescore=False` leaves
    the store untouched (`plan` only reads it)."""
    exp, task = _checked(path)
    if not take_over:
        check_owner(exp.store_path, exp.name, exp.path)
    if rescore and exp.store_path.is_file():
        with Store.open(exp.store_path, create=False) as store:
            task.rescore(store)
    return exp, task


def _checked(path: str | Path) -> tuple[Experiment, Task]:
    exp = load_experiment_file(path)
    task = load_task(exp)
    check_executor(exp)
    return exp, task


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment file, task settings included; ConfigError names the file, key and line."""
    return _checked(path)[0]


def run_experiment(path: str | Path, *, progress: bool = True, console: Console | None = None,
                   take_over: bool = False) -> RunSummary:
    """Run (or resume) an experiment: only requests without a stored result are sent. A store another
    experiment file runs in is refused, unless `take_over` (that experiment's rows are then superseded)."""
    exp, task = open_experiment(path, take_over=take_over)
    return run_task(exp, task, progress=progress, console=console, take_over=take_over)


@dataclass(frozen=True)
class ReportOutcome:
    """A written report: its index.html, one line per stage that produced no usable result (nothing of
    it is scored; `dialectbias report` then exits non-zero), and the warnings: one line per judge with judgments
    scored on values clipped into range (`out_of_range: clip`), then one per distinct third-party warning raised
    while it was built (`report/_warnings.py`)."""

    index: Path
    empty: list[str]
    warnings: list[str] = field(default_factory=list)


def report_experiment(path: str | Path, out_dir: str | Path) -> ReportOutcome:
    """Write the task's CSV tables and `out_dir/index.html`, saying at its top when a stage has nothing
    scored (no successful generation, no scored judgment, no accepted answer)."""
    from dialectbias.report._warnings import report_warnings
    from dialectbias.report.build import write_report

    exp, task = open_experiment(path)
    with Store.open(exp.store_path, create=False) as store:
        empty, _ = yield_problems(task.stage_yields(store))
        clipped = out_of_range_alerts(store, exp.judges)
    alerts = [f"Nothing scored: {line}. Run the experiment (`dialectbias run`) and look at its summary."
              for line in empty]
    with report_warnings() as warned:
        index = write_report(exp, task.report, out_dir, alerts=[*alerts, *(f"{c}." for c in clipped)])
    return ReportOutcome(index, empty, [*clipped, *warned])


def build_report(path: str | Path, out_dir: str | Path) -> Path:
    """Write the task's CSV tables and `out_dir/index.html`; returns the index's path."""
    return report_experiment(path, out_dir).index


def import_generations(path: str | Path, file: str | Path, *, take_over: bool = False) -> GenerationImport:
    """Store the outputs of a JSONL file as the experiment's generations (see `dialectbias import-generations`)."""
    exp, task = open_experiment(path, take_over=take_over)
    return import_into_store(exp, task, file, take_over=take_over)


def read_status(path: str | Path) -> tuple[Experiment, StatusReport]:
    """Progress per stage × model and the judgment counts of the experiment's store."""
    from dialectbias.review import routed_to_review

    exp, task = open_experiment(path)
    with Store.open(exp.store_path, create=False) as store:
        return exp, read_store_status(exp, task.stages(), store, routed_to_review(store, exp))


__all__ = ["ReportOutcome", "RunSummary", "build_report", "import_generations", "load_experiment", "open_experiment",
           "read_status", "report_experiment", "run_experiment"]
