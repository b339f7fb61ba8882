"""`dialectbias plan` (and the plan `run` prints and confirms before its first call)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from dialectbias.cli._app import ExperimentArg, TakeOverOpt, clear_errors, console, err_console
from dialectbias.errors import ConfigError

if TYPE_CHECKING:
    from dialectbias.config import Experiment
    from dialectbias.tasks import Task

#: `run` asks before spending more than this (in the currency of the models' prices); also
#: DIALECTBIAS_CONFIRM_ABOVE
DEFAULT_CONFIRM_ABOVE = 10.0


def _plan_rows(experiment: Path, take_over: bool) -> list:  # list[PlanRow]
    from dialectbias.api import open_experiment
    from dialectbias.run._plan import make_plan

    # the plan reads a copy of the store, never writes it
    exp, task = open_experiment(experiment, take_over=take_over, rescore=False)
    return make_plan(exp, task)


#: the widest the plan prints, whatever the terminal (issue 24: its table was cut at 80 columns)
MAX_WIDTH = 80


def count(n: float) -> str:
    """A count in at most 6 characters: 9,999 · 12.3k · 123k · 1.2M · 3.4G."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= 10 * size if unit == "k" else n >= size:
            value = n / size
            return f"{value:.1f}{unit}" if value < 100 else f"{value:,.0f}{unit}"
    return f"{n:,.0f}"


def duration(seconds: float) -> str:
    """Seconds in at most 7 characters: 66 s · 12 min · 3 h 05 · 2.5 d."""
    if seconds < 100:
        return f"{seconds:.0f} s"
    if seconds < 6000:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400 * 2:
        hours, rest = divmod(round(seconds / 60), 60)
        return f"{hours} h {rest:02d}"
    days = seconds / 86400
    return f"{days:.1f} d" if days < 100 else f"{count(days)} d"


def money(cost: float | None) -> str:
    if cost is None:
        return "—"
    return f"{cost:.4f}" if cost < 10 else f"{cost:,.2f}" if cost < 10_000 else count(cost)


def plan_table(rows: list, title: str) -> Table:
    """The plan as a table that fits 80 columns: counts abbreviated (`count`), seconds as a duration, a long
    model id wrapped in its column; `basis` says what the time rests on (measured / server / assumed)."""
    from dialectbias.run._plan import total_cost, total_seconds

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0))
    table.add_column("stage", overflow="fold")
    table.add_column("model", overflow="fold", ratio=1, min_width=8)
    for name in ("requests", "cached", "tokens\nin", "tokens\nout", "cost", "time", "basis"):
        table.add_column(name, justify="left" if name == "basis" else "right", no_wrap=True)
    for r in rows:
        table.add_row(r.stage, r.model_id, count(r.requests), count(r.cached), count(r.tokens_in),
                      count(r.tokens_out), money(r.cost), duration(r.seconds), r.basis.get("seconds", ""))
    total = total_cost(rows)
    table.caption = (f"total cost {'— (no prices)' if total is None else money(total)} · "
                     f"{duration(total_seconds(rows))} if the stages run one after the other")
    table.caption_justify = "left"
    return table


def _print_wrapped(out: Console, text: str, first: str = "  ", rest: str = "    ") -> None:
    width = min(out.width, MAX_WIDTH)
    out.print(textwrap.fill(text, width, initial_indent=first, subsequent_indent=rest, break_long_words=True,
                            break_on_hyphens=False), highlight=False, markup=False, soft_wrap=True)


def _bases(rows: list, out: Console) -> None:
    """One note per model: what its tokens and seconds rest on; then the warnings (context windows)."""
    seen: set[str] = set()
    for r in rows:
        if r.model_id not in seen:
            seen.add(r.model_id)
            _print_wrapped(out, f"{r.model_id}: tokens in by {r.notes['tokens_in']}; tokens out: "
                                f"{r.notes['tokens_out']}; seconds: {r.notes['seconds']}")
    for r in rows:
        for warning in r.warnings:
            _print_wrapped(out, f"warning: {warning}", first="", rest="  ")


def print_plan(rows: list, title: str, out: Console) -> None:
    """The table, the notes and the warnings, at most `MAX_WIDTH` columns wide."""
    width = out.width
    out.width = min(width, MAX_WIDTH)
    try:
        out.print(plan_table(rows, title))
        _bases(rows, out)
    finally:
        out.width = width


@clear_errors
def plan(experiment: ExperimentArg,
         as_json: Annotated[bool, typer.Option("--json", help="print a JSON list (stage, model_id, requests, "
                                               "cached, tokens_in, tokens_out, cost, seconds, then basis, "
                                               "slots, context_window, too_long, largest_prompt, "
                                               "warnings)")] = False,
         take_over: TakeOverOpt = False) -> None:
    """What `run` would send, before any call: per stage and model the requests, how many need no call
    (stored or cached), estimated input/output tokens (a real tokenizer where there is one, else an
    estimate from characters), cost (null without prices) and time, labelled by what it rests on:
    measured (the store's earlier calls: their latency and how many were in flight), server (the server's
    parallel slots) or assumed (the configured slots at 50 tokens/s). Warns of requests that would not fit
    the model's context window. Asks a served model's server only cheap GETs (/v1/models, /props), never a
    model call. Later stages are estimated from placeholder answers of the expected length.

    Example: dialectbias plan bn-qa.yaml --json
    """
    rows = _plan_rows(experiment, take_over)
    if as_json:
        sys.stdout.write(json.dumps([r.as_json() for r in rows], ensure_ascii=False, indent=2) + "\n")
        return
    print_plan(rows, f"plan of {experiment}", console)


def confirm_plan(exp: Experiment, task: Task, yes: bool, confirm_above: float | None, *,
                 show: bool | None = None) -> None:
    """Print the plan of the experiment about to run (to stderr, before the run's own output) and, when its
    total cost is above the threshold, ask for confirmation (ConfigError without a terminal: pass --yes).

    `show` None: print it when a model has prices (without prices there is no cost to confirm, and the
    run's output stays as it was); False: never. Without prices and without --plan nothing is computed."""
    from dialectbias.run._plan import make_plan, total_cost

    priced = any(m.price_in_per_mtok is not None or m.price_out_per_mtok is not None for m in exp.all_models())
    show = priced if show is None else show
    if not show and (yes or not priced):
        return
    rows = make_plan(exp, task)
    if show:
        print_plan(rows, "plan", err_console)
    threshold = confirm_above
    if threshold is None:
        env = os.environ.get("DIALECTBIAS_CONFIRM_ABOVE")
        try:
            threshold = float(env) if env else DEFAULT_CONFIRM_ABOVE
        except ValueError:
            raise ConfigError(f"DIALECTBIAS_CONFIRM_ABOVE={env!r} must be a number") from None
    total = total_cost(rows)
    if yes or total is None or total <= threshold:
        return
    question = f"the plan costs about {total:,.4f}, above {threshold:g}: run it?"
    if not sys.stdin.isatty():
        raise ConfigError(f"{question.rstrip('?').replace(': run it', '')} — pass --yes to run without asking "
                          "(or raise --confirm-above)")
    if not typer.confirm(question, default=False, err=True):
        err_console.print("not run: nothing was sent")
        raise typer.Exit(1)
