"""mkdocs hook: docs/cli.md's `<!-- cli-reference -->` marker becomes every command's `--help`, rendered from
the installed package (`dialectbias.cli._reference`), so the page cannot go stale."""

from __future__ import annotations

from typing import Any

from mkdocs.exceptions import PluginError

MARKER = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "cli.md":
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"docs/cli.md: the marker {MARKER} is missing (the CLI reference hook writes there)")
    try:
        from dialectbias.cli import app
        from dialectbias.cli._reference import cli_reference_markdown
    except ImportError as error:
        raise PluginError(f"docs/cli.md: the CLI reference needs dialectbias installed in this environment "
                          f"(pip install -e '.[docs]'): {error}") from error
    return markdown.replace(MARKER, cli_reference_markdown(app))
