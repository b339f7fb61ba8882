"""run, status, export, report (the spine's commands)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dialectbias.cli._app import (
    EXIT_EMPTY,
    EXIT_ERROR,
    EXIT_FAILURES,
    ExperimentArg,
    app,
    clear_errors,
    console,
    err_console,
)
from dialectbias.run import RunSummary


def print_summary(summary: RunSummary) -> None:
    table = Table(title=f"run summary · {summary.experiment} · {summary.seconds:.1f} s")
    for col in ("stage", "model", "requests", "already done", "calls", "cached", "retried", "failed",
                "skipped", "parse failed", "repaired/re-asked", "tokens in", "tokens out", "cost"):
        table.add_column(col, justify="left" if col in ("stage", "model") else "right", overflow="fold")
    for s in summary.stages:
        table.add_row(s.stage, s.model_id, str(s.total), str(s.already_done), str(s.calls), str(s.cached),
                      str(s.retries), f"[red]{s.failed}[/]" if s.failed else "0", str(s.skipped),
                      f"[red]{s.parse_failed}[/]" if s.parse_failed else "0", f"{s.repaired}/{s.reasked}",
                      f"{s.tokens_in:,}", f"{s.tokens_out:,}", "—" if s.cost is None else f"{s.cost:,.4f}")
    console.print(table)
    for s in summary.stages:
        for err, count in s.errors.items():
            times = f" ({count}×)" if count > 1 else ""
            console.print(f"  [yellow]{s.stage} · {escape(s.model_id)}{times}:[/] {escape(err)}", highlight=False)
    for line in summary.outcome:
        console.print(line, highlight=False, markup=False)
    console.print(f"store: {summary.store}")


@app.command()
@clear_errors
def run(experiment: ExperimentArg,
        progress: Annotated[bool, typer.Option(help="show progress bars")] = True) -> None:
    """Run or resume an experiment: generation, then judging. Only missing results are requested.

    Exit codes:
    0 done (warnings, e.g. refused items or missing variants, are printed with their counts);
    1 error: an invalid experiment or data file, or a model stopped;
    3 some requests failed after their retries (run again to retry them);
    4 a stage produced no usable result: no successful generation, no scored judgment or no accepted answer;
    130 interrupted (what completed is stored; run again to resume).

    Example: dialectbias run bn-qa.yaml
    """
    from dialectbias.run import run_experiment

    summary = run_experiment(experiment, progress=progress, console=console)
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
    if summary.empty or summary.failed:
        raise typer.Exit(EXIT_EMPTY if summary.empty else EXIT_FAILURES)


@app.command()
@clear_errors
def status(experiment: ExperimentArg) -> None:
    """Show progress per stage and model, failures, parse failures and the review queue.

    Example: dialectbias status bn-qa.yaml
    """
    from dialectbias.config import load_experiment
    from dialectbias.store import Store

    exp = load_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        table = Table(title=f"{exp.name} · {exp.store_path}")
        for col in ("stage", "model", "requests", "done", "failed", "pending", "cache hits", "tokens in",
                    "tokens out", "cost"):
            table.add_column(col, justify="left" if col in ("stage", "model") else "right", overflow="fold")
        rows = store.query(
            "SELECT r.stage, r.model_id, count(*), sum(s.status='ok'), sum(s.status='failed'), "
            "sum(s.request_id IS NULL), sum(coalesce(s.cache_hit,0)), sum(coalesce(s.tokens_in,0)), "
            "sum(coalesce(s.tokens_out,0)), sum(CASE WHEN s.cache_hit=0 THEN s.tokens_in ELSE 0 END), "
            "sum(CASE WHEN s.cache_hit=0 THEN s.tokens_out ELSE 0 END) "
            "FROM requests r LEFT JOIN results s USING (request_id) "
            "GROUP BY r.stage, r.model_id ORDER BY r.stage DESC, r.model_id")
        prices = {m.id: m for m in [*exp.models, *exp.judges]}
        for r in rows:
            paid = prices[r[1]].cost(r[9] or 0, r[10] or 0) if r[1] in prices else None
            table.add_row(*(str(v or 0) if i > 1 else str(v) for i, v in enumerate(r[:9])),
                          "—" if paid is None else f"{paid:,.4f}")
        console.print(table if rows else "no requests yet: run `dialectbias run` first")
        j = store.query("SELECT count(*), sum(parse_status='failed'), sum(needs_review), sum(flagged) "
                        "FROM judgments")[0]
        if j[0]:
            console.print(f"judgments: {j[0]} · unscored (parse failed): {j[1]} · needs review: {j[2]} "
                          f"· flagged: {j[3]}")


@app.command()
@clear_errors
def export(experiment: ExperimentArg,
           out: Annotated[Path, typer.Option("--out", help="output directory")],
           format: Annotated[str, typer.Option("--format", help="csv, jsonl or parquet")] = "jsonl") -> None:
    """Dump generations, judgments and annotations with every field.

    Example: dialectbias export bn-qa.yaml --format csv --out exports/
    """
    from dialectbias.config import load_experiment
    from dialectbias.errors import ConfigError
    from dialectbias.store import Store
    from dialectbias.store._export import export_store

    if format not in ("csv", "jsonl", "parquet"):
        raise ConfigError(f"--format must be csv, jsonl or parquet, not {format!r}")
    exp = load_experiment(experiment)
    with Store.open(exp.store_path, create=False) as store:
        counts = export_store(store, out, format)  # type: ignore[arg-type]
    for name, n in counts.items():
        console.print(f"{n:>8} {name} → {out / f'{name}.{format}'}")


@app.command()
@clear_errors
def report(experiment: ExperimentArg,
           out: Annotated[Path, typer.Option("--out", help="output directory")] = Path("report")) -> None:
    """Write the HTML report (index.html) and the task's CSV tables.

    Example: dialectbias report bn-qa.yaml --out report/
    """
    from dialectbias.report.build import build_report

    index = build_report(experiment, out)
    console.print(f"report: {index}")
