"""`dialectbias plan` (and the plan `run` prints and confirms before its first call)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
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


def plan_table(rows: list, title: str) -> Table:
    from dialectbias.run._plan import total_cost

    table = Table(title=title, title_justify="left")
    for name in ("stage", "model", "requests", "cached", "tokens in", "tokens out", "cost", "seconds"):
        table.add_column(name, justify="left" if name in ("stage", "model") else "right")
    for r in rows:
        table.add_row(r.stage, r.model_id, f"{r.requests:,}", f"{r.cached:,}", f"{r.tokens_in:,}",
                      f"{r.tokens_out:,}", "—" if r.cost is None else f"{r.cost:,.4f}", f"{r.seconds:,.0f}")
    total = total_cost(rows)
    table.caption = (f"total cost {'— (no prices)' if total is None else f'{total:,.4f}'} · "
                     f"{sum(r.seconds for r in rows):,.0f} s if the stages run one after the other")
    table.caption_justify = "left"
    return table


def _bases(rows: list, out: Console) -> None:
    seen: set[str] = set()
    for r in rows:
        line = f"{r.model_id}: tokens in by {r.basis['tokens_in']}; tokens out: {r.basis['tokens_out']}; " \
               f"seconds: {r.basis['seconds']}"
        if r.model_id not in seen:
            seen.add(r.model_id)
            wrapped = textwrap.fill(line, out.width, initial_indent="  ", subsequent_indent="    ",
                                    break_long_words=False, break_on_hyphens=False)
            out.print(wrapped, highlight=False, markup=False, soft_wrap=True)


@clear_errors
def plan(experiment: ExperimentArg,
         as_json: Annotated[bool, typer.Option("--json", help="print a JSON list (stage, model_id, requests, "
                                               "cached, tokens_in, tokens_out, cost, seconds)")] = False,
         take_over: TakeOverOpt = False) -> None:
    """What `run` would send, before any call: per stage and model the requests, how many need no call
    (stored or cached), estimated input/output tokens (the model's tokenizer when local, characters / 4
    otherwise), cost (null without prices) and seconds (measured latency, or an assumed 50 tokens/s, at the
    configured concurrency). Later stages are estimated from placeholder answers of the expected length.

    Example: dialectbias plan bn-qa.yaml --json
    """
    rows = _plan_rows(experiment, take_over)
    if as_json:
        sys.stdout.write(json.dumps([r.as_json() for r in rows], ensure_ascii=False, indent=2) + "\n")
        return
    console.print(plan_table(rows, f"plan of {experiment}"))
    _bases(rows, console)


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
        err_console.print(plan_table(rows, "plan"))
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
