"""run, status, export, report (the spine's commands)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.text import Text

from dialectbias.cli._app import (
    EXIT_EMPTY,
    EXIT_ERROR,
    EXIT_FAILURES,
    ExperimentArg,
    TakeOverOpt,
    clear_errors,
    console,
    err_console,
)

if TYPE_CHECKING:
    from dialectbias.run import RunSummary
    from dialectbias.run._status import JudgeReview

Pair = tuple[str, str, str]  # (label, value, style)


def _folded(pairs: list[Pair], width: int, indent: str = "  ", first: str | None = None) -> list[Text]:
    """`label value · label value …` lines of at most `width` characters (`first`: the first line's indent,
    default `indent`); a pair is never split."""
    lines: list[Text] = []
    line = Text(indent if first is None else first)
    for label, value, style in pairs:
        piece = f"{label} {value}"
        if line.plain.strip() and len(line.plain) + 3 + len(piece) > width:
            lines.append(line)
            line = Text(indent)
        if line.plain.strip():
            line.append(" · ")
        line.append(piece, style=style)
    if line.plain.strip():
        lines.append(line)
    return lines


def _count(label: str, n: int, *, always: bool = False, bad: bool = False) -> list[Pair]:
    """One pair, or none when the count is zero (zeros of a rare kind are noise)."""
    return [(label, f"{n:,}", "red" if bad and n else "")] if n or always else []


def _cost(cost: float | None) -> list[Pair]:
    """The cost pair, or none when the model has no price."""
    return [("cost", f"{cost:,.4f}", "")] if cost is not None else []


def _print_block(title: str, pairs: list[Pair], notes: Sequence[str] = ()) -> None:
    console.print(Text(title, style="bold"), soft_wrap=True)
    for note in notes:
        console.print(f"  {note}", highlight=False, markup=False)
    for line in _folded(pairs, console.width):
        console.print(line, highlight=False, soft_wrap=True)


def print_summary(summary: RunSummary) -> None:
    """One block per stage × model, `label value` pairs folded to the terminal width (80 in logs)."""
    console.print(Text(f"run summary · {summary.experiment} · {summary.seconds:.1f} s", style="bold"))
    for s in summary.stages:
        pairs = [*_count("requests", s.total, always=True), *_count("already done", s.already_done, always=True),
                 *_count("calls", s.calls, always=True), *_count("failed", s.failed, always=True, bad=True),
                 *_count("too long", s.too_long, bad=True), *_count("cached", s.cached),
                 *_count("retried", s.retries), *_count("skipped", s.skipped),
                 *_count("parse failed", s.parse_failed, bad=True),
                 *_count("invalid values", s.invalid_values, bad=True),
                 *([("repaired/re-asked", f"{s.repaired}/{s.reasked}", "")] if s.repaired or s.reasked else []),
                 *_count("tokens in", s.tokens_in), *_count("tokens out", s.tokens_out), *_cost(s.cost)]
        _print_block(f"{s.stage} · {s.model_id}", pairs)
    for s in summary.stages:
        for err, count in s.errors.items():
            times = f" ({count}×)" if count > 1 else ""
            console.print(f"  [yellow]{s.stage} · {escape(s.model_id)}{times}:[/] {escape(err)}", highlight=False)
    for line in summary.outcome:
        console.print(line, highlight=False, markup=False)
    console.print(f"store: {summary.store}", highlight=False, overflow="fold")


class RetryKind(StrEnum):
    """`run --retry` values (`dialectbias.run.RETRY_KINDS`)."""

    unscored = "unscored"
    failed = "failed"
    all = "all"


def _print_retry_hints(unscored: int, failed: int, experiment: Path) -> None:
    from dialectbias.run import retry_hints

    for line in retry_hints(unscored, failed, experiment, console.width):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


@clear_errors
def run(experiment: ExperimentArg,
        progress: Annotated[bool, typer.Option(
            help="show progress (bars in a terminal, a line every 10 s otherwise)")] = True,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="run without asking, whatever the plan costs")] = False,
        confirm_above: Annotated[float | None, typer.Option(
            help="ask before running when the plan costs more than this (default 10, or "
                 "DIALECTBIAS_CONFIRM_ABOVE)", show_default=False)] = None,
        show_plan: Annotated[bool | None, typer.Option(
            "--plan/--no-plan", help="print the plan first, to stderr (default: when a model has prices)",
            show_default=False)] = None,
        take_over: TakeOverOpt = False,
        retry: Annotated[RetryKind | None, typer.Option(
            "--retry", help="also ask again: unscored judgments (the judge's answer did not validate), failed "
            "requests (re-asks included), or all; the old rows are kept as superseded", show_default=False)] = None,
        ) -> None:
    """Run or resume an experiment: generation, then judging. Only missing results are requested
    (and failed ones; --retry also asks again what was stored as unscored or whose re-ask failed).

    When a model has prices (or with --plan), the plan (`dialectbias plan`) is printed first, to stderr;
    when its cost is above --confirm-above, the run asks before its first call (--yes skips the question;
    without a terminal the run stops instead).

    Exit codes:
    0 done (warnings, e.g. refused items or missing variants, are printed with their counts);
    1 error: an invalid experiment or data file, a model stopped, the store held by another run, or the
    store another experiment file's (--take-over: make it this one's);
    3 some requests failed after their retries (run again to retry them);
    4 a stage produced no usable result: no successful generation, no scored judgment or no accepted answer;
    130 interrupted by Ctrl-C, 143 by SIGTERM (what completed is stored; run again to resume).

    Example: dialectbias run bn-qa.yaml
    """
    from dialectbias.api import open_experiment
    from dialectbias.cli._plan import confirm_plan
    from dialectbias.run import RETRY_KINDS, run_task

    exp, task = open_experiment(experiment, take_over=take_over)  # once: the plan and the run share the task
    confirm_plan(exp, task, yes, confirm_above, show=show_plan)
    summary = run_task(exp, task, progress=progress, console=console, take_over=take_over,
                       retry=RETRY_KINDS[retry.value] if retry else ())
    for line in summary.stopped:  # the cause first: a stopped model explains the rest of the summary
        err_console.print("[bold red]error:[/]", escape(line), highlight=False, soft_wrap=True)
    print_summary(summary)
    for line in summary.warnings:
        err_console.print("[yellow]warning:[/]", escape(line), highlight=False, soft_wrap=True)
    if summary.stopped:
        raise typer.Exit(EXIT_ERROR)
    for line in summary.empty:
        err_console.print("[bold red]error:[/]", escape(line), highlight=False, soft_wrap=True)
    if summary.failed:
        console.print(f"[red]{summary.failed} request(s) failed after retries[/]; run again to retry them.")
    _print_retry_hints(summary.retry_unscored, summary.retry_failed, exp.path)
    if summary.empty or summary.failed:
        raise typer.Exit(EXIT_EMPTY if summary.empty else EXIT_FAILURES)


@clear_errors
def status(experiment: ExperimentArg) -> None:
    """Show progress per stage and model (current requests; superseded ones apart), stages not compiled yet,
    the review queue (needs review, reviewed) and, per variant with machine translations, how many items
    are human-validated.

    Example: dialectbias status bn-qa.yaml
    """
    from dialectbias.api import read_status

    exp, report = read_status(experiment)
    console.print(Text(f"status of {exp.name}", style="bold"), soft_wrap=True)
    if not report.blocks:
        console.print("no requests yet: run `dialectbias run` first")
    for b in report.blocks:
        if b.state == "superseded":  # a stage or model no longer in the experiment: nothing current
            pairs = _count("superseded", b.superseded, always=True)
        elif b.state == "not compiled" and not b.requests:
            pairs = _count("superseded", b.superseded)
        else:
            pairs = [*_count("requests", b.requests, always=True), *_count("done", b.done, always=True),
                     *_count("failed", b.failed, always=True, bad=True), *_count("too long", b.too_long, bad=True),
                     *_count("pending", b.pending, always=True),
                     *_count("superseded", b.superseded), *_count("cache hits", b.cache_hits),
                     *_count("tokens in", b.tokens_in), *_count("tokens out", b.tokens_out), *_cost(b.cost)]
        _print_block(f"{b.stage} · {b.model_id}", pairs, [b.note] if b.note else [])
    j = report.judgments
    if j.total or j.superseded:
        pairs = [("judgments:", f"{j.total}", ""), ("unscored (parse failed):", f"{j.unscored - j.invalid}", ""),
                 *([("unscored (invalid values):", f"{j.invalid}", "")] if j.invalid else []),
                 *([("clipped (out of range):", f"{j.out_of_range}", "")] if j.out_of_range else []),
                 ("needs review:", f"{j.needs_review}", ""), ("reviewed:", f"{j.reviewed}", ""),
                 ("flagged:", f"{j.flagged}", ""), *(
                     [("superseded:", f"{j.superseded}", "")] if j.superseded else [])]
        for line in _folded(pairs, console.width, first=""):
            console.print(line, highlight=False, soft_wrap=True)
    for line in _judge_lines(report.judges, console.width):
        console.print(line, highlight=False, soft_wrap=True)
    for validated in _validated_lines(exp.store_path):
        console.print(validated, highlight=False, soft_wrap=True)
    _print_retry_hints(report.retry.unscored, report.retry.failed, exp.path)
    console.print(f"store: {exp.store_path}", highlight=False, overflow="fold")


def _judge_lines(judges: Sequence[JudgeReview], width: int) -> list[Text]:
    """Per judge: its judgments and how many need review, and where they are reviewed: the default queue
    (`review export`, the review app) holds the primary judge's only; another judge's need `--judge`."""
    lines: list[Text] = []
    for j in judges:
        if not j.judgments:
            continue
        routed = f" ({j.routed} routed: on_miscalibrated)" if j.routed else ""
        pairs: list[Pair] = [(f"judge {j.judge_id} ({j.role}): {j.judgments:,}", "judgments", ""),
                             (f"{j.needs_review:,}", f"need review{routed}", ""), (f"{j.reviewed:,}", "reviewed", ""),
                             *_count("unscored", j.unscored), *_count("of them invalid values", j.invalid),
                             *_count("clipped out of range", j.out_of_range)]
        lines += _folded(pairs, width, first="")
        if j.needs_review and j.in_default_queue:
            lines.append(Text("  in the default review queue (`review export`, the review app)"))
        elif j.needs_review:
            lines.append(Text(f"  not in the default queue: `review export --judge {j.judge_id}`"))
    return lines


def _validated_lines(store_path: Path) -> list[str]:
    """One line per variant with machine or human-validated items (gold labelling)."""
    from dialectbias.review import human_validated_rows
    from dialectbias.store import Store

    if not store_path.exists():
        return []
    with Store.open(store_path, create=False) as store:
        rows = human_validated_rows(store)
    return [f"variant {r['variant']}: {r['human_validated']} of {r['items']} items human-validated, {r['machine']} "
            f"machine" + (f", {r['labels_n']} validation label(s), mean {r['label_mean']:.2f}" if r["labels_n"] else "")
            for r in rows if r["machine"] or r["human_validated"]]


@clear_errors
def export(experiment: ExperimentArg,
           out: Annotated[Path | None, typer.Option("--out", help="output directory")] = None,
           format: Annotated[str, typer.Option("--format", help="csv, jsonl or parquet")] = "jsonl",
           items: Annotated[Path | None, typer.Option(
               "--items", help="write the experiment's items to this JSONL file (a `data:` file for any task), "
               "with a translate run's new variants and the review's corrections applied")] = None,
           inspect_dataset: Annotated[Path | None, typer.Option(
               "--inspect-dataset", help="write the prompts as an inspect_ai dataset JSONL")] = None,
           lm_eval_task: Annotated[Path | None, typer.Option(
               "--lm-eval-task", help="write the prompts as an lm-eval task folder")] = None,
           hf_dataset: Annotated[Path | None, typer.Option(
               "--hf-dataset", help="write a Hugging Face dataset folder here: Parquet configs and a README.md "
               "card (docs/publish-dataset.md)")] = None,
           license: Annotated[str | None, typer.Option(
               "--license", help="with --hf-dataset: the card's licence (a Hub identifier, e.g. cc-by-4.0; "
               "default unknown)")] = None,
           force: Annotated[bool, typer.Option(
               "--force", help="with --hf-dataset: replace a folder an earlier --hf-dataset wrote")] = False) -> None:
    """Dump generations, judgments, re-asks and annotations with every field; superseded rows (no longer
    part of the experiment) are kept with current=false and counted.

    With --items, write the experiment's items as a data file: a translate run adds its machine variants
    (is_human_validated: false); on any experiment, the review's translation corrections (review app or
    `review import`) are applied and the corrected or confirmed variants marked human-validated
    (validated_by, is_human_validated: true, validation: annotator, time, corrected, 3-point labels).
    Before a run, the items are written as the experiment reads them (e.g. a folder in the BanglaVerse
    layout as the flat JSONL that translate reads); relative image paths are rewritten for the file's folder.

    With --hf-dataset, write a Hugging Face dataset folder (never uploaded): the items, their variants with
    provenance and the tables above as Parquet configs, and a README.md card (docs/publish-dataset.md).

    With --inspect-dataset / --lm-eval-task, write every prompt the run would send for inspect_ai or
    lm-evaluation-harness; `import-generations --from` reads their answers back (docs/other-harnesses.md).

    Example: dialectbias export bn-qa.yaml --format csv --out exports/
    Example: dialectbias export bn-translate.yaml --items items.sylhet.jsonl
    Example: dialectbias export qa.yaml --hf-dataset hf/ --license cc-by-4.0
    Example: dialectbias export qa.yaml --inspect-dataset prompts.jsonl --lm-eval-task lm-task/
    """
    from dialectbias.api import open_experiment
    from dialectbias.errors import ConfigError
    from dialectbias.report import departure_table
    from dialectbias.store import Store
    from dialectbias.store._export import export_store, write_rows

    if inspect_dataset is not None or lm_eval_task is not None:  # docs/other-harnesses.md
        from dialectbias.interop import export_prompts
        for line in export_prompts(*open_experiment(experiment), inspect_dataset, lm_eval_task):
            console.print(line, highlight=False)
    elif out is None and items is None and hf_dataset is None:
        raise ConfigError("give --out DIR (the store's tables), --items FILE.jsonl (the items), --hf-dataset DIR "
                          "(a Hugging Face dataset folder) and/or --inspect-dataset F.jsonl / --lm-eval-task DIR "
                          "(the prompts for inspect_ai / lm-eval)")
    if hf_dataset is None and (license is not None or force):
        raise ConfigError("--license and --force go with --hf-dataset DIR")
    if hf_dataset is not None:
        from dialectbias.publish import publish_hf_dataset

        published = publish_hf_dataset(experiment, hf_dataset, license=license, force=force)
        for line in published.warnings:
            err_console.print("[yellow]warning:[/]", escape(line), highlight=False, soft_wrap=True)
        for line in published.lines():
            console.print(line, highlight=False)
    if items is not None:
        exp, task = open_experiment(experiment)
        if _has_items(exp.store_path):
            with Store.open(exp.store_path, create=False) as store:
                written = task.export_items(store, items)
        else:  # no run yet: the items as read
            written = task.export_items(None, items)
            for line in task.input_warnings():
                err_console.print("[yellow]warning:[/]", escape(line), highlight=False, soft_wrap=True)
        for line in written.lines():
            console.print(line, highlight=False)
    if out is None:
        return
    if format not in ("csv", "jsonl", "parquet"):
        raise ConfigError(f"--format must be csv, jsonl or parquet, not {format!r}")
    exp, task = open_experiment(experiment)
    superseded: dict[str, int] = {}
    with Store.open(exp.store_path, create=False) as store:
        counts = export_store(store, out, format, superseded)  # type: ignore[arg-type]
        for name, rows in task.export_tables(store).items():  # a task's own per-row tables (translation_quality)
            counts[name] = write_rows(rows, out / f"{name}.{format}", format)  # type: ignore[arg-type]
        if exp.departures:  # which value each departure from a paper took (docs/departures.md)
            counts["departures"] = write_rows(departure_table(exp), out / f"departures.{format}",
                                              format)  # type: ignore[arg-type]
    for name, n in counts.items():
        old = f" ({superseded[name]} superseded: current=false)" if superseded.get(name) else ""
        console.print(f"{n:>8} {name} → {out / f'{name}.{format}'}{old}", highlight=False)


def _has_items(store_path: Path) -> bool:
    """True when the store exists and holds the experiment's items (a run or an import stored them)."""
    from dialectbias.store import Store, has_items

    if not store_path.is_file():
        return False
    with Store.open(store_path, create=False) as store:
        return has_items(store)


@clear_errors
def report(experiment: ExperimentArg,
           out: Annotated[Path, typer.Option("--out", help="output directory")] = Path("report")) -> None:
    """Write the HTML report (index.html) and the task's CSV tables.

    When a stage has nothing scored (no successful generation, no scored judgment, no accepted answer), the
    report says so at its top, the command says so first and exits with code 4. A library's warning while
    plotting (e.g. matplotlib's) is one `warning:` line naming the library; deprecation notices are dropped.
    Judgments scored on values a judge gave out of range, clipped (rubric `out_of_range: clip`), are a warning
    too, also at the top of the report.

    Example: dialectbias report bn-qa.yaml --out report/
    """
    from dialectbias.api import report_experiment

    written = report_experiment(experiment, out)
    for line in written.warnings:  # a library's warnings, one line each (never raw)
        err_console.print("[yellow]warning:[/]", escape(line), highlight=False, soft_wrap=True)
    for line in written.empty:
        err_console.print("[bold red]error:[/] nothing scored:", escape(line), highlight=False, soft_wrap=True)
    console.print(f"report: {written.index}", highlight=False, overflow="fold")
    if written.empty:
        raise typer.Exit(EXIT_EMPTY)
