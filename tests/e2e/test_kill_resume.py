"""kill -9 mid-run, resume: the same generations and judgments as an uninterrupted run (SPEC §8)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from run_progress import committed, wait_until

N_ITEMS = 20
TOTAL = N_ITEMS * 3 * 2 + N_ITEMS * 2 * 2  # 120 generations + 80 judgments
VOLATILE = {"latency_s", "completed_at", "cache_hit", "retries"}
SETTINGS = {"max_concurrency": 2}


def exported(cli: Any, qa: Any, project: Any, out: Path) -> dict[str, list[dict[str, Any]]]:
    result = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    return {name: sorted(({k: v for k, v in row.items() if k not in VOLATILE}
                          for row in qa.read_jsonl(out / f"{name}.jsonl")), key=lambda r: r["request_id"])
            for name in ("generations", "judgments")}


@pytest.fixture(scope="module")
def clean_big(session_server: Any, cli: Any, qa: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    session_server.set_faults(None)
    root = tmp_path_factory.mktemp("clean_big")
    project = qa.make_project(root / "exp", session_server.base_url, n_items=N_ITEMS, model=SETTINGS,
                              judge=SETTINGS)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    return exported(cli, qa, project, root / "export")


def test_clean_reference_is_complete(clean_big: Any) -> None:
    assert len(clean_big["generations"]) == 120 and len(clean_big["judgments"]) == 80
    assert all(g["status"] == "ok" for g in clean_big["generations"])


@pytest.mark.parametrize("kill_at", [0.05, 0.45, 0.8], ids=["early-generation", "late-generation", "judging"])
def test_kill_9_then_resume_gives_the_same_results(kill_at: float, clean_big: Any, qa_server: Any,
                                                   qa_project: Any, cli: Any, qa: Any,
                                                   tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "slow", "delay_s": 0.05}])
    project = qa_project(qa_server.base_url, n_items=N_ITEMS, model=SETTINGS, judge=SETTINGS)
    proc = subprocess.Popen([*qa.dialectbias_command(), "run", str(project.yaml_path), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=qa.subprocess_env())
    try:
        wait_until(lambda: committed(project.store_path) >= int(kill_at * TOTAL), proc)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    done = committed(project.store_path)
    assert 0 < done < TOTAL

    qa_server.set_faults(None)
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    rows = qa.parse_table(result.stdout)  # only what was not committed is sent again
    assert sum(int(r["already done"]) for r in rows) == done
    assert sum(int(r["calls"]) for r in rows) == TOTAL - done
    resumed = exported(cli, qa, project, tmp_path / "export")
    for name in ("generations", "judgments"):
        ids = [r["request_id"] for r in resumed[name]]
        assert len(ids) == len(set(ids)), f"duplicate {name}"
        assert resumed[name] == clean_big[name], name


def test_results_are_committed_while_a_slow_request_is_still_running(qa: Any, qa_server: Any, qa_project: Any,
                                                                     tmp_path: Path) -> None:
    """The buffer is flushed on a timer too: fast results do not wait for a slow one to land."""
    qa_server.set_faults([{"kind": "slow", "delay_s": 20, "match": qa.gen_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=2, model={"timeout_s": 30}, judge=SETTINGS)
    proc = subprocess.Popen([*qa.dialectbias_command(), "run", str(project.yaml_path), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=qa.subprocess_env())
    try:
        # item 2's 3 variants × 2 models answer at once; item 1's 6 requests take 20 s
        wait_until(lambda: committed(project.store_path) >= 6, proc, timeout=10)
        assert committed(project.store_path) == 6
    finally:
        proc.kill()
        proc.wait(timeout=10)
