"""Each command imports only the stacks it uses (issue 20.9): `--help` loads neither the report stack nor the
metrics, review-app, retrieval or provider stacks; a fully cached `run` and `status` load no report stack.

Every check runs the command in a fresh interpreter and reads `sys.modules` at its exit (how long the imports
take is measured by `benchmarks/startup.py`, not here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: loaded by no command that does not compute, plot or serve something with them
NEVER_FOR_HELP = ("pandas", "matplotlib", "numpy", "scipy", "sklearn", "pyarrow", "fastapi", "starlette", "uvicorn",
                  "faiss", "rank_bm25", "sentence_transformers", "torch", "transformers", "vllm", "peft", "sacrebleu",
                  "jiwer", "bert_score", "aiohttp", "httpx", "openai", "ray", "pydantic", "yaml", "jinja2")
#: the report, review-app, retrieval and local-model stacks, and the HTTP client: nothing a cached run sends
NEVER_FOR_CACHED_RUN = ("pandas", "matplotlib", "scipy", "sklearn", "pyarrow", "fastapi", "starlette", "uvicorn",
                        "faiss", "rank_bm25", "sentence_transformers", "torch", "transformers", "vllm", "peft",
                        "sacrebleu", "jiwer", "bert_score", "aiohttp", "httpx", "openai", "ray")

_PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
def dump():
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(sorted(sys.modules), fh)
atexit.register(dump)
{body}
"""
_COMMAND = "sys.argv[0] = 'dialectbias'\nfrom dialectbias.cli import main\nmain()"


def loaded(tmp_path: Path, body: str, *args: Any) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The top-level packages in `sys.modules` when a fresh interpreter running `body` exits."""
    out = tmp_path / "modules.json"
    out.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(body=body), str(out), *(str(a) for a in args)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert out.is_file(), proc.stderr
    return {m.partition(".")[0] for m in json.loads(out.read_text(encoding="utf-8"))}, proc


def test_help_loads_only_the_command_line(tmp_path: Path) -> None:
    modules, proc = loaded(tmp_path, _COMMAND, "--help")
    assert proc.returncode == 0 and "run" in proc.stdout, proc.stderr
    assert sorted(modules & set(NEVER_FOR_HELP)) == []


@pytest.mark.parametrize("command", [["run", "--help"], ["review", "--help"], ["index", "build", "--help"],
                                     ["train-translator", "--help"]], ids=" ".join)
def test_a_command_help_loads_only_the_command_line(tmp_path: Path, command: list[str]) -> None:
    modules, proc = loaded(tmp_path, _COMMAND, *command)
    assert proc.returncode == 0, proc.stderr
    assert sorted(modules & set(NEVER_FOR_HELP) - {"pydantic"}) == []  # typer's parameter parsing uses pydantic


def test_importing_the_cli_loads_only_the_command_line(tmp_path: Path) -> None:
    modules, _ = loaded(tmp_path, "import dialectbias.cli")
    assert sorted(modules & set(NEVER_FOR_HELP)) == []


def test_importing_the_python_api_loads_no_report_stack(tmp_path: Path) -> None:
    modules, _ = loaded(tmp_path, "import dialectbias.api")
    assert sorted(modules & set(NEVER_FOR_CACHED_RUN)) == []


def test_a_cached_run_and_status_load_no_report_stack(qa_server: Any, qa_project: Any, qa: Any,
                                                      tmp_path: Path) -> None:
    project = qa_project(qa_server.base_url, n_items=3)
    first = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert first.exit_code == 0, first.output
    sent = qa_server.stats()["chat_requests"]
    modules, proc = loaded(tmp_path, _COMMAND, "run", project.yaml_path, "--no-progress")
    assert proc.returncode == 0 and "calls 0" in proc.stdout, proc.stdout + proc.stderr
    assert qa_server.stats()["chat_requests"] == sent
    assert sorted(modules & set(NEVER_FOR_CACHED_RUN)) == []
    assert "numpy" not in modules  # qa_bias computes nothing numeric before its report
    modules, proc = loaded(tmp_path, _COMMAND, "status", project.yaml_path)
    assert proc.returncode == 0 and "judgments" in proc.stdout, proc.stdout + proc.stderr
    assert sorted(modules & {*NEVER_FOR_CACHED_RUN, "numpy"}) == []


def test_the_recipe_keys_in_train_translator_help_are_the_config_fields() -> None:
    """`dialectbias train-translator --help` lists the recipe keys without importing the training package."""
    from dialectbias.cli._train import RECIPE_KEYS
    from dialectbias.train import TranslatorTrainConfig

    assert tuple(TranslatorTrainConfig.model_fields) == RECIPE_KEYS
