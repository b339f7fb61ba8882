"""One run per store at a time: an OS file lock beside the store, released on any exit (kill -9 too).

Two `dialectbias run` of one experiment would each send the requests the other has not stored yet, and
a paid API bills both. Readers (`status`, `report`, `export`) never take the lock.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from dialectbias.errors import StoreError

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fh: IO[str]) -> bool:
        try:
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
else:
    import fcntl

    def _try_lock(fh: IO[str]) -> bool:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def lock_path(store_path: str | Path) -> Path:
    return Path(f"{store_path}.lock")


class RunLock:
    """Exclusive lock on a run store for one writing command; `with RunLock(path, "run"):`."""

    def __init__(self, store_path: str | Path, command: str) -> None:
        self.path = lock_path(store_path)
        self.command = command
        self._fh: IO[str] | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # held open (and locked) until __exit__
        if not _try_lock(fh):
            fh.seek(0)
            holder = _describe(fh.read())
            fh.close()
            raise StoreError(
                f"{self.path.with_suffix('')}: another `dialectbias {holder.get('command', 'run')}` is using this "
                f"store ({_holder_text(holder)}); wait for it to finish or stop it, then run again. "
                "`status`, `report` and `export` work meanwhile.")
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                             "started": time.strftime("%Y-%m-%d %H:%M:%S")}))
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            self._fh.close()  # closing the descriptor releases the lock
            self._fh = None


def _describe(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _holder_text(holder: dict[str, Any]) -> str:
    if not holder:
        return "holder unknown"
    return f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}"
