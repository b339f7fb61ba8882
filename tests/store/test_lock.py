"""One run per store at a time: a second writer is refused with who holds the store; readers still work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectbias.errors import StoreError
from dialectbias.store import RunLock

HOLD = """
import sys
from dialectbias.store import RunLock
with RunLock(sys.argv[1], "run"):
    print("locked", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def holder() -> Iterator[Any]:
    """Start a process holding the lock of a store; yields a function taking the store path."""
    procs: list[subprocess.Popen[str]] = []

    def start(store: Path) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(store)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_second_writer_is_refused_and_told_who_holds_it(tmp_path: Path, holder: Any) -> None:
    proc = holder(tmp_path / "exp.sqlite")
    with pytest.raises(StoreError) as err, RunLock(tmp_path / "exp.sqlite", "run"):
        pass
    assert f"pid {proc.pid}" in str(err.value)
    assert "exp.sqlite" in str(err.value)


def test_lock_is_released_when_the_holder_is_killed(tmp_path: Path, holder: Any) -> None:
    proc = holder(tmp_path / "exp.sqlite")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with RunLock(tmp_path / "exp.sqlite", "run"):
        pass


def test_lock_is_released_on_exception(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), RunLock(tmp_path / "exp.sqlite", "run"):
        raise RuntimeError("boom")
    with RunLock(tmp_path / "exp.sqlite", "run"):
        pass


def test_second_run_exits_non_zero_while_status_works(clean_run: Any, cli: Any, holder: Any) -> None:
    proc = holder(clean_run.project.store_path)
    second = cli("run", clean_run.project.yaml_path, "--no-progress")
    assert second.exit_code == 1
    assert f"pid {proc.pid}" in second.output and "another `dialectbias run`" in second.output
    assert cli("status", clean_run.project.yaml_path).exit_code == 0
    assert cli("report", clean_run.project.yaml_path, "--out", str(clean_run.project.dir / "r")).exit_code == 0
