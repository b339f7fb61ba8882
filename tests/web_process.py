"""Helpers of the tests that start one of the package's web apps (`review serve`, `view`) as a real process on
127.0.0.1 and drive it in Debian's chromium through Playwright (never `playwright install`)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = os.environ.get("DIALECTBIAS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
NO_CHROMIUM = f"no chromium at {CHROMIUM} (apt-get install chromium, or set DIALECTBIAS_CHROMIUM)"


def have_chromium() -> bool:
    return bool(shutil.which(CHROMIUM) or Path(CHROMIUM).is_file())


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def start(command: Sequence[str], log: Path, env: dict[str, str], *, host: str = "127.0.0.1", port: int,
          timeout: float = 60) -> subprocess.Popen[bytes]:
    """Start `command` (its output to `log`) and wait until it listens on host:port; AssertionError with the
    log when it stops or does not listen in time."""
    proc = subprocess.Popen(list(command), stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                raise AssertionError(log.read_text(encoding="utf-8")) from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 15 s."""
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@contextmanager
def serving(command: Sequence[str], log: Path, env: dict[str, str], *, host: str = "127.0.0.1",
            port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`start`, then `stop` on leaving."""
    proc = start(command, log, env, host=host, port=port)
    try:
        yield proc
    finally:
        stop(proc)
