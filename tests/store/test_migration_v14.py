"""Migration 14 (issue 23): `judgments_key` holds the columns `judge_counts` counts, so a run's closing counts
are read from the index walk alone (tests/store/test_current_judgment_reads.py has the counts). A v13 store
gains the wider index when opened and keeps its request sets: the sets' fingerprints name the schema of the
request rows (`REQUEST_SETS_SCHEMA`), which v14 did not change, so its next run rebuilds nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import dialectbias.run._runner
import dialectbias.store
import dialectbias.store._schema
import dialectbias.store._store
from dialectbias.store import SCHEMA_VERSION, Store, judge_counts
from dialectbias.store._schema import MIGRATIONS
from store_sql import connection, downgrade_to_v14, insert_judgment, insert_request, store_at_version

SETS_SQL = "SELECT stage, model_id, fingerprint, applied FROM current_stages ORDER BY 1, 2"
JUDGE = "judge-1"  # conftest's project's judge
KEY_COLUMNS = ["judge_id", "model_id", "variant", "item_id", "request_id", "parse_status", "flagged",
               "needs_review", "reason", "flags"]


def test_a_v13_store_gains_the_wider_key_index_and_counts_the_same(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    conn = store_at_version(path, 13)
    for rid, status, reason in (("a1", "ok", None), ("b2", "failed", "invalid values: x 9"), ("c3", "ok", None)):
        insert_request(conn, rid, "judge", "judge-1", f"q{rid}")
        insert_judgment(conn, rid, "judge-1", "m", f"q{rid}", parse_status=status, reason=reason)
    conn.execute("UPDATE judgments SET flagged = 1, needs_review = 1 WHERE request_id = 'c3'")
    assert [r[2] for r in conn.execute("PRAGMA index_info(judgments_key)")] == KEY_COLUMNS[:5]
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version >= 14
        assert [r[2] for r in connection(store).execute("PRAGMA index_info(judgments_key)")] == KEY_COLUMNS
        assert store.query("PRAGMA integrity_check")[0][0] == "ok"
        assert judge_counts(store, ["judge-1"])["judge-1"].__dict__ == {
            "judgments": 3, "unscored": 1, "zeroed": 0, "flagged": 1, "needs_review": 1, "invalid": 1,
            "out_of_range": 0}


def test_a_v13_study_runs_on_after_the_migration(qa_server: Any, qa_project: Any, cli: Any) -> None:
    """A study run before v14 (its store made v13 again here: tables keyed by request id, the narrower index, the
    version) is migrated by its next run, which calls no model, applies no set again and counts the same."""
    project = qa_project(qa_server.base_url, n_items=2)
    assert cli("run", project.yaml_path, "--no-progress", "--yes").exit_code == 0
    with Store.open(project.store_path) as store:
        counts = judge_counts(store, [JUDGE])
    downgrade_to_v14(project.store_path)
    conn = sqlite3.connect(project.store_path)
    conn.executescript("DROP INDEX judgments_key; CREATE INDEX judgments_key ON judgments "
                       "(judge_id, model_id, variant, item_id, request_id); "
                       "UPDATE meta SET value = '13' WHERE key = 'schema_version';")
    sets = conn.execute(SETS_SQL).fetchall()
    conn.close()
    calls = qa_server.stats()["chat_requests"]
    again = cli("run", project.yaml_path, "--no-progress", "--no-plan")
    assert again.exit_code == 0, again.output
    assert qa_server.stats()["chat_requests"] == calls
    with Store.open(project.store_path) as store:
        assert store.schema_version >= 14
        assert [r[2] for r in connection(store).execute("PRAGMA index_info(judgments_key)")] == KEY_COLUMNS
        assert [tuple(r) for r in store.query(SETS_SQL)] == sets
        assert judge_counts(store, [JUDGE]) == counts and counts[JUDGE].judgments > 0


def test_a_migration_that_leaves_request_rows_alone_rebuilds_no_request_set(
        qa_server: Any, qa_project: Any, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A set's fingerprint holds `REQUEST_SETS_SCHEMA`, not the store's version (it did up to v13, so every
    schema bump rebuilt every set once: 12–15 min of CPU at 10× the paper). Here a schema 15 that only adds an
    index: the next run migrates the store and builds no set again."""
    project = qa_project(qa_server.base_url, n_items=2)
    assert cli("run", project.yaml_path, "--no-progress", "--yes").exit_code == 0
    with Store.open(project.store_path) as store:
        sets = [tuple(r) for r in store.query(SETS_SQL)]
        built = store.query("SELECT count(*) FROM compiled")[0][0]
    bumped = SCHEMA_VERSION + 1
    monkeypatch.setitem(MIGRATIONS, bumped, "CREATE INDEX results_latency ON results (latency_s);")
    for module in (dialectbias.store, dialectbias.store._schema, dialectbias.store._store, dialectbias.run._runner):
        monkeypatch.setattr(module, "SCHEMA_VERSION", bumped, raising=False)
    again = cli("run", project.yaml_path, "--no-progress", "--no-plan")
    assert again.exit_code == 0, again.output
    with Store.open(project.store_path) as store:
        assert store.schema_version == bumped
        assert store.query("SELECT count(*) FROM compiled")[0][0] == built
        assert [tuple(r) for r in store.query(SETS_SQL)] == sets  # each the same set, applied
