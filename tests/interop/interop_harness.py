"""Running the real inspect_ai and lm-evaluation-harness on exported prompts against the test server (offline:
127.0.0.1 only, dummy keys), for the round-trip tests and for remaking the fixture logs (make_fixture_logs.py).

Imported by tests/e2e/test_interop_roundtrip.py and make_fixture_logs.py; needs the `interop` extra
(`.venv-interop` in CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: a minimal inspect_ai task over the exported dataset: the messages sent as they are, one generate() each
INSPECT_TASK = '''from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.solver import generate


@task
def dialectbias(dataset: str) -> Task:
    return Task(dataset=json_dataset(dataset), solver=generate())
'''


def _tool(name: str) -> str:
    """The console script of the interpreter running the tests (the interop venv's)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError(f"{name} is not installed next to {sys.executable} (pip install -e '.[interop]')")
    return found


def offline_env(base_url: str) -> dict[str, str]:
    """Environment for the harnesses: the test server as the only endpoint, dummy keys, no hub."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DIALECTBIAS_", "OPENAI_", "INSPECT_"))}
    env.update({"TESTSERVER_BASE_URL": base_url, "TESTSERVER_API_KEY": "test-key", "OPENAI_API_KEY": "test-key",
                "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "INSPECT_DISPLAY": "plain", "NO_COLOR": "1", "COLUMNS": "120"})
    return env


def run_inspect(dataset: Path, base_url: str, model: str, log_dir: Path, *, log_format: str = "eval",
                max_tokens: int = 512, extra: tuple[str, ...] = ()) -> Path:
    """`inspect eval` of the exported dataset with model `model` on the test server; returns the log file."""
    task_file = log_dir / "dialectbias_task.py"
    log_dir.mkdir(parents=True, exist_ok=True)
    task_file.write_text(INSPECT_TASK, encoding="utf-8")
    before = set(log_dir.glob(f"*.{log_format}"))
    proc = subprocess.run([_tool("inspect"), "eval", task_file.name, "-T", f"dataset={dataset}",
                           "--model", f"openai-api/testserver/{model}", "--temperature", "0",
                           "--max-tokens", str(max_tokens), "--log-dir", str(log_dir), "--log-format", log_format,
                           "--display", "plain", *extra],
                          env=offline_env(base_url), capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, cwd=log_dir)
    logs = sorted(set(log_dir.glob(f"*.{log_format}")) - before)
    if not logs:
        raise RuntimeError(f"inspect eval wrote no log (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return logs[-1]


def run_lm_eval(task_dir: Path, task_name: str, base_url: str, model: str, out_dir: Path) -> Path:
    """`lm_eval --log_samples` on the exported task folder with `local-chat-completions` on the test server
    (no tokenizer: tokenizer_backend=None, tokenized_requests=False); returns the samples JSONL."""
    args = (f"model={model},base_url={base_url}/chat/completions,tokenizer_backend=None,"
            "tokenized_requests=False,num_concurrent=1,max_retries=1")
    proc = subprocess.run([_tool("lm_eval"), "--model", "local-chat-completions", "--model_args", args,
                           "--include_path", str(task_dir), "--tasks", task_name, "--apply_chat_template",
                           "--log_samples", "--output_path", str(out_dir)],
                          env=offline_env(base_url), capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, cwd=out_dir.parent)
    samples = sorted(out_dir.rglob(f"samples_{task_name}_*.jsonl"))
    if proc.returncode != 0 or not samples:
        raise RuntimeError(f"lm_eval failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return samples[-1]
