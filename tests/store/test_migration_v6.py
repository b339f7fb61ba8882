"""Migrations 5–6: a v4 store's RLAIF judgment columns move into `checks`/`flags`; overrides keep working."""

from __future__ import annotations

import json
from pathlib import Path

from dialectbias.store import OVERRIDE_KIND, Store, iter_judgments, latest_overrides
from store_sql import store_at_version


def v4_store(path: Path) -> None:
    conn = store_at_version(path, 4)
    for rid, ok, share, refusal, reason in (("a", 1, 0.93, None, None),
                                           ("b", 0, 0.1, "bn_sorry", "zeroed: script: judge and code agree"),
                                           ("c", None, 0.0, None, "review: script: indeterminate")):
        conn.execute("INSERT INTO requests VALUES (?, 'judge', 'j', ?, 'sylhet', '[]', 't', 'h', '[]', '{}', "
                     "NULL, ?, '{\"model_id\": \"m\"}', 0)", (rid, f"q{rid}", rid))
        conn.execute("INSERT INTO judgments (request_id, judge_id, model_id, item_id, variant, rubric, parsed, "
                     "score, script_ok_judge, script_ok_code, script_share, refusal, parse_status, reason) "
                     "VALUES (?, 'j', 'm', ?, 'sylhet', 'rlaif_v1', '{}', 5.0, 1, ?, ?, ?, 'ok', ?)",
                     (rid, f"q{rid}", ok, share, refusal, reason))
    conn.execute("INSERT INTO annotations (target_id, annotator, kind, value, created_at) "
                 "VALUES ('a', 'x', 'rlaif_override', '{\"score\": 7.5}', 0)")
    conn.commit()
    conn.close()


def test_v4_judgments_move_into_checks_and_flags(tmp_path: Path) -> None:
    v4_store(tmp_path / "s.sqlite")
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version >= 6
        columns = {r[1] for r in store.query("PRAGMA table_info(judgments)")}
        assert not columns & {"script_ok_judge", "script_ok_code", "script_share", "refusal"}
        got = {j.request_id: j for j in iter_judgments(store, "j", ["m"])}
        assert got["a"].checks == {"script": {"status": "ok", "share": 0.93, "reason": None}, "refusal": None}
        assert got["b"].checks["refusal"] == "bn_sorry" and got["b"].checks["script"]["status"] == "invalid"
        assert got["b"].flags == ["script: judge and code agree"] and got["a"].flags == []
        assert got["c"].checks["script"]["status"] == "indeterminate"
        assert {j.rubric for j in got.values()} == {"rlaif"}
        assert latest_overrides(store) == {"a": (7.5, "x")}
        assert store.query("SELECT kind FROM annotations")[0][0] == OVERRIDE_KIND
        assert json.loads(store.query("SELECT clipped FROM judgments LIMIT 1")[0][0]) == {}
