"""The command-line reference of the documentation site (docs/cli.md): every command's `--help`, as an
80-column terminal prints it, rendered from the installed CLI when the site is built (the mkdocs hook
docs/hooks/cli_reference.py), so the page cannot differ from the commands."""

from __future__ import annotations

import re
from collections.abc import Iterator

import typer
import typer.main
from typer._click import Command, Context

#: `--help` of a terminal 80 columns wide (click wraps at the terminal's width less 2)
HELP_WIDTH = 78
PROGRAM = "dialectbias"


def commands(app: typer.Typer) -> Iterator[tuple[str, Command, Context]]:
    """Every command and command group under `app`, depth first in `--help`'s order, with its full name
    (`dialectbias review export`) and the context its help is rendered in."""
    root = typer.main.get_command(app)
    yield from _walk(root, Context(root, info_name=PROGRAM, terminal_width=HELP_WIDTH))


def _walk(command: Command, ctx: Context) -> Iterator[tuple[str, Command, Context]]:
    yield ctx.command_path, command, ctx
    list_commands = getattr(command, "list_commands", None)
    if list_commands is None:
        return
    for name in list_commands(ctx):
        sub = command.get_command(ctx, name)  # type: ignore[attr-defined]
        if sub is not None and not sub.hidden:
            yield from _walk(sub, Context(sub, info_name=name, parent=ctx, terminal_width=HELP_WIDTH))


def anchor(path: str) -> str:
    """The page anchor of a command's section: `dialectbias review export` → `dialectbias-review-export`
    (what mkdocs' toc extension makes of the heading)."""
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


def cli_reference_markdown(app: typer.Typer) -> str:
    """Markdown for every command and command group of `app`: a section per command (a heading with a stable
    anchor, `anchor(path)`) holding its `--help` output verbatim."""
    lines: list[str] = []
    for path, command, ctx in commands(app):
        lines += ["", f"### `{path}` {{#{anchor(path)}}}", "", "```text", command.get_help(ctx), "```"]
    return "\n".join(lines).lstrip("\n") + "\n"
