"""Re-scoring reads stale judgments and overrides in bounded batches (each read whole before it is yielded), so
the caller writes each batch's new values before the next is read, and nothing is read twice or left out."""

from __future__ import annotations

from pathlib import Path

from dialectbias.store import (
    OVERRIDE_KIND,
    Store,
    judgments_to_rescore,
    overrides_to_rescore,
    update_judgments,
    update_overrides,
)
from store_sql import connection

JUDGE = "judge-1"


def _store(path: Path, n: int) -> Store:
    store = Store.open(path)
    conn = connection(store)
    for i in range(n):
        rid = f"j{i}"
        conn.execute("INSERT INTO requests (request_id, stage, model_id, item_id, variant, template, prompt_hash, "
                     "messages, params, cache_key, created_at) VALUES (?, 'judge', ?, ?, 'sylhet', 't', 'h', '[]', "
                     "'{}', 'k', 0)", (rid, JUDGE, f"q{i}"))
        conn.execute("INSERT INTO judgments (rid, request_id, judge_id, model_id, item_id, variant, rubric, parsed, "
                     "score, parse_status, needs_review, scoring) SELECT rid, request_id, ?, 'm', ?, 'sylhet', 'r', "
                     "'{\"fa\": 1}', 1.0, 'ok', 0, 'old' FROM requests WHERE request_id = ?", (JUDGE, f"q{i}", rid))
        if i % 2 == 0:
            conn.execute("INSERT INTO annotations (target_id, annotator, kind, value, created_at, scoring) "
                         "VALUES (?, 'rahim', ?, ?, ?, 'old')", (rid, OVERRIDE_KIND, f'{{"score": {i}}}', i))
    return store


def test_stale_judgments_come_in_batches_and_each_batch_can_be_written_first(tmp_path: Path) -> None:
    with _store(tmp_path / "s.sqlite", 5) as store:
        seen = []
        for batch in judgments_to_rescore(store, JUDGE, "new", batch=2):
            seen.append([j.request_id for j in batch])
            # as `JudgedTask.rescore` does: write the batch's new values before asking for the next
            update_judgments(store, [{"request_id": j.request_id, "parse_status": "ok", "parsed": '{"fa": 1}',
                                      "score": 2.0, "confidence": None, "checks": "{}", "flags": "[]",
                                      "clipped": "{}", "needs_review": 0, "flagged": 0, "reason": None,
                                      "scoring": "new"} for j in batch])
        assert seen == [["j0", "j1"], ["j2", "j3"], ["j4"]]
        assert list(judgments_to_rescore(store, JUDGE, "new")) == []
        assert {r[0] for r in store.query("SELECT score FROM judgments")} == {2.0}


def test_a_batch_left_unwritten_is_not_read_again(tmp_path: Path) -> None:
    with _store(tmp_path / "s.sqlite", 5) as store:
        ids = [[j.request_id for j in b] for b in judgments_to_rescore(store, JUDGE, "new", batch=2)]
        assert ids == [["j0", "j1"], ["j2", "j3"], ["j4"]]


def test_stale_overrides_come_in_batches(tmp_path: Path) -> None:
    with _store(tmp_path / "s.sqlite", 6) as store:
        seen = []
        for batch in overrides_to_rescore(store, JUDGE, "new", batch=2):
            seen.append([o.target_id for o in batch])
            update_overrides(store, [(o.annotation_id, '{"score": 9}', "new") for o in batch[:1]])  # one is kept
        assert seen == [["j0", "j2"], ["j4"]]
        assert [o.target_id for b in overrides_to_rescore(store, JUDGE, "new") for o in b] == ["j2"]
