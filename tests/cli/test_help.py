"""Every command's `--help` reads at 80 columns (issue 19.13): no line wider than the terminal, no `<bool>`
after a flag, no `{argument}` in the usage line, and the docstring's prose re-wrapped (no line broken
where the next word would have fitted), lists and examples kept on lines of their own."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from dialectbias.cli._help import help_blocks, wrap_help
from dialectbias.cli._main import app

WIDTH = 80


def command_paths() -> list[list[str]]:
    """The path of every command and group of the CLI, the root first."""
    paths: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        paths.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return paths


PATHS = command_paths()


def render_help(path: list[str]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    return result.stdout


def prose_lines(text: str) -> list[list[str]]:
    """The paragraphs of the help text proper (between the usage line and the first section heading)."""
    lines = text.splitlines()
    body: list[str] = []
    for line in lines[1:]:
        if re.match(r"^(Arguments|Options|Commands):$", line):
            break
        body.append(line)
    return [p.splitlines() for p in "\n".join(body).strip("\n").split("\n\n") if p.strip()]


def test_every_command_is_covered() -> None:
    names = {" ".join(p) for p in PATHS}
    assert {"", "run", "quickstart", "build", "build pairs", "import-generations", "review export",
            "index query", "models convert-gguf"} <= names
    assert len(names) >= 28


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "dialectbias")
def test_help_fits_80_columns_without_type_noise(path: list[str]) -> None:
    text = render_help(path)
    assert text.startswith("Usage: dialectbias"), text
    too_wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not too_wide, too_wide
    assert "<bool>" not in text
    usage = text.splitlines()[0]
    assert "{" not in usage and "}" not in usage, usage


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "dialectbias")
def test_help_prose_is_rewrapped_not_broken_where_the_docstring_was(path: list[str]) -> None:
    text = render_help(path)
    for paragraph in prose_lines(text):
        listing = False
        for line, following in itertools.pairwise(paragraph):
            listing = listing or line.endswith(":")
            stripped = following.strip()
            if listing or stripped.startswith("Example:") or following.startswith(" " * 4):
                continue  # a list entry, an example, or a wrapped entry's hanging continuation
            next_word = stripped.split()[0]
            assert len(line) + 1 + len(next_word) > WIDTH - 2, (
                f"{' '.join(path)}: the line below ends early (`{next_word}` fits):\n{line}\n{following}")


def test_lists_and_examples_keep_their_own_lines() -> None:
    doc = """Do a thing.

    Some prose
    broken here.

    Exit codes:
    0 done;
    1 error, with a long explanation that must wrap onto a second line with a hanging indent here.

    Example: dialectbias run exp.yaml
    Example: dialectbias run other.yaml
    """
    assert help_blocks("Some prose\nbroken here.\n\nCodes:\n0 done;\n1 error") == [
        [("Some prose broken here.", False)], [("Codes:", False), ("0 done;", True), ("1 error", True)]]
    wrapped = wrap_help(doc, 60, "  ").splitlines()
    assert wrapped[2] == "  Some prose broken here."
    assert wrapped[4:8] == ["  Exit codes:", "  0 done;",
                            "  1 error, with a long explanation that must wrap onto a",
                            "    second line with a hanging indent here."]
    assert wrapped[-2:] == ["  Example: dialectbias run exp.yaml", "  Example: dialectbias run other.yaml"]


def test_an_example_keeps_each_option_with_its_value() -> None:
    wrapped = wrap_help("Example: dialectbias review export bn-translate.yaml --queue translation_score --out x.csv",
                        60).splitlines()
    assert wrapped == ["Example: dialectbias review export bn-translate.yaml",
                       "  --queue translation_score --out x.csv"]


def test_run_help_lists_its_exit_codes_one_per_line() -> None:
    text = render_help(["run"])
    codes = [line.strip().split()[0] for line in text.splitlines() if re.match(r"^  (0|1|3|4|130) ", line)]
    assert codes == ["0", "1", "3", "4", "130"], text
