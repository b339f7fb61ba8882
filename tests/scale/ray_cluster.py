"""A local Ray cluster of two raylets started from a Python that holds Ray but not dialectbias (imported by
name: tests/scale is on sys.path). The Python is `DIALECTBIAS_RAY_ONLY_PYTHON` (CI's scale step makes a venv
with only `ray[data]`); each `ray start --block` runs in a process group of its own, stopped by its id."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scale_helpers import missing

RAY_ONLY = "DIALECTBIAS_RAY_ONLY_PYTHON"
NODES = ("import ray; ray.init(address={address!r}, log_to_driver=False); "
         "print(sum(1 for n in ray.nodes() if n['Alive']))")


def ray_only_python() -> Path:
    """The Ray-only Python, checked: it imports ray, and neither dialectbias nor pydantic."""
    value = os.environ.get(RAY_ONLY)
    if not value or not Path(value).is_file():
        missing(f"needs {RAY_ONLY}: a python of a venv holding only ray[data] (python -m venv V && "
                "V/bin/pip install 'ray[data]==2.60.0'; CI's scale step makes one)")
    python = Path(value)
    probe = subprocess.run([python, "-c", "import ray\nfor m in ('dialectbias', 'pydantic'):\n    try:\n"
                            "        __import__(m)\n        print(m)\n    except ImportError:\n        pass"],
                           capture_output=True, text=True, env=cluster_env(python), timeout=60)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == [], f"{RAY_ONLY} must not see {probe.stdout.split()}"
    return python


@dataclass
class Cluster:
    address: str
    #: what a driver needs to join: token authentication with the cluster's own token
    auth: dict[str, str]


def cluster_env(python: Path, temp: str | None = None, auth: dict[str, str] | None = None) -> dict[str, str]:
    """The cluster's environment: nothing of this checkout (no PYTHONPATH, no venv), token authentication
    (Ray 2.60 turns it on at a head; a token of the test's own, never ~/.ray's)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "RAY_ADDRESS") and not k.startswith("DIALECTBIAS_")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env.update({"RAY_USAGE_STATS_ENABLED": "0", **(auth or {"RAY_AUTH_MODE": "disabled"})})
    if temp:
        env["RAY_TMPDIR"] = temp
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes], temp: str) -> None:
    """SIGTERM to the `ray start --block` group we started, SIGKILL what is left; then any process that still
    names our temp dir (ours: the dir is unique) is killed by its pid."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=15)
            break
    for pid in _pids_naming(temp):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _pids_naming(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if text.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
    return pids


@contextlib.contextmanager
def two_raylets(python: Path, *, timeout: float = 180) -> Iterator[Cluster]:
    """`ray start --head --port P --num-cpus 1` and `ray start --address 127.0.0.1:P --num-cpus 1`; yields the
    head's address once both nodes are alive; stops both after."""
    port = free_port()
    temp = tempfile.mkdtemp(prefix="dbray")  # short: Ray's unix sockets live under it
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env = cluster_env(python, temp, auth)
    ray = str(python.parent / "ray")
    common = ["--num-cpus", "1", "--block", "--disable-usage-stats"]
    started: list[subprocess.Popen[bytes]] = []
    log = open(Path(temp) / "start.log", "wb")  # noqa: SIM115 - closed in finally
    try:
        started.append(subprocess.Popen([ray, "start", "--head", "--port", str(port), "--include-dashboard",
                                         "false", *common], env=env, cwd=temp, stdout=log, stderr=log,
                                        start_new_session=True))
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while not _listening(port):
            assert time.monotonic() < deadline and started[0].poll() is None, _tail(temp)
            time.sleep(0.5)
        started.append(subprocess.Popen([ray, "start", "--address", address, *common], env=env, cwd=temp,
                                        stdout=log, stderr=log, start_new_session=True))
        while True:
            nodes = subprocess.run([python, "-c", NODES.format(address=address)], capture_output=True, text=True,
                                   env=env, cwd=temp, timeout=120)
            if nodes.returncode == 0 and nodes.stdout.split()[-1:] == ["2"]:
                break
            assert time.monotonic() < deadline, f"{nodes.stdout}{nodes.stderr}{_tail(temp)}"
            time.sleep(1)
        yield Cluster(address, auth)
    finally:
        for proc in reversed(started):
            _stop(proc, temp)
        log.close()


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _tail(temp: str) -> str:
    path = Path(temp) / "start.log"
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""
