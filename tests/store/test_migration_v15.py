"""Migration 15 (issue 23): integer keys. A request's `rid` is given in insertion order; its result and its
judgment take it as their rowid; the current and compiled sets hold rids. A study run before v15 (its store made
v14 again here: the same rows, keyed by request id) is migrated by its next run: no model is called, no request
set is rebuilt, and the export and the report are what they were, byte for byte."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dialectbias.errors import StoreError
from dialectbias.store import Store, judge_counts, open_read_only
from store_sql import downgrade_to_v14, store_at_version

SETS_SQL = "SELECT stage, model_id, fingerprint, applied FROM current_stages ORDER BY 1, 2"
JUDGE = "judge-1"


#: a process that upgrades the store named in argv[1] and is killed (os._exit, as by kill -9) once the migration
#: has copied every table and is about to drop the old ones; a 1 KiB page cache makes it write those copies into
#: the store file before then, as a large store's would be
CRASH_MID_MIGRATION = """
import os, sqlite3, sys
from dialectbias.store import _store
connect = sqlite3.connect
def dying(*args, **kwargs):
    conn = connect(*args, **kwargs)
    conn.set_trace_callback(lambda sql: os._exit(9) if sql.strip().startswith("DROP TABLE requests") else None)
    return conn
_store.CACHE_KIB = 1
_store.sqlite3.connect = dying
_store.Store.open(sys.argv[1])
"""


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _v14_study(project: Any, cli: Any, out: Path) -> None:
    """Run the project's study, export it to `out`, and make its store v14 again."""
    assert cli("run", project.yaml_path, "--no-progress", "--yes").exit_code == 0
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", str(out)).exit_code == 0
    downgrade_to_v14(project.store_path)


def _version(path: Path) -> str:
    with closing(sqlite3.connect(path)) as conn:
        return str(conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])


def test_a_v14_study_runs_on_and_exports_the_same(qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path) -> None:
    project = qa_project(qa_server.base_url, n_items=3)
    assert cli("run", project.yaml_path, "--no-progress", "--yes").exit_code == 0
    before = tmp_path / "before"
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", str(before)).exit_code == 0
    with Store.open(project.store_path) as store:
        counts = judge_counts(store, [JUDGE])
        keys = store.query("SELECT r.request_id, s.request_id, j.request_id FROM requests r "
                           "LEFT JOIN results s USING (rid) LEFT JOIN judgments j USING (rid) ORDER BY r.rid")
    downgrade_to_v14(project.store_path)
    with closing(sqlite3.connect(project.store_path)) as conn:
        sets = conn.execute(SETS_SQL).fetchall()
        assert "rid" not in {r[1] for r in conn.execute("PRAGMA table_info(requests)")}
    calls = qa_server.stats()["chat_requests"]
    again = cli("run", project.yaml_path, "--no-progress", "--no-plan")
    assert again.exit_code == 0, again.output
    assert qa_server.stats()["chat_requests"] == calls
    with Store.open(project.store_path) as store:
        assert store.schema_version == 15
        assert store.query("PRAGMA integrity_check")[0][0] == "ok"
        assert store.query("PRAGMA foreign_key_check") == []
        assert [tuple(r) for r in store.query(SETS_SQL)] == [tuple(r) for r in sets]  # no set rebuilt
        assert judge_counts(store, [JUDGE]) == counts and counts[JUDGE].judgments > 0
        # each result and judgment sits at its own request's key
        assert [tuple(r) for r in store.query(
            "SELECT r.request_id, s.request_id, j.request_id FROM requests r LEFT JOIN results s USING (rid) "
            "LEFT JOIN judgments j USING (rid) ORDER BY r.rid")] == [tuple(r) for r in keys]
    after = tmp_path / "after"
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", str(after)).exit_code == 0
    assert _files(after) == _files(before)


def test_a_v14_store_with_a_result_of_no_request_is_refused_by_name(tmp_path: Path) -> None:
    """A v14 store written with foreign keys off (by another tool) can hold a result of no request; the migration
    would drop it, so it refuses, names the table and leaves the store at v14."""
    path = tmp_path / "s.sqlite"
    conn = store_at_version(path, 14)
    conn.execute("INSERT INTO results (request_id, status, completed_at) VALUES ('ghost', 'ok', 0)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="v15: results row 'ghost' has no request; nothing was changed"):
        Store.open(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "14"


def test_an_upgrade_is_journaled_not_logged(qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path) -> None:
    """The upgrade of an existing store runs under a rollback journal, which does not copy the tables it writes
    past the file's old end: the write-ahead log would hold all of them until folded in (22.6 GB at 10× the
    paper). The store is back in WAL mode after it."""
    project = qa_project(qa_server.base_url, n_items=3)
    _v14_study(project, cli, tmp_path / "before")
    wal = Path(f"{project.store_path}-wal")
    with closing(sqlite3.connect(":memory:")) as fresh:
        secure_delete = fresh.execute("PRAGMA secure_delete").fetchone()[0]  # this SQLite's default
    with Store.open(project.store_path) as store:
        assert store.schema_version == 15
        assert store.query("PRAGMA journal_mode")[0][0] == "wal"
        assert store.query("PRAGMA secure_delete")[0][0] == secure_delete  # off only while it upgraded
        assert not wal.exists() or wal.stat().st_size == 0  # the log held the copied tables before
    assert not Path(f"{project.store_path}-journal").is_file()


def test_an_upgrade_killed_midway_is_rolled_back_and_done_again(
        qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path) -> None:
    """Killed with the new tables written into the store file, the upgrade leaves a hot journal; the next run
    rolls the file back to v14, upgrades it again and calls no model: the same export, byte for byte."""
    project = qa_project(qa_server.base_url, n_items=3)
    before = tmp_path / "before"
    _v14_study(project, cli, before)
    v14 = project.store_path.read_bytes()
    crashed = subprocess.run([sys.executable, "-c", CRASH_MID_MIGRATION, str(project.store_path)], check=False)
    assert crashed.returncode == 9
    journal = Path(f"{project.store_path}-journal")
    assert journal.stat().st_size > 0 and project.store_path.read_bytes() != v14  # copies written into the file
    with pytest.raises(StoreError, match=r"upgrade of this store was interrupted .*-journal.*dialectbias status"):
        open_read_only(project.store_path)  # the explorer's: it cannot roll the journal back
    calls = qa_server.stats()["chat_requests"]
    again = cli("run", project.yaml_path, "--no-progress", "--no-plan")
    assert again.exit_code == 0, again.output
    assert qa_server.stats()["chat_requests"] == calls
    assert not journal.exists() and _version(project.store_path) == "15"
    with Store.open(project.store_path) as store:
        assert store.query("PRAGMA integrity_check")[0][0] == "ok"
        assert store.query("PRAGMA foreign_key_check") == []
    after = tmp_path / "after"
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", str(after)).exit_code == 0
    assert _files(after) == _files(before)


def test_an_upgrade_beside_another_connection_keeps_the_log(tmp_path: Path) -> None:
    """SQLite refuses to leave WAL mode while another connection has the store open: the upgrade then runs
    under the log, as before, and is not refused."""
    path = tmp_path / "s.sqlite"
    conn = store_at_version(path, 14)
    conn.commit()
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    other = sqlite3.connect(path)  # a reader in WAL mode, as another dialectbias process would be
    other.execute("SELECT count(*) FROM requests").fetchone()
    try:
        with Store.open(path) as store:
            assert store.schema_version == 15
            assert store.query("PRAGMA journal_mode")[0][0] == "wal"
    finally:
        other.close()
