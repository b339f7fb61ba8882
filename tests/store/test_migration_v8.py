"""Migration 8 (issue 19 items 1–2): judgments and annotations record the fingerprint of the rubric and settings
their derived values were computed with (`scoring`); rows of older stores have none, so they are re-scored on
first use; re-scored overrides never leave two identical answers of one annotator."""

from __future__ import annotations

from pathlib import Path

from dialectbias.store import (
    OVERRIDE_KIND,
    Store,
    judgments_to_rescore,
    overrides_to_rescore,
    update_overrides,
)
from store_sql import connection, store_at_version


def v7_store(path: Path) -> None:
    conn = store_at_version(path, 7)
    conn.execute("INSERT INTO requests (request_id, stage, model_id, item_id, variant, template, prompt_hash, "
                 "messages, params, cache_key, created_at) VALUES ('j1', 'judge', 'judge-1', 'q1', 'sylhet', 't', "
                 "'h', '[]', '{}', 'k', 0)")
    conn.execute("INSERT INTO judgments (request_id, judge_id, model_id, item_id, variant, rubric, parsed, score, "
                 "parse_status, needs_review) VALUES ('j1', 'judge-1', 'm', 'q1', 'sylhet', 'fafb', "
                 "'{\"fa\": 5, \"fb\": 5}', 4.0, 'ok', 0)")
    conn.execute("INSERT INTO annotations (target_id, annotator, kind, value, created_at) "
                 "VALUES ('j1', 'rahim', 'judgment_override', '{\"score\": 3.0}', 1)")
    conn.commit()
    conn.close()


def test_a_v7_stores_rows_have_no_fingerprint_and_are_rescored(tmp_path: Path) -> None:
    v7_store(tmp_path / "s.sqlite")
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version >= 8  # and on to the newest
        assert [j.request_id for b in judgments_to_rescore(store, "judge-1", "abc") for j in b] == ["j1"]
        assert [o.value for b in overrides_to_rescore(store, "judge-1", "abc") for o in b] == [{"score": 3.0}]
        connection(store).execute("UPDATE judgments SET scoring = 'abc'")
        assert list(judgments_to_rescore(store, "judge-1", "abc")) == []
        assert [len(b) for b in judgments_to_rescore(store, "judge-1", "def")] == [1]


def test_a_rescored_override_identical_to_another_keeps_the_newer(tmp_path: Path) -> None:
    v7_store(tmp_path / "s.sqlite")
    with Store.open(tmp_path / "s.sqlite") as store:
        connection(store).execute("INSERT INTO annotations (target_id, annotator, kind, value, created_at) "
                                  "VALUES ('j1', 'rahim', ?, '{\"score\":2.0}', 2)", (OVERRIDE_KIND,))
        connection(store).execute("INSERT INTO annotations (target_id, annotator, kind, value, created_at) "
                                  "VALUES ('j1', 'rahim', ?, '{\"score\":2.5}', 3)", (OVERRIDE_KIND,))
        ids = [r[0] for r in store.query("SELECT annotation_id FROM annotations ORDER BY annotation_id")]
        # the oldest and the newest become the same answer: the newest stays, after the middle one
        update_overrides(store, [(ids[0], '{"score":2.5}', "fp"), (ids[1], '{"score":2.0}', "fp"),
                                 (ids[2], '{"score":2.5}', "fp")])
        rows = store.query("SELECT annotation_id, value, scoring FROM annotations ORDER BY annotation_id")
        assert [tuple(r) for r in rows] == [(ids[1], '{"score":2.0}', "fp"), (ids[2], '{"score":2.5}', "fp")]
