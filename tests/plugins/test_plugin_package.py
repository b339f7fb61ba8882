"""Another package adds a task and a provider through entry points, and an experiment file uses them.

The test follows docs/extending.md step by step: it writes a small plug-in distribution (`dialect-echo`: a task
`answer_length` and a provider `echo`, declared in its own pyproject.toml under
`[project.entry-points."dialectbias.tasks"]` and `"dialectbias.providers"`), installs it with pip into a
folder of its own (offline: `--no-index --no-build-isolation` with setuptools, a `dev` dependency), and runs
`dialectbias tasks`, `run` and `report` as subprocesses with that folder on PYTHONPATH. Nothing in
dialectbias is edited or registered by code: the entry points alone make the plug-in known."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "dialect-echo"
version = "0.1.0"
description = "A dialectbias plug-in: the answer_length task and the echo provider"
requires-python = ">=3.11"
dependencies = ["dialectbias"]

[project.entry-points."dialectbias.tasks"]
answer_length = "dialect_echo.task:AnswerLengthTask"

[project.entry-points."dialectbias.providers"]
echo = "dialect_echo.provider:EchoConfig"

[tool.setuptools.packages.find]
where = ["src"]
"""

PROVIDER = '''\
"""The `echo` provider: answers every request with `prefix` + the text of its last message."""

from __future__ import annotations

from typing import ClassVar, Literal

from dialectbias.data import message_text
from dialectbias.providers import ChatRequest, ChatResponse, ModelAPI, ModelConfig, ProviderCapabilities


class EchoConfig(ModelConfig):
    #: served like a remote model: no local tokenizer, no batching, a seed per request
    CAPABILITIES: ClassVar[ProviderCapabilities] = ProviderCapabilities()

    provider: Literal["echo"] = "echo"
    prefix: str = ""

    def client(self) -> ModelAPI:
        return EchoModel(self)


class EchoModel(ModelAPI):
    name = "echo"
    config: EchoConfig

    async def complete(self, request: ChatRequest) -> ChatResponse:
        text = message_text(request.messages[-1]["content"])
        return ChatResponse(output=self.config.prefix + text, finish_reason="stop", tokens_in=len(text),
                            tokens_out=len(self.config.prefix) + len(text))
'''

TASK = '''\
"""The `answer_length` task: every model answers every variant of every item; the report is the mean answer
length per model and variant."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
import pandas as pd

from dialectbias.providers import ModelConfig
from dialectbias.report import ReportContent, Section
from dialectbias.run import RequestSpec, Skipped, Stage
from dialectbias.store import Store
from dialectbias.tasks import Task

CSV = "answer_length.csv"


class AnswerLengthTask(Task):
    name = "answer_length"
    item_format = "JSONL: id, variants {standard: text, <dialect>: text}"

    def stages(self) -> list[Stage]:
        return [Stage("generate", self.exp.models, self._requests)]

    def _requests(self, store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        for item in store.iter_items():
            for variant, text in item.variants.items():
                yield RequestSpec(stage="generate", model=model, item_id=item.id, variant=variant,
                                  template="answer_length/answer", messages=[{"role": "user", "content": text}])

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        rows = [(r.model_id, r.variant, len(r.output)) for r in store.stage_results("generate")]
        table = (pd.DataFrame(rows, columns=["model", "variant", "chars"])
                 .groupby(["model", "variant"], as_index=False).chars.mean())
        table.to_csv(out_dir / CSV, index=False)
        return ReportContent(title="Answer length", sections=[
            Section(heading="Mean answer length", table=table, text=f"characters per answer ({CSV})")])
'''

ITEMS: list[dict[str, Any]] = [
    {"id": "q1", "variants": {"standard": "নদীর নাম কী?", "chittagong": "গাঙর নাম কী?"}},
    {"id": "q2", "variants": {"standard": "ঢাকা কোথায়?", "chittagong": "ঢাকা হডে?"}}]


def write_plugin(root: Path) -> Path:
    """The plug-in distribution's source tree (what docs/extending.md calls "your package")."""
    package = root / "src" / "dialect_echo"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (package / "__init__.py").write_text('"""dialectbias plug-in: answer_length and echo."""\n', encoding="utf-8")
    (package / "provider.py").write_text(PROVIDER, encoding="utf-8")
    (package / "task.py").write_text(TASK, encoding="utf-8")
    return root


def install(plugin: Path, site: Path) -> None:
    """pip install the plug-in into `site` (not into the venv), offline, with the venv's setuptools."""
    pytest.importorskip("setuptools", reason="building the plug-in offline needs setuptools (the dev extra)")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation",
                           "--no-deps", "--target", str(site), str(plugin)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert any(p.name.startswith("dialect_echo-0.1.0") and p.suffix == ".dist-info" for p in site.iterdir())


def write_experiment(directory: Path) -> Path:
    directory.mkdir()
    (directory / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                           encoding="utf-8")
    path = directory / "lengths.yaml"
    path.write_text(textwrap.dedent("""\
        name: lengths
        task: answer_length
        data: items.jsonl
        models:
          - {id: echo-1, provider: echo, model: echo, prefix: "উত্তর: "}
        """), encoding="utf-8")
    return path


def test_a_plug_in_package_adds_a_task_and_a_provider_by_entry_points(tmp_path: Path, qa: Any) -> None:
    site = tmp_path / "site"
    install(write_plugin(tmp_path / "dialect-echo"), site)
    experiment = write_experiment(tmp_path / "study")
    env = qa.subprocess_env(PYTHONPATH=os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]))

    listed = qa.run_subprocess("tasks", "answer_length", env=env)
    assert listed.exit_code == 0, listed.output
    assert "JSONL: id, variants" in listed.stdout

    run = qa.run_subprocess("run", experiment, env=env, timeout=120)
    assert run.exit_code == 0, run.output
    with sqlite3.connect(tmp_path / "study" / "lengths.sqlite") as conn:
        outputs = dict(conn.execute(
            "SELECT r.item_id || '/' || r.variant, s.output FROM requests r JOIN results s USING (request_id) "
            "WHERE r.model_id = 'echo-1' AND s.status = 'ok'").fetchall())
    assert outputs == {f"{i['id']}/{v}": f"উত্তর: {t}" for i in ITEMS for v, t in i["variants"].items()}

    out = tmp_path / "report"
    report = qa.run_subprocess("report", experiment, "--out", out, env=env, timeout=120)
    assert report.exit_code == 0, report.output
    with (out / "answer_length.csv").open(encoding="utf-8") as fh:
        table = {(r["model"], r["variant"]): float(r["chars"]) for r in csv.DictReader(fh)}
    expected = {v: sum(len("উত্তর: " + i["variants"][v]) for i in ITEMS) / len(ITEMS)
                for v in ("standard", "chittagong")}
    assert table == {("echo-1", v): pytest.approx(n) for v, n in expected.items()}
    assert "Mean answer length" in (out / "index.html").read_text(encoding="utf-8")

    # without the plug-in on the path the same file names the unknown provider, its line and the known ones
    bare = qa.run_subprocess("run", experiment)
    assert bare.exit_code == 1 and ("models.0.provider (line 5): unknown provider 'echo'; expected one of: hf, "
                                    "openai, vllm") in bare.stderr
