"""Watching a `dialectbias run` in another process: the results its store has committed so far, and waiting
for a number of them (before a kill or a SIGTERM). Imported by name (tests/ is on sys.path)."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path


def committed(store: Path) -> int:
    """Results written so far, read through a read-only connection while the run writes."""
    if not store.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            return int(db.execute("SELECT count(*) FROM results").fetchone()[0])
    except sqlite3.OperationalError:  # the run has not created its tables yet
        return 0


def wait_until(predicate: Callable[[], bool], proc: subprocess.Popen, timeout: float = 30.0,
               interval: float = 0.005) -> None:
    """Poll (the store is the only signal of progress); fail if the run exits (with its output, when piped)
    or time runs out."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            output = proc.communicate() if proc.stdout is not None or proc.stderr is not None else ""
            raise AssertionError(f"the run ended before the kill point (exit {proc.returncode}) {output}".rstrip())
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(interval)  # poll interval, not a wait for a fixed event
