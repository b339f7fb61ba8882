"""The reads of current judgments (issue 23): their values on a store with superseded, duplicate and unjudged
rows, and the walk that finds the latest current judgments. A 10×-paper resume spent 72 s of 163 s looking each
judgment's random request id up in `current_requests`; from schema 15 a judgment's rowid is its request's
integer key, and the current keys are checked in key order."""

from __future__ import annotations

from pathlib import Path

from dialectbias.store import JudgeCounts, JudgeYield, Store, iter_judgments, judge_counts, judge_yields
from dialectbias.store._judgments import CURRENT_ROWIDS_SQL, LATEST_CURRENT_SQL, latest_counted_sql
from store_sql import connection, insert_judgment, insert_request, leave_current
from store_sql import query_plan as plan

# (request id, judge, judged model, item, score, parse status, reason); ids out of insertion order on purpose
JUDGMENTS = [
    ("f1", "judge-1", "m1", "q1", 4.0, "ok", None),
    ("a2", "judge-1", "m1", "q2", None, "failed", "invalid values: confidence 7"),
    ("c3", "judge-1", "m2", "q1", None, "failed", "no JSON"),
    ("b4", "judge-1", "m2", "q2", 1.0, "ok", None),  # superseded below: never counted
    ("e5", "judge-1", "m2", "q2", 2.0, "ok", None),  # the same key as d6, written before it
    ("d6", "judge-1", "m2", "q2", 3.0, "ok", None),  # ... so the latest of the two
    ("09", "judge-2", "m1", "q1", 5.0, "ok", None),
]
UNJUDGED = [("judge", "judge-1", "aa"), ("judge", "judge-2", "ab"), ("judge:reask", "judge-1", "ac")]


def mixed_store(path: Path) -> Store:
    store = Store.open(path)
    conn = connection(store)
    rows = [(rid, "judge", judge, item) for rid, judge, _, item, *_ in JUDGMENTS]
    rows += [(rid, stage, judge, "q9") for stage, judge, rid in UNJUDGED]
    for rid, stage, judge, item in rows:
        insert_request(conn, rid, stage, judge, item)
    for rid, judge, model, item, score, status, reason in JUDGMENTS:
        insert_judgment(conn, rid, judge, model, item, score=score, parse_status=status, reason=reason)
    leave_current(conn, "b4")
    return store


def test_the_counts_are_of_the_latest_current_judgments(tmp_path: Path) -> None:
    with mixed_store(tmp_path / "s.sqlite") as store:
        assert judge_counts(store, ["judge-1", "judge-2", "judge-3"]) == {
            "judge-1": JudgeCounts(judgments=4, unscored=2, invalid=1), "judge-2": JudgeCounts(judgments=1)}
        assert [(j.request_id, j.score) for j in iter_judgments(store, "judge-1", ["m1", "m2"])] == [
            ("f1", 4.0), ("a2", None), ("c3", None), ("d6", 3.0)]
        # every current request of the stage, judged or not, latest or not (b4 is not current)
        assert judge_yields(store) == {"judge-1": JudgeYield(requests=6, scored=3, unscored=2, invalid=1),
                                       "judge-2": JudgeYield(requests=2, scored=1)}
        assert judge_yields(store, "judge:reask") == {"judge-1": JudgeYield(requests=1)}
        assert judge_yields(store, "generate") == {}


def test_current_judgments_are_found_by_their_integer_keys(tmp_path: Path) -> None:
    with mixed_store(tmp_path / "s.sqlite") as store:
        assert plan(store, CURRENT_ROWIDS_SQL) == "SCAN c"  # a judgment's rowid is its request's key (v15)
        latest = plan(store, f"SELECT count(*) FROM judgments j WHERE {LATEST_CURRENT_SQL}")
        # judgments_key walked in key order (no sort); each entry's key checked in current_requests by that
        # integer key, never by request id
        assert "COVERING INDEX judgments_key" in latest and "TEMP B-TREE" not in latest
        assert "USING ROWID SEARCH ON TABLE current_requests" in latest or "SCAN c" in latest
        assert "request_id=?" not in latest


def test_the_counts_take_every_column_from_the_latest_current_judgment_of_a_key(tmp_path: Path) -> None:
    """Two current judgments of one key (m, q1) that differ in every counted column, in both orders: the
    counts are the later one's, whichever columns it has (schema 14 reads them from `judgments_key`)."""
    flagged = {"parse_status": "ok", "flagged": 1, "needs_review": 1, "reason": "zeroed: script",
               "flags": '["out of range: clarity 7"]'}
    failed = {"parse_status": "failed", "flagged": 0, "needs_review": 0, "reason": "invalid values: clarity 9",
              "flags": "[]"}
    counted = {"flagged": JudgeCounts(judgments=1, zeroed=1, flagged=1, needs_review=1, out_of_range=1),
               "failed": JudgeCounts(judgments=1, unscored=1, invalid=1)}
    for first, last in (("flagged", "failed"), ("failed", "flagged")):
        with Store.open(tmp_path / f"{first}.sqlite") as store:
            conn = connection(store)
            for rid, name in (("ff", first), ("00", last)):  # ids in the other order than the rows
                insert_request(conn, rid, "judge", "judge-1", "q1")
                values = flagged if name == "flagged" else failed
                insert_judgment(conn, rid, "judge-1", "m", "q1", parse_status=values["parse_status"],
                                reason=values["reason"])
                conn.execute("UPDATE judgments SET flagged = ?, needs_review = ?, flags = ? WHERE request_id = ?",
                             (values["flagged"], values["needs_review"], values["flags"], rid))
            assert judge_counts(store, ["judge-1"]) == {"judge-1": counted[last]}
            leave_current(conn, "00")  # the earlier one is then latest
            assert judge_counts(store, ["judge-1"]) == {"judge-1": counted[first]}


def test_the_counts_are_read_from_the_key_index_alone(tmp_path: Path) -> None:
    with mixed_store(tmp_path / "s.sqlite") as store:
        counted = plan(store, latest_counted_sql(2), ("judge-1", "judge-2"))
        assert "SEARCH j2 USING COVERING INDEX judgments_key (judge_id=?)" in counted
        assert "TEMP B-TREE" not in counted and "request_id=?" not in counted
        # no pass over the judgments' rows: the table itself is never scanned or searched
        assert "SCAN j " not in counted and "USING INTEGER PRIMARY KEY" not in counted
