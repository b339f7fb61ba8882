"""How `--help` reads: plain text wrapped to the terminal (at most 80 columns), for every command.

Every typer app of the CLI is a `HelpApp`: its commands are `HelpCommand`s and their help is click's plain
formatter, not rich's panels (which keep a docstring's line breaks mid-sentence and print `<bool>` after
every flag). A command's docstring is written as prose and re-wrapped, with two conventions:

- a paragraph line ending with ``:`` starts a list: each following line of that paragraph is one entry
  (e.g. ``Exit codes:`` then one line per code), wrapped on its own with a hanging indent;
- a line starting with ``Example:`` stands on its own line(s), wrapped between words, an option kept on
  one line with its value.

The usage line names a required argument in capitals (``EXPERIMENT``), an optional one in brackets.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from typing import Any

import typer
from typer._click import Context, HelpFormatter
from typer.core import TyperArgument, TyperCommand

HANGING = "  "
_OPTION_VALUE = re.compile(r"(--[\w-]+) (?!-)(\S+)")


def help_blocks(text: str) -> list[list[tuple[str, bool]]]:
    """The paragraphs of a help text, each a list of (entry, hanging) to wrap on its own: prose lines are
    joined into one entry; list lines (after a line ending with ':') and `Example:` lines stay apart."""
    blocks: list[list[tuple[str, bool]]] = []
    for paragraph in text.split("\n\n"):
        entries: list[tuple[str, bool]] = []
        in_list = False
        for line in (raw.strip() for raw in paragraph.splitlines()):
            if not line:
                continue
            separate = in_list or line.startswith("Example:")
            if separate or not entries or entries[-1][1]:
                entries.append((line, separate))
            else:  # prose goes on: one entry, re-wrapped
                entries[-1] = (f"{entries[-1][0]} {line}", False)
            in_list = in_list or line.endswith(":")
        if entries:
            blocks.append(entries)
    return blocks


def wrap_help(text: str, width: int, indent: str = "") -> str:
    """`text` (a docstring) wrapped to `width` columns by `help_blocks`' rules, paragraphs kept apart."""
    out: list[str] = []
    for block in help_blocks(inspect.cleandoc(text)):
        lines: list[str] = []
        for entry, hanging in block:
            if entry.startswith("Example:"):  # an option stays on one line with its value
                entry = _OPTION_VALUE.sub("\\1\N{NO-BREAK SPACE}\\2", entry)
            lines += [line.replace("\N{NO-BREAK SPACE}", " ") for line in textwrap.wrap(
                entry, width, initial_indent=indent, subsequent_indent=indent + (HANGING if hanging else ""),
                break_long_words=False, break_on_hyphens=False)]
        out.append("\n".join(lines))
    return "\n\n".join(out)


class HelpCommand(TyperCommand):
    """A command whose help text is re-wrapped (`wrap_help`) and whose usage line has no `{argument}`."""

    def format_help_text(self, ctx: Context, formatter: HelpFormatter) -> None:
        text = inspect.cleandoc(self.help or "").partition("\f")[0]
        if text:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write(wrap_help(text, formatter.width, " " * formatter.current_indent) + "\n")

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.display_name_raw.upper()
                name = name if param.required else f"[{name}]"
                pieces.append(name + ("..." if param.nargs != 1 else ""))
            else:
                pieces += param.get_usage_pieces(ctx)
        return pieces


class HelpApp(typer.Typer):
    """A typer app with plain, wrapped help (`HelpCommand`) and no shell-completion options."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("rich_markup_mode", None)
        kwargs.setdefault("add_completion", False)
        kwargs.setdefault("no_args_is_help", True)
        super().__init__(**kwargs)

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None,
                **kwargs: Any) -> Any:
        return super().command(name, cls=cls or HelpCommand, **kwargs)


__all__ = ["HelpApp", "HelpCommand", "help_blocks", "wrap_help"]
