"""Progress of a run, per stage × model, in any terminal.

In a terminal: one rich progress bar per stage × model (rate, elapsed, ETA, cache hits, errors). Elsewhere (stdout
piped or redirected to a log): one plain line per stage × model every `interval` seconds, and a final
line when the model's part of the stage ends, e.g.::

    progress generate · model-a: 12/48 (25%) · 1.90/s · ETA 0:19 · 0:06 elapsed
    done generate · model-a: 48/48 in 0:25 · 1.92/s · cached 3 · errors 1

A line names cache hits and errors only when there are some, and folds (an indented continuation) rather
than pass the console's width (80 columns in a log). A final line says what happened: `done`, `failed`
(every request this run sent failed: `failed 9/9`), `stopped` (the model was stopped, with how many
requests were not sent), nothing to send (and why: e.g. every item skipped because no generation
succeeded), or all done by an earlier run.

The rate (bar and lines) is answers per second: requests this run finished with an answer, cache hits
included (they are results, and a run made of them ends that fast). Failed requests are not throughput:
they are counted in `errors`, never in the rate, so a server failing fast does not look busy (issue 24:
`16/60 · 76.40/s · errors 16` counted its failures). The ETA is the requests left at that rate; before the
first answer there is none (`no answer yet` once requests have failed).

The interval defaults to 10 s; set it with the environment variable DIALECTBIAS_PROGRESS_INTERVAL
(seconds) or the `interval` argument.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from dialectbias.errors import ConfigError
from dialectbias.run._summary import StageStats

INTERVAL_ENV = "DIALECTBIAS_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10.0


def progress_interval(value: float | None = None) -> float:
    """`value`, else $DIALECTBIAS_PROGRESS_INTERVAL, else 10 s; must be a positive number."""
    if value is None:
        raw = os.environ.get(INTERVAL_ENV, "").strip()
        if not raw:
            return DEFAULT_INTERVAL
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{INTERVAL_ENV}={raw!r}: expected a number of seconds, e.g. 10") from None
    if not value > 0:
        raise ConfigError(f"progress interval must be a positive number of seconds, got {value}")
    return value


def _clock(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


@dataclass
class _Track:
    """One stage × model: what this run has done of it so far, and its bar (`task`)."""

    stage: str
    stats: StageStats
    started: float
    task: TaskID
    done: int = 0
    #: of `done`, the requests that failed (not answers: left out of the rate)
    failed: int = 0
    finished: bool = False

    def rate(self, elapsed: float) -> float:
        """Answers per second (cache hits included, failures not)."""
        return (self.done - self.failed) / elapsed

    @property
    def target(self) -> int:
        """Requests this run has to send (the rest were done by an earlier run)."""
        return max(self.stats.total - self.stats.already_done, 0)

    def line(self, now: float, width: int = 80) -> str:
        """The plain line of this stage × model (a final one once it ended), folded at `width` columns."""
        s = self.stats
        elapsed = max(now - self.started, 1e-9)
        complete = s.already_done + self.done
        counts = [f"cached {s.cached}"] * bool(s.cached) + [f"errors {s.failed}"] * bool(s.failed)
        where = f"{self.stage} · {s.model_id}"
        if self.finished or self.done >= self.target:
            if not s.total:
                return _fold([f"done {where}: nothing to send", *_skipped(s)], width)
            if not self.target:
                return _fold([f"done {where}: {complete}/{s.total}", "all done by an earlier run"], width)
            earlier = [f"{s.already_done} done by an earlier run"] * bool(s.already_done)
            took = f"in {_clock(elapsed)}"
            speed = [f"{self.rate(elapsed):,.2f}/s"] * (self.done > self.failed)
            if self.done < self.target:
                return _fold([f"stopped {where}: {complete}/{s.total} {took}", *speed, *counts,
                              f"{self.target - self.done} not sent", *earlier], width)
            if s.failed >= self.done:  # every request this run sent failed
                return _fold([f"failed {where}: failed {s.failed}/{self.target} {took}", *speed, *earlier], width)
            return _fold([f"done {where}: {complete}/{s.total} {took}", *speed, *counts], width)
        percent = f" ({complete / s.total:.0%})" if s.total else ""
        if not self.done:
            rate = ["waiting for the first result"]
        elif self.done <= self.failed:
            rate = ["no answer yet"]
        else:
            per_s = self.rate(elapsed)
            rate = [f"{per_s:,.2f}/s", f"ETA {_clock((self.target - self.done) / per_s)}"]
        return _fold([f"progress {where}: {complete}/{s.total}{percent}", *rate, *counts,
                      f"{_clock(elapsed)} elapsed"], width)


def _skipped(stats: StageStats) -> list[str]:
    """Why a stage × model has no request: its skip notes (e.g. no successful generation to judge)."""
    if not stats.skipped:
        return []
    reasons = [error.removeprefix("skipped: ").split(" (e.g. ")[0] for error in stats.errors
               if error.startswith("skipped: ")]
    return [f"{stats.skipped} skipped: {'; '.join(reasons)}" if reasons else f"{stats.skipped} skipped"]


def _fold(pieces: list[str], width: int) -> str:
    """`a · b · c` on lines of at most `width` characters, continued with an indent; a piece is never split."""
    lines = [pieces[0]]
    for piece in pieces[1:]:
        if len(lines[-1]) + 3 + len(piece) > width:
            lines.append(f"  {piece}")
        else:
            lines[-1] += f" · {piece}"
    return "\n".join(lines)


class ProgressView:
    """Progress per (stage, model); `add` starts a stage, `hook` is the executor's progress callback.

    Use it as a context manager around the run. `enabled=False` shows nothing.
    """

    def __init__(self, console: Console | None, enabled: bool, *, interval: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console or Console()
        self.enabled = enabled
        self.plain = enabled and not self.console.is_terminal
        self.interval = progress_interval(interval) if self.plain else DEFAULT_INTERVAL
        self.clock = clock
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            TextColumn("{task.fields[counts]}"),
            console=self.console, disable=not enabled or self.plain, refresh_per_second=4)
        self.tracks: dict[str, _Track] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> ProgressView:
        self.progress.start()
        if self.plain:
            self._ticker = threading.Thread(target=self._tick, name="dialectbias-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if exc_type is None:
            self._finish_all()
        self.progress.stop()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                now = self.clock()
                for track in self.tracks.values():
                    if not track.finished:
                        self._print(track.line(now, self.console.width))

    def _print(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _finish(self, track: _Track) -> None:
        """The final line of one stage × model (printed once)."""
        if not track.finished:
            track.finished = True
            if track.done and track.stats.failed >= track.done:  # the bar says so too: every request failed
                self.progress.update(track.task, description=f"failed {track.stage} · {track.stats.model_id}")
            if self.plain:
                self._print(track.line(self.clock(), self.console.width))

    def _finish_all(self) -> None:
        with self._lock:
            for track in self.tracks.values():
                self._finish(track)

    # -- what the runner calls -----------------------------------------------------------------
    def add(self, stage: str, stats: dict[str, StageStats]) -> None:
        """Start showing a new stage (stages run one at a time: the previous one is finished)."""
        if not self.enabled:
            return
        self._finish_all()
        now = self.clock()
        with self._lock:
            self.tracks = {}
            for model_id, s in stats.items():
                task = self.progress.add_task(f"{stage} · {model_id}", total=s.total, completed=s.already_done,
                                              counts="", rate="")
                self.tracks[model_id] = _Track(stage, s, now, task)
            for track in self.tracks.values():
                if not track.target:
                    self._finish(track)

    def hook(self, model_id: str, advance: int, errors: int) -> None:
        """Called by the executor after each request (`errors` = 1 when it failed)."""
        if not self.enabled:
            return
        with self._lock:
            track = self.tracks[model_id]
            track.done += advance
            track.failed += errors
            s = track.stats
            elapsed = max(self.clock() - track.started, 1e-6)
            counts = " · ".join([f"cached {s.cached}"] * bool(s.cached) + [f"errors {s.failed}"] * bool(s.failed))
            self.progress.update(track.task, advance=advance, counts=counts, rate=f"{track.rate(elapsed):,.1f}/s")
            if track.done >= track.target:
                self._finish(track)


__all__ = ["DEFAULT_INTERVAL", "INTERVAL_ENV", "ProgressView", "progress_interval"]
