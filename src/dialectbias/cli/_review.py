"""`dialectbias review export | import | calibration`: the human-review CSV round trip (SPEC §4 P3)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dialectbias.cli import _app
from dialectbias.cli._app import ExperimentArg, clear_errors

if TYPE_CHECKING:
    from dialectbias.config import Experiment
    from dialectbias.judges import Rubric
    from dialectbias.review import ReviewQueue
    from dialectbias.store import Store
    from dialectbias.tasks import Task

JudgeOption = Annotated[str | None, typer.Option("--judge", help="judge id (default: the primary judge)")]
ExcelOption = Annotated[bool, typer.Option(
    "--excel", help="write UTF-8 with a byte-order mark so Excel shows Bengali text correctly")]


def _queue(exp: Experiment, task: Task, store: Store, judge: str | None) -> ReviewQueue:
    from dialectbias.errors import ConfigError
    from dialectbias.review import ReviewQueue

    if judge is None:
        primary = exp.primary_judge
        if primary is None:
            raise ConfigError(f"{exp.path}: the experiment has no judge, so there is nothing to review")
        judge = primary.id
    elif judge not in {j.id for j in exp.judges}:
        raise ConfigError(f"{exp.path}: no judge with id {judge!r}; judges: "
                          f"{', '.join(j.id for j in exp.judges) or 'none'}")
    return ReviewQueue(store, judge, [m.id for m in exp.models],
                       confidence_threshold=exp.review.confidence_threshold, rubrics=_rubrics(task))


def _rubrics(task: Task) -> dict[str, Rubric]:
    """Each judge's rubric, as the experiment's task reads it (its `rubric:`, else the task's default)."""
    return dict(getattr(task, "rubrics", {}))


def _write_readme(queue: ReviewQueue, out: Path) -> Path:
    """`<out stem>.README.txt` next to the CSV: each human column's range and anchors."""
    from dialectbias.review import review_readme

    readme = out.with_name(f"{out.stem}.README.txt")
    readme.write_text(review_readme(queue.rubric, out.name), encoding="utf-8")
    return readme


@clear_errors
def export_queue(experiment: ExperimentArg,
                 out: Annotated[Path, typer.Option("--out", help="CSV file to write")],
                 judge: JudgeOption = None, excel: ExcelOption = False) -> None:
    """Write the pending review queue (low-confidence or flagged judgments) as CSV.

    One row per judgment of the judge with confidence ≤ review.confidence_threshold, flagged, clipped by
    a ceiling, or unparsed, and no human score yet. Fill the human_<field> columns, one per numeric field
    of the judge's rubric (RLAIF: five Likert 0–5; ranges and anchors in <out>.README.txt, written next
    to the CSV), human_script_valid yes/no (optional, rubrics with a script check) and comment (optional),
    then run `dialectbias review import`. Plain UTF-8; --excel adds a BOM.

    Example: dialectbias review export bn-qa.yaml --out queue.csv
    """
    from dialectbias.api import open_experiment
    from dialectbias.review import write_review_csv
    from dialectbias.store import Store

    exp, task = open_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        queue = _queue(exp, task, store, judge)
        n = write_review_csv(queue.pending(), out, excel=excel, columns=queue.columns)
    readme = _write_readme(queue, out)
    _app.console.print(f"{n} judgment(s) to review (judge {queue.judge_id}, rubric {queue.rubric.name}, "
                       f"confidence ≤ {queue.confidence_threshold} or flagged) → {out} (columns: {readme.name})",
                       highlight=False)


@clear_errors
def import_queue(experiment: ExperimentArg,
                 csv_file: Annotated[Path, typer.Argument(help="the filled-in queue CSV",
                                                          show_default=False)],
                 annotator: Annotated[str, typer.Option("--annotator", help="who scored the rows")]) -> None:
    """Store the human scores of a filled-in queue; they replace the judge's scores in the report.

    Every row is checked first (judgment id; every human_<field> column of its judge's rubric filled,
    within the field's range); on any problem nothing is stored. The score is recomputed through the
    rubric. Rows with empty human columns are skipped; re-importing a file changes nothing.

    Example: dialectbias review import bn-qa.yaml queue.csv --annotator rahim
    """
    from dialectbias.api import open_experiment
    from dialectbias.review import ReviewQueue
    from dialectbias.store import Store

    exp, task = open_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        judge = exp.primary_judge.id if exp.primary_judge else ""
        queue = ReviewQueue(store, judge, [m.id for m in exp.models], rubrics=_rubrics(task))
        summary = queue.import_csv(csv_file, annotator)
    _app.console.print(f"{csv_file}: {summary.imported} imported, {summary.skipped_empty} skipped (empty), "
                       f"{summary.unchanged} unchanged (already stored)", highlight=False)


@clear_errors
def calibration(experiment: ExperimentArg,
                out: Annotated[Path, typer.Option("--out", help="CSV file to write")],
                per_level: Annotated[int | None, typer.Option(
                    "--per-level", min=1, help="judgments per confidence level 1–5 "
                                               "(default: review.calibration_per_level)")] = None,
                seed: Annotated[int | None, typer.Option(
                    help="sampling seed (default: the experiment's)")] = None,
                judge: JudgeOption = None, excel: ExcelOption = False) -> None:
    """Write a calibration sample: N random judgments per confidence level 1–5, as review CSV.

    Human scores on it show whether the confidence threshold is right; import it like the queue.

    Example: dialectbias review calibration bn-qa.yaml --out calibration.csv --per-level 100 --seed 1
    """
    from dialectbias.api import open_experiment
    from dialectbias.review import write_review_csv
    from dialectbias.store import Store

    exp, task = open_experiment(experiment)
    n = per_level if per_level is not None else exp.review.calibration_per_level
    with Store.open(exp.store_path, create=False) as store:
        queue = _queue(exp, task, store, judge)
        sample = queue.calibration_sample(n, exp.seed if seed is None else seed)
    write_review_csv(sample.rows, out, excel=excel, columns=queue.columns)
    _write_readme(queue, out)
    levels = ", ".join(f"{lvl}: {k}/{sample.available[lvl]}" for lvl, k in sample.per_level.items())
    _app.console.print(f"{len(sample.rows)} judgment(s) sampled (per confidence level, sampled/available: "
                       f"{levels}) → {out}", highlight=False)
