"""A `dialectbias run` stopped with SIGTERM says it was interrupted, keeps what completed and exits 143
(issue 19.12); before, it died silently."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from run_progress import committed, wait_until


def test_sigterm_mid_run_says_interrupted_and_keeps_the_results(qa: Any, qa_server: Any, tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "slow", "delay_s": 0.2}])
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=20, model={"max_concurrency": 1})
    proc = subprocess.Popen([*qa.dialectbias_command(), "run", str(project.yaml_path), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=qa.subprocess_env(),
                            stdin=subprocess.DEVNULL)
    try:
        wait_until(lambda: committed(project.store_path) >= 2, proc, timeout=180, interval=0.05)
        os.kill(proc.pid, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, (proc.returncode, stdout, stderr)
    assert stderr.strip().splitlines()[-1] == (
        "interrupted (SIGTERM): completed requests are stored; run again to resume"), stderr
    assert "Traceback" not in stderr
    stored = committed(project.store_path)
    assert 2 <= stored < 120 + 80
    resumed = qa.run_subprocess("run", project.yaml_path, "--no-progress")  # the rest, not the stored ones again
    assert resumed.exit_code == 0, resumed.output
    assert committed(project.store_path) == 120 + 80
