"""Shared fixtures: Bengali QA items, experiment files, the test server and a CLI runner."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

# the suite never reaches a hub: models are built in the tests or ship inside packages
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RESPONDER = "dialectbias.testing:qa_responder"
DIALECTS = ("chittagong", "sylhet")
MODELS = ("model-a", "model-b")
JUDGE = "judge-1"
# every question starts with its item's place name, so a fault rule can match one item's prompts:
# "প্রশ্ন: <place>" only in generation prompts, "STANDARD QUESTION:\n<place>" only in judge prompts
PLACES = ("ঢাকা", "খুলনা", "সিলেট", "রাজশাহী", "বরিশাল", "রংপুর", "কুমিল্লা", "যশোর", "দিনাজপুর", "পাবনা",
          "ফরিদপুর", "গাজীপুর", "নরসিংদী", "হবিগঞ্জ", "কিশোরগঞ্জ", "টাঙ্গাইল", "নাটোর", "মাগুরা", "ভোলা",
          "ফেনী")


def qa_item(i: int) -> dict[str, Any]:
    place = PLACES[i]
    return {"id": f"q{i + 1:02d}", "domain": "geography", "question_type": "factual",
            "variants": {"standard": f"{place} জেলার প্রধান নদীর নাম কী?",
                         "chittagong": f"{place} জিলার বড় গাঙর নাম কী?",
                         "sylhet": f"{place} জিলার বড় গাঙ্গর নাম কিতা?"},
            "gold": "নদী"}


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def gen_match(place: str) -> str:
    """Fault-rule `match` hitting the generation prompts (every variant, both models) of one item."""
    return f"প্রশ্ন: {place}"


def judge_match(place: str) -> str:
    """Fault-rule `match` hitting the judge prompts (both models, both dialects) of one item."""
    return f"STANDARD QUESTION:\n{place}"


@dataclass
class QAProject:
    dir: Path
    yaml_path: Path
    config: dict[str, Any]

    @property
    def store_path(self) -> Path:
        return self.dir / f"{self.config['name']}.sqlite"

    def rewrite(self, **changes: Any) -> None:
        self.config.update(changes)
        self.yaml_path.write_text(yaml.safe_dump(self.config, allow_unicode=True, sort_keys=False),
                                  encoding="utf-8")


def make_project(directory: Path, base_url: str, *, n_items: int = 6, name: str = "bnqa",
                 model: dict[str, Any] | None = None, judge: dict[str, Any] | None = None,
                 items: Sequence[dict[str, Any]] | None = None) -> QAProject:
    """An experiment directory: items.jsonl and <name>.yaml (qa_bias, two models, one primary judge)."""
    directory.mkdir(parents=True, exist_ok=True)
    write_jsonl(directory / "items.jsonl",
                items if items is not None else [qa_item(i) for i in range(n_items)])
    common = {"provider": "openai", "base_url": base_url, "max_concurrency": 4, "max_retries": 3,
              "timeout_s": 10}
    config = {
        "name": name, "task": "qa_bias", "data": "items.jsonl",
        "models": [{"id": m, "model": m, **common, **(model or {})} for m in MODELS],
        "judges": [{"id": JUDGE, "model": "judge-model", "role": "primary", **common, **(judge or {})}],
    }
    project = QAProject(directory, directory / f"{name}.yaml", config)
    project.rewrite()
    return project


@pytest.fixture
def qa_project(tmp_path: Path) -> Callable[..., QAProject]:
    """Factory: qa_project(base_url, **make_project options) in a fresh directory."""
    counter = iter(range(1000))

    def make(base_url: str, **options: Any) -> QAProject:
        return make_project(tmp_path / f"exp{next(counter)}", base_url, **options)

    return make


# -- the test server ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def session_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder=RESPONDER) as server:
        yield server


@pytest.fixture
def qa_server(session_server: Any) -> Any:
    """The shared qa_responder server with no faults and zeroed counters (set_faults as needed)."""
    session_server.set_faults(None)
    session_server.reset_stats()
    yield session_server
    session_server.set_faults(None)


# -- the command line ----------------------------------------------------------------------------


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class Cli:
    """`dialectbias …` in-process (typer CliRunner) with wide, colourless consoles."""

    def __call__(self, *args: Any, env: dict[str, str | None] | None = None) -> CliResult:
        from rich.console import Console
        from typer.testing import CliRunner

        from dialectbias.cli import _app, _commands, _data, _quickstart, _review

        out, err = Console(width=250, color_system=None), Console(stderr=True, width=250, color_system=None)
        with contextlib.ExitStack() as stack:
            for module in (_app, _commands, _data, _quickstart, _review):
                for name, console in (("console", out), ("err_console", err)):
                    if hasattr(module, name):
                        stack.enter_context(mock.patch.object(module, name, console))
            result = CliRunner().invoke(_app.app, [str(a) for a in args], env=env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="session")
def cli() -> Cli:
    return Cli()


def dialectbias_command() -> list[str]:
    """The installed console script (next to the interpreter), else the same entry point via -c."""
    script = shutil.which("dialectbias", path=str(Path(sys.executable).parent)) or shutil.which("dialectbias")
    if script:
        return [script]
    return [sys.executable, "-c", "from dialectbias.cli import main; main()"]


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALECTBIAS_")}
    env.update({"COLUMNS": "250", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1", **extra})
    return env


def run_subprocess(*args: Any, env: dict[str, str] | None = None, timeout: float = 60) -> CliResult:
    proc = subprocess.run([*dialectbias_command(), *(str(a) for a in args)], capture_output=True, text=True,
                          env=env or subprocess_env(), timeout=timeout, stdin=subprocess.DEVNULL)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


_HELPERS = sys.modules[__name__]


@pytest.fixture(scope="session")
def qa() -> Any:
    """This module's helpers (qa_item, make_project, gen_match, judge_match, run_subprocess, …)."""
    return _HELPERS


# -- a clean reference run ---------------------------------------------------------------------


@dataclass
class CleanRun:
    project: QAProject
    report_dir: Path
    export_dir: Path

    @property
    def matrix_csv(self) -> str:
        return (self.report_dir / "qa_bias_model_by_dialect.csv").read_text(encoding="utf-8")

    def judgments(self) -> list[dict[str, Any]]:
        return read_jsonl(self.export_dir / "judgments.jsonl")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session")
def clean_run(session_server: Any, cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> CleanRun:
    """The 6-item experiment run once without faults: its report and JSONL export."""
    session_server.set_faults(None)
    root = tmp_path_factory.mktemp("clean")
    project = make_project(root / "exp", session_server.base_url)
    for args in (("run", project.yaml_path, "--no-progress"), ("report", project.yaml_path, "--out",
                                                               root / "report"),
                 ("export", project.yaml_path, "--format", "jsonl", "--out", root / "export")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    return CleanRun(project, root / "report", root / "export")


class _Counts(dict):
    """A block's `label value` pairs: a count the folded output leaves out (zero-only) reads as "0"."""

    def __missing__(self, key: str) -> str:
        return "0"


_BLOCK_TITLE = re.compile(r"^(\S+) · (\S+)$")
_PAIR = re.compile(r"^(?P<label>[^\d\s].*?) (?P<value>[\d,./]+)$")


def parse_blocks(text: str) -> list[dict[str, str]]:
    """The folded stage × model blocks of `run` and `status` (a `stage · model` line, then indented
    `label value · label value` lines) as {stage, model, label: value}; omitted counts are "0"."""
    rows: list[dict[str, str]] = []
    for line in text.splitlines():
        title = _BLOCK_TITLE.match(line)
        if title:
            rows.append(_Counts(stage=title[1], model=title[2]))
        elif line.startswith("  ") and rows and not line.startswith("   "):
            for piece in line.strip().split(" · "):
                pair = _PAIR.match(piece)
                if pair:
                    rows[-1][pair["label"]] = pair["value"].replace(",", "")
        elif line.strip():
            rows.append(_Counts(stage=None))  # anything else ends the block
    return [r for r in rows if r["stage"] is not None]


def parse_table(text: str) -> list[dict[str, str]]:
    """Rows of the first rich table in `text` as {header: cell} (box-drawing borders); without a table,
    the folded blocks (`parse_blocks`)."""
    if "┃" not in text:
        return parse_blocks(text)
    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("┃") and header is None:
            header = [c.strip() for c in line.strip("┃").split("┃")]
        elif line.startswith("│") and header is not None:
            rows.append(dict(zip(header, [c.strip() for c in line.strip("│").split("│")], strict=True)))
        elif line.startswith("└") and rows:
            break
    return rows


def answer_prompt(question: str, variant: str) -> str:
    """The rendered generation prompt (for fault rules that must hit exactly one request)."""
    from dialectbias.tasks._templates import render

    return render("qa_bias/answer", None, question=question, variant=variant)
