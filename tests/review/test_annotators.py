"""Annotators (tokens stored hashed) and assignments (dialects, queues, k annotators per item)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from dialectbias.errors import DataError
from dialectbias.review import add_annotator, annotator_for_token, assign, task_of, tasks_of
from store_sql import connection


def test_the_token_is_stored_as_its_sha256_only(review_store: Any) -> None:
    with review_store.open() as store:
        token = add_annotator(store, "rahim", ["chittagong"], ["judgments"])
        rows = store.query("SELECT * FROM annotators")
        dump = "\n".join(connection(store).iterdump())
    assert len(token) >= 43
    assert token not in dump
    assert rows[0]["token_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert rows[0]["created_at"] > 0


def test_a_token_names_its_annotator_and_nothing_else_does(review_store: Any) -> None:
    with review_store.open() as store:
        token = add_annotator(store, "rahim", ["chittagong"])
        assert annotator_for_token(store, token).name == "rahim"
        for wrong in ("", token[:-1], token + "x", hashlib.sha256(token.encode()).hexdigest(), "' OR 1=1 --"):
            assert annotator_for_token(store, wrong) is None


def test_a_second_annotator_of_the_same_name_is_refused_unless_rotated(review_store: Any) -> None:
    with review_store.open() as store:
        old = add_annotator(store, "rahim", ["chittagong"])
        with pytest.raises(DataError, match="exists already"):
            add_annotator(store, "rahim", ["sylhet"])
        new = add_annotator(store, "rahim", ["sylhet"], rotate=True)
        assert annotator_for_token(store, old) is None
        assert annotator_for_token(store, new).dialects == ("sylhet",)


@pytest.mark.parametrize(("name", "dialects", "queues", "message"), [
    ("", ["sylhet"], None, "annotator name"),
    ("a b", ["sylhet"], None, "not a name"),
    ("rahim", [], None, "--dialects"),
    ("rahim", ["sylhet"], ["judgmentz"], "unknown queue 'judgmentz'"),
])
def test_bad_annotator_settings_are_clear_errors(review_store: Any, name: str, dialects: list[str],
                                                  queues: list[str] | None, message: str) -> None:
    with review_store.open() as store, pytest.raises(DataError, match=message):
        add_annotator(store, name, dialects, queues)


def test_each_target_goes_to_k_annotators_of_its_dialect(review_store: Any, rv: Any) -> None:
    with review_store.open() as store:
        for name in ("a1", "a2", "a3"):
            add_annotator(store, name, ["chittagong"], ["judgments"])
        add_annotator(store, "s1", ["sylhet"], ["judgments"])
        summary = assign(store, rv.review_config(overlap=2))
        rows = store.query("SELECT target_id, annotator, dialect FROM assignments")
        again = assign(store, rv.review_config(overlap=2))
    by_target: dict[str, set[str]] = {}
    for r in rows:
        by_target.setdefault(r["target_id"], set()).add(r["annotator"])
        assert r["dialect"] in ("chittagong" if r["annotator"] != "s1" else "sylhet")
    j = review_store.judgments
    for key in ("c1", "c2", "c3"):
        assert len(by_target[j[key]]) == 2 and "s1" not in by_target[j[key]]
    for key in ("s1", "s2"):  # only one sylhet annotator: one each
        assert by_target[j[key]] == {"s1"}
    assert j["sure"] not in by_target  # confident judgments need no human
    assert summary.new_tasks == 3 * 2 + 2 and again.new_tasks == 0
    loads = [sum(1 for r in rows if r["annotator"] == a) for a in ("a1", "a2", "a3")]
    assert sorted(loads) == [2, 2, 2]  # the least busy first


def test_an_annotator_sees_only_their_queues_and_dialects(review_store: Any, rv: Any) -> None:
    with review_store.open() as store:
        add_annotator(store, "both", ["chittagong", "sylhet"], ["judgments", "validation"])
        assign(store, rv.review_config(overlap=1))
        with store.transaction():  # narrow them down after assignment: the old tasks disappear from view
            connection(store).execute("UPDATE annotators SET dialects='[\"sylhet\"]', queues='[\"judgments\"]'")
        from dialectbias.review._annotators import annotator_named

        both = annotator_named(store, "both")
        tasks = tasks_of(store, both)
        hidden = store.query("SELECT task_id FROM assignments WHERE dialect='chittagong'")
        assert {t.queue for t in tasks} == {"judgments"} and {t.dialect for t in tasks} == {"sylhet"}
        assert hidden and task_of(store, both, hidden[0][0]) is None
