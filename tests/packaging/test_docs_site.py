"""The documentation site (mkdocs.yml, issue 22 item 5): every docs/*.md page is in `nav` and every `nav` entry
exists, so a new page cannot be forgotten; the README keeps what .ci/run and the first-study test read and the
snippet sections the site includes; the CLI reference page is every command's `--help` as a terminal prints
it; and, where the `docs` extra is installed, the site builds with --strict (CI's docs step always builds it)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.cli import app
from dialectbias.cli._reference import anchor, cli_reference_markdown, commands

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold `!!python/name:` tags (material's emoji, superfences' formatters): read them as text."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: suffix)


def mkdocs_config() -> dict[str, Any]:
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def nav_pages(entries: Any) -> Iterator[str]:
    """Every page path of a mkdocs `nav` (strings, {title: page} and {title: [section]} entries)."""
    if isinstance(entries, str):
        yield entries
    elif isinstance(entries, list):
        for entry in entries:
            yield from nav_pages(entry)
    elif isinstance(entries, dict):
        for value in entries.values():
            yield from nav_pages(value)


def test_every_docs_page_is_in_nav_and_every_nav_entry_exists() -> None:
    config = mkdocs_config()
    assert config["docs_dir"] == "docs" and config["strict"] is True
    nav = list(nav_pages(config["nav"]))
    excluded = [line.strip().rstrip("/") for line in config.get("exclude_docs", "").splitlines() if line.strip()]
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
             if not any(p.relative_to(DOCS).as_posix().startswith(f"{e}/") for e in excluded)}
    missing = sorted(pages - set(nav))
    assert not missing, f"docs pages not in mkdocs.yml's nav (add each where it belongs): {missing}"
    dangling = sorted(set(nav) - pages)
    assert not dangling, f"mkdocs.yml's nav names pages that do not exist under docs/: {dangling}"
    assert len(nav) == len(set(nav)), "a page is listed twice in mkdocs.yml's nav"


def test_the_nav_test_sees_a_forgotten_page(tmp_path: Path) -> None:
    nav = [{"Home": "index.md"}, {"Guide": ["a.md", {"B": "sub/b.md"}]}]
    assert list(nav_pages(nav)) == ["index.md", "a.md", "sub/b.md"]


def test_readme_keeps_the_markers_ci_and_the_site_read() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # .ci/run's awk: the first ```bash block after the marker is CI's test command
    for marker in ("<!-- quickstart-command -->", "<!-- test-command -->"):
        block = re.search(re.escape(marker) + r"\n```bash\n(.+?)\n```", readme, re.DOTALL)
        assert block and "pip install" in block.group(1), marker
    # the snippet sections docs/index.md and docs/getting-started.md include (pymdownx.snippets)
    for section in ("intro", "setup", "first-study"):
        start, end = f"<!-- --8<-- [start:{section}] -->", f"<!-- --8<-- [end:{section}] -->"
        assert readme.count(start) == 1 and readme.count(end) == 1 and readme.index(start) < readme.index(end)
    study = readme.split("<!-- --8<-- [start:first-study] -->")[1].split("<!-- --8<-- [end:first-study] -->")[0]
    assert study.count("<!-- first-study -->") == 5 and "<!-- test-command -->" not in study
    assert len(readme.splitlines()) <= 170, "the README is the front page: the reference belongs in docs/"


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#\s]+)(?:#[^)]*)?\)", readme)
    assert targets
    assert [t for t in targets if not (ROOT / t).exists()] == []


def help_text(*args: str) -> str:
    """`dialectbias ARGS --help` as a terminal 80 columns wide prints it (the installed command, run apart)."""
    program = shutil.which("dialectbias", path=str(Path(sys.executable).parent))
    if program is None:
        pytest.skip("the `dialectbias` command is not installed next to this interpreter (pip install -e .)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALECTBIAS_")} | {"COLUMNS": "80",
                                                                                       "NO_COLOR": "1"}
    done = subprocess.run([program, *args, "--help"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cli_reference_is_every_commands_help_as_an_80_column_terminal_prints_it() -> None:
    page = cli_reference_markdown(app)
    found = {path: command for path, command, _ in commands(app)}
    assert {"dialectbias", "dialectbias run", "dialectbias review export", "dialectbias models convert-gguf",
            "dialectbias build questions", "dialectbias index build"} <= set(found)
    for path in ("dialectbias review export", "dialectbias run", "dialectbias index query"):
        text = help_text(*path.split()[1:]).rstrip("\n")
        assert f"### `{path}` {{#{anchor(path)}}}\n\n```text\n{text}\n```" in page, path
    # every command and group has its section, in `--help`'s order
    assert len(found) >= 30
    positions = [page.index(f"### `{path}` {{#{anchor(path)}}}\n") for path in found]
    assert positions == sorted(positions)
    blocks = [part.split("```")[0] for part in page.split("```text")[1:]]
    assert len(blocks) == len(found)
    assert max(len(line) for block in blocks for line in block.splitlines()) <= 80


def test_anchor_is_what_the_heading_is_linked_as() -> None:
    assert anchor("dialectbias review add-annotator") == "dialectbias-review-add-annotator"
    assert anchor("dialectbias train-dialect-id") == "dialectbias-train-dialect-id"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
                    reason="the `docs` extra is not installed (pip install -e '.[docs]'); CI's docs step builds "
                           "the site with --strict")
def test_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    cli_page = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    assert 'id="dialectbias-review-export"' in cli_page and "&lt;!-- cli-reference --&gt;" not in cli_page
    start = (tmp_path / "site" / "getting-started" / "index.html").read_text(encoding="utf-8")
    assert "dialectbias.testing.server" in start and "--8&lt;--" not in start
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="dialectbias.api.run_experiment"' in api
