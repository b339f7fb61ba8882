"""The `dialectbias` command (typer). Errors are one clear message and a non-zero exit."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from dialectbias.cli._help import HelpApp
from dialectbias.errors import DialectBiasError

#: the `dialectbias` command; its commands are registered in one place, `dialectbias.cli._main`
app = HelpApp(name="dialectbias", help="Measure how language models treat speakers of regional dialects.")
console = Console()
err_console = Console(stderr=True)

EXIT_ERROR = 1
EXIT_FAILURES = 3  # the run finished but some requests failed after their retries
EXIT_EMPTY = 4  # a stage produced no usable result (no successful generation, scored judgment, accepted answer)
EXIT_INTERRUPTED = 130  # Ctrl-C: what completed is stored
EXIT_TERMINATED = 143  # SIGTERM (128 + 15): what completed is stored

F = TypeVar("F", bound=Callable[..., Any])

ExperimentArg = Annotated[Path, typer.Argument(help="experiment YAML file", show_default=False)]
TakeOverOpt = Annotated[bool, typer.Option(
    "--take-over", help="make the store this experiment's when another experiment file holds it: that "
    "experiment's rows become superseded (kept; its answers stay cached, so taking the store back costs no "
    "call) and its commands are refused until it takes the store back")]


class Terminated(KeyboardInterrupt):
    """The process got SIGTERM (`handle_sigterm`): unwound like Ctrl-C, so what completed is stored."""


def handle_sigterm() -> None:
    """Make SIGTERM unwind the command like Ctrl-C (`Terminated`), once: a second SIGTERM kills at once.
    The `dialectbias` entry point calls it; the Python API leaves the process's signals alone."""

    def terminate(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)


def clear_errors(fn: F) -> F:
    """Turn DialectBiasError (and Ctrl-C) into one message and an exit code, never a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DialectBiasError as exc:
            err_console.print("[bold red]error:[/]", escape(str(exc)), highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_ERROR) from None
        except (typer.Exit, typer.Abort, typer.TyperException):  # typer's own usage errors and exits
            raise
        except KeyboardInterrupt as exc:
            terminated = isinstance(exc, Terminated)
            err_console.print(f"interrupted{' (SIGTERM)' if terminated else ''}: completed requests are stored; "
                              "run again to resume", highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED) from None
        except sqlite3.OperationalError as exc:
            err_console.print("[bold red]error:[/] run store:", escape(str(exc)),
                              "(is another `dialectbias run` using the same store?)", highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_ERROR) from None
        except OSError as exc:
            err_console.print("[bold red]error:[/]", escape(f"{exc.filename or ''}: {exc.strerror or exc}"),
                              highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_ERROR) from None
        except Exception as exc:
            if os.environ.get("DIALECTBIAS_DEBUG"):
                raise
            err_console.print("[bold red]internal error:[/]", escape(f"{type(exc).__name__}: {exc}"),
                              "— please report it; set DIALECTBIAS_DEBUG=1 for the traceback",
                              highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_ERROR) from None

    return wrapper  # type: ignore[return-value]

