"""README "Your first study": the marked bash blocks, run verbatim in an empty directory, do what they say."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import dialectbias

README = Path(__file__).resolve().parents[2] / "README.md"
MARK = re.compile(r"<!-- first-study -->\s*\n```bash\n(.*?)\n```", re.DOTALL)


def first_study_blocks() -> list[str]:
    return MARK.findall(README.read_text(encoding="utf-8"))


def test_the_walk_through_has_every_step() -> None:
    script = "\n".join(first_study_blocks())
    for step in ("python -m dialectbias.testing.server --port 0", "dialectbias run ", "dialectbias report ",
                 "dialectbias review export ", "dialectbias review import ", "dialectbias status ", "kill "):
        assert step in script, step


def env_for_the_readme() -> dict[str, str]:
    """A user's shell after the README's install: `python` and `dialectbias` of this interpreter's
    environment, running the package under test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALECTBIAS_")}
    src = str(Path(dialectbias.__file__).resolve().parents[1])
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
                "PYTHONPATH": src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
                "NO_COLOR": "1", "COLUMNS": "80", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    return env


def test_block_1_stops_waiting_when_the_server_dies(tmp_path: Path) -> None:
    # a `python` whose test server exits at once (as a missing package or a wrong responder would): block 1
    # must not wait for server.json forever
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python").write_text(f'#!/bin/sh\nif [ "$1 $2" = "-m dialectbias.testing.server" ]; then\n'
                                 f'  echo "No module named dialectbias" >&2; exit 1\nfi\nexec {sys.executable} "$@"\n',
                                 encoding="utf-8")
    (shim / "python").chmod(0o755)
    env = env_for_the_readme()
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    work = tmp_path / "study"
    work.mkdir()
    # as typed into an interactive shell: no `-e`, so a failing `kill -0` alone would loop forever
    result = subprocess.run(["bash", "-c", first_study_blocks()[0]], cwd=work, env=env, capture_output=True,
                            text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert "the test server stopped (its error is above)" in result.stdout, result.stdout + result.stderr
    assert "No module named dialectbias" in result.stderr


def test_the_walk_through_says_to_activate_the_set_up_venv() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split("## Your first study")[1].split("**1.")[0].split())
    assert "`. <the folder you set up in>/.venv/bin/activate`" in text


def port_is_closed(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_readme_first_study_runs_verbatim(tmp_path: Path) -> None:
    if not (Path(sys.executable).parent / "dialectbias").exists():
        pytest.skip("the `dialectbias` command is not installed next to this interpreter (pip install -e .)")
    script = tmp_path / "first-study.sh"
    script.write_text("\n".join(first_study_blocks()) + "\n", encoding="utf-8")
    work = tmp_path / "study"
    work.mkdir()
    log = tmp_path / "output.txt"
    with log.open("w", encoding="utf-8") as out:  # a file, not a pipe: a left-over server cannot hold it open
        proc = subprocess.Popen(["bash", "-eu", "-o", "pipefail", str(script)], cwd=work, env=env_for_the_readme(),
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.wait(timeout=120)
        finally:  # a failed step must not leave the background server running
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    output = log.read_text(encoding="utf-8")
    assert proc.returncode == 0, output
    port = json.loads((work / "server.json").read_text(encoding="utf-8"))["port"]
    assert port_is_closed(port), "the walk-through's last block stops the server"
    assert (work / "report" / "index.html").is_file()
    assert (work / "report" / "qa_bias_model_by_dialect.csv").is_file()
    with (work / "queue.csv").open(encoding="utf-8", newline="") as fh:
        queue = list(csv.DictReader(fh))
    assert queue, "the review step exported no rows to annotate"
    with sqlite3.connect(work / "first-study.sqlite") as db:
        judgments = db.execute("SELECT count(*) FROM judgments").fetchone()[0]
        annotations = db.execute("SELECT count(*) FROM annotations").fetchone()[0]
    # 3 items × 2 dialects × 2 models, judged by 2 judges; every queued row was scored by "me"
    assert judgments == 3 * 2 * 2 * 2
    assert annotations == len(queue)
