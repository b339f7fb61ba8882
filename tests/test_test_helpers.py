"""The suite's own helpers: finding ../shared/data (tests/shared_data.py) and watching a run's store
(tests/run_progress.py)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

import run_progress
import shared_data


def test_a_missing_shared_path_skips_with_one_message_naming_it(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.setattr(shared_data, "ROOT", tmp_path)
    with pytest.raises(pytest.skip.Exception, match=r"^shared data not available \(\.\./shared/data/vashantor/"
                                                    r"Vashantor_Simplified/Test\): the test reads it$"):
        shared_data.shared_path(*shared_data.VASHANTOR, "Test", why="the test reads it")
    assert shared_data.find_shared("vashantor") is None
    monkeypatch.setattr(shared_data, "ROOT", None)  # no ../shared/data at all
    assert shared_data.find_shared("vashantor") is None
    with pytest.raises(pytest.skip.Exception, match=r"\(\.\./shared/data/german_dialect_bias\)$"):
        shared_data.shared_path(*shared_data.GERMAN)


def test_a_present_shared_path_is_returned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "banglaverse" / "data").mkdir(parents=True)
    monkeypatch.setattr(shared_data, "ROOT", tmp_path)
    assert shared_data.shared_path(*shared_data.BANGLAVERSE) == tmp_path / "banglaverse" / "data"
    assert shared_data.find_shared(*shared_data.BANGLAVERSE) == tmp_path / "banglaverse" / "data"


def test_committed_counts_results_and_reads_zero_before_the_tables_exist(tmp_path: Path) -> None:
    store = tmp_path / "x.sqlite"
    assert run_progress.committed(store) == 0  # no file yet
    with closing(sqlite3.connect(store)) as db, db:
        db.execute("CREATE TABLE other (x)")
    assert run_progress.committed(store) == 0  # no results table yet
    with closing(sqlite3.connect(store)) as db, db:
        db.execute("CREATE TABLE results (x)")
        db.executemany("INSERT INTO results VALUES (?)", [(1,), (2,)])
    assert run_progress.committed(store) == 2


def test_wait_until_fails_when_the_run_ends_or_time_runs_out() -> None:
    ended = subprocess.Popen([sys.executable, "-c", "print('bye')"], stdout=subprocess.PIPE, text=True)
    ended.wait(timeout=30)
    with pytest.raises(AssertionError, match=r"ended before the kill point \(exit 0\).*bye"):
        run_progress.wait_until(lambda: False, ended)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(AssertionError, match="made no progress"):
            run_progress.wait_until(lambda: False, running, timeout=0.05)
        run_progress.wait_until(lambda: True, running)  # already there: returns at once
    finally:
        running.kill()
        running.wait(timeout=10)
