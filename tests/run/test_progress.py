"""Progress when stdout is not a terminal: a plain line per stage × model at a steady interval."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from dialectbias.api import run_experiment
from dialectbias.errors import ConfigError
from dialectbias.run import StageStats
from dialectbias.run._progress import INTERVAL_ENV, ProgressView, progress_interval

LINE = re.compile(r"^progress (\w+) · ([\w-]+): (\d+)/(\d+) \(\d+%\) · (.+?) · \d+:\d\d elapsed$")
RATE = re.compile(r"^(\d+\.\d+)/s · ETA \d+:\d\d$")


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80, color_system=None), out


def test_a_piped_run_prints_periodic_lines_with_done_total_and_rate(
        qa: Any, qa_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 2 items: 6 generations per model and 8 judgments, one at a time, each answer delayed 0.2 s
    qa_server.set_faults([{"kind": "slow", "delay_s": 0.2}])
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2, model={"max_concurrency": 1},
                              judge={"max_concurrency": 1})
    monkeypatch.setenv(INTERVAL_ENV, "0.3")
    console, out = plain_console()
    assert not console.is_terminal
    summary = run_experiment(project.yaml_path, console=console)
    assert summary.failed == 0
    lines = out.getvalue().splitlines()
    periodic: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for line in lines:
        m = LINE.match(line)
        if m:
            periodic.setdefault((m[1], m[2]), []).append((int(m[3]), int(m[4]), m[5]))
    assert set(periodic) == {("generate", "model-a"), ("generate", "model-b"), ("judge", "judge-1")}
    for key, seen in periodic.items():
        assert len(seen) >= 2, (key, lines)
        assert all(total == {"generate": 6, "judge": 8}[key[0]] for _, total, _ in seen)
        assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)
        rates = [float(m[1]) for _, _, rate in seen if (m := RATE.match(rate))]
        # 0.2 s per answer, one at a time: at most 5 answers/s
        assert rates and all(0 < r <= 5.5 for r in rates), (key, seen)
    finals = [line for line in lines if line.startswith("done ")]
    assert sorted(f.split(" in ")[0] for f in finals) == [
        "done generate · model-a: 6/6", "done generate · model-b: 6/6", "done judge · judge-1: 8/8"]


def test_progress_line_reports_done_total_rate_eta_cached_errors() -> None:
    now = [100.0]
    console, out = plain_console()
    view = ProgressView(console, True, interval=10, clock=lambda: now[0])
    stats = StageStats(stage="generate", model_id="m", total=10, already_done=2, cached=1, failed=1)
    view.add("generate", {"m": stats})
    for _ in range(4):
        view.hook("m", 1, 0)
    now[0] = 102.0
    # 6 of 10 done (2 by an earlier run); 4 in 2 s = 2/s; 4 left -> 2 s
    assert view.tracks["m"].line(now[0], width=120) == (
        "progress generate · m: 6/10 (60%) · 2.00/s · ETA 0:02 · cached 1 · errors 1 · 0:02 elapsed")
    stats.cached = stats.failed = 0  # zero counts are left out
    assert view.tracks["m"].line(now[0]) == "progress generate · m: 6/10 (60%) · 2.00/s · ETA 0:02 · 0:02 elapsed"
    stats.cached = stats.failed = 1
    for _ in range(4):
        view.hook("m", 1, 0)
    assert out.getvalue() == "done generate · m: 10/10 in 0:02 · 4.00/s · cached 1 · errors 1\n"  # 8 in 2 s


def test_a_model_that_stops_early_gets_a_final_line_with_what_was_not_sent() -> None:
    now = [0.0]
    console, out = plain_console()
    with ProgressView(console, True, interval=60, clock=lambda: now[0]) as view:
        view.add("generate", {"m": StageStats(stage="generate", model_id="m", total=5, failed=2)})
        view.hook("m", 1, 1)
        view.hook("m", 1, 1)
        now[0] = 4.0
    assert out.getvalue() == "stopped generate · m: 2/5 in 0:04 · errors 2 · 3 not sent\n"  # no answer: no rate


def test_failed_requests_are_not_counted_in_the_rate() -> None:
    """Issue 24: `16/60 · 76.40/s · errors 16` counted failures as throughput. 10 requests in 2 s, 6 failed:
    4 answers (1 of them a cache hit) = 2.00/s; 50 left at 2/s = 25 s."""
    now = [0.0]
    console, _ = plain_console()
    view = ProgressView(console, True, interval=60, clock=lambda: now[0])
    stats = StageStats(stage="judge", model_id="j", total=60, cached=1)
    view.add("judge", {"j": stats})
    for failed in (1, 0, 1, 1, 0, 1, 0, 1, 0, 1):
        view.hook("j", 1, failed)
        stats.failed += failed
    now[0] = 2.0
    assert view.tracks["j"].line(now[0], width=120) == (
        "progress judge · j: 10/60 (17%) · 2.00/s · ETA 0:25 · cached 1 · errors 6 · 0:02 elapsed")
    only_failures = ProgressView(console, True, interval=60, clock=lambda: now[0])
    down = StageStats(stage="judge", model_id="k", total=5)
    only_failures.add("judge", {"k": down})
    for _ in range(3):
        only_failures.hook("k", 1, 1)
        down.failed += 1
    assert only_failures.tracks["k"].line(now[0], width=120) == (
        "progress judge · k: 3/5 (60%) · no answer yet · errors 3 · 0:00 elapsed")


def test_nothing_is_printed_in_a_terminal_or_when_disabled() -> None:
    out = io.StringIO()
    tty = Console(file=out, force_terminal=True, width=80)
    with ProgressView(tty, True, interval=0.01) as view:
        assert not view.plain
        view.add("generate", {"m": StageStats(stage="generate", model_id="m", total=1)})
        view.hook("m", 1, 0)
    assert "progress generate" not in out.getvalue() and "done generate" not in out.getvalue()
    console, plain = plain_console()
    with ProgressView(console, False, interval=0.01) as view:
        view.add("generate", {"m": StageStats(stage="generate", model_id="m", total=1)})
        view.hook("m", 1, 0)
    assert plain.getvalue() == ""


def test_interval_comes_from_the_environment_and_must_be_positive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    assert progress_interval() == 10.0
    monkeypatch.setenv(INTERVAL_ENV, "2.5")
    assert progress_interval() == 2.5
    monkeypatch.setenv(INTERVAL_ENV, "soon")
    with pytest.raises(ConfigError, match="DIALECTBIAS_PROGRESS_INTERVAL='soon'"):
        progress_interval()
    with pytest.raises(ConfigError, match="positive"):
        progress_interval(0)


def test_progress_lines_fit_80_columns_with_long_ids_and_big_numbers() -> None:
    # the example was 82 columns: `progress generate · model-a: 30/60 (50%) · 3.01/s · ETA 0:10 ·
    # cached 0 · errors 0 · 0:10`
    now = [0.0]
    console, out = plain_console()
    view = ProgressView(console, True, interval=10, clock=lambda: now[0])
    stats = {"model-a": StageStats(stage="generate", model_id="model-a", total=60),
             "qwen3-8b-instruct-awq": StageStats(stage="generate", model_id="qwen3-8b-instruct-awq",
                                                 total=114_000, already_done=38_000, cached=12_345, failed=1_204)}
    view.add("generate", stats)
    for _ in range(30):
        view.hook("model-a", 1, 0)
    view.hook("qwen3-8b-instruct-awq", 75_000, 0)
    now[0] = 10.0
    short = view.tracks["model-a"].line(now[0])
    assert short == "progress generate · model-a: 30/60 (50%) · 3.00/s · ETA 0:10 · 0:10 elapsed"
    long = view.tracks["qwen3-8b-instruct-awq"].line(now[0]).splitlines()
    assert len(long) == 2 and all(len(line) <= 80 for line in long), long
    assert long[1].startswith("  ") and "cached 12345" in " ".join(long) and "errors 1204" in " ".join(long)
    now[0] = 40_000.0
    view.hook("qwen3-8b-instruct-awq", 1_000, 0)  # its final line, folded too
    assert out.getvalue() and all(len(line) <= 80 for line in out.getvalue().splitlines()), out.getvalue()
