"""A server that is down is found by a short probe, reported first, and its consequences folded (issue 7.6)."""

from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path
from typing import Any
from unittest import mock

from dialectbias.api import run_experiment
from dialectbias.store import Store

SKIP_KIND = "no successful generation to judge"


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_mixed(*args: Any) -> tuple[int, str]:
    """`dialectbias …` in-process; stdout and stderr interleaved in the order they were printed."""
    from rich.console import Console
    from typer.testing import CliRunner

    from dialectbias.cli import _app, _commands

    with contextlib.ExitStack() as stack:
        for module in (_app, _commands):
            stack.enter_context(mock.patch.object(module, "console", Console(width=250, color_system=None)))
            stack.enter_context(mock.patch.object(module, "err_console", Console(stderr=True, width=250,
                                                                                 color_system=None)))
        result = CliRunner().invoke(_app.app, [str(a) for a in args])
    return result.exit_code, result.output


def test_a_closed_port_stops_each_model_within_a_short_probe(qa: Any, tmp_path: Path) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    project = qa.make_project(tmp_path, base_url, model={"max_retries": 5})  # would back off for ~15 s per request
    started = time.perf_counter()
    # what is left unsent is counted for the stage at once (issue 23), not with a sweep per stopped model
    with mock.patch.object(Store, "count_pending", side_effect=AssertionError("a sweep per model")):
        summary = run_experiment(project.yaml_path, progress=False)
    assert time.perf_counter() - started < 3
    generate = [s for s in summary.stages if s.stage == "generate"]
    assert [s.model_id for s in generate] == ["model-a", "model-b"]
    for s in generate:
        assert s.stopped is not None and f"at {base_url}: cannot connect" in s.stopped
        assert "server is down" in s.stopped
        assert s.calls == 0 and s.retries <= 4  # at most 4 workers in flight, each probing once more
        assert 0 < s.failed <= 4  # the in-flight requests fail; the other 14 of 18 are not sent
        assert s.unsent == 18 - s.failed  # … and counted in the summary


def test_the_cause_is_printed_first(qa: Any, tmp_path: Path) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    project = qa.make_project(tmp_path, base_url, model={"max_retries": 0})
    code, output = run_mixed("run", project.yaml_path, "--no-progress")
    assert code == 1, output
    lines = output.splitlines()
    assert lines[0].startswith("error: generate · model-a stopped: ") and base_url in lines[0]
    assert lines[1].startswith("error: generate · model-b stopped: ") and base_url in lines[1]
    assert "run summary" in lines[2]


def test_judgments_skipped_for_want_of_generations_are_one_counted_line(qa: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, f"http://127.0.0.1:{closed_port()}/v1", model={"max_retries": 0})
    summary = run_experiment(project.yaml_path, progress=False)
    (judge,) = [s for s in summary.stages if s.stage == "judge"]
    # 6 items × 2 dialects × 2 models: one note with its count and one example
    assert (judge.skipped, judge.errors) == (24, {f"skipped: {SKIP_KIND} (e.g. model-a/q01/chittagong)": 24})
