"""The `judge_consistency` queue in the review app over HTTP: opt-in (annotators with the default queues do
not see it), its three point fields, ratings refused out of range, and the HCS table following what was
stored (BanglaVerse §4.3)."""

from __future__ import annotations

from typing import Any

import pytest

from dialectbias.review import add_annotator, hcs_table
from dialectbias.store import Store

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")


def test_rating_judgments_over_http_gives_the_hcs(review_store: Any, rv: Any) -> None:
    judge, models = rv.JUDGE, rv.MODELS
    with review_store.open() as store:
        default = add_annotator(store, "karim", ["chittagong"])
        token = add_annotator(store, "sme", ["chittagong"], ["judge_consistency"])
        assert hcs_table(store, [judge], models).rows == []
    with rv.serve_app(review_store.path, rv.review_config()) as url:
        _rate(rv, url, default, token)
    with Store.open(review_store.path, create=False) as store:
        table = hcs_table(store, [judge], models)
    overall = next(r for r in table.rows if r["model"] == "all")
    assert (overall["n"], overall["ratings"], overall["annotators"]) == (2, 2, 1)
    assert overall["hcs"] == pytest.approx((100 + 54) / 2)
    assert overall["decision_accuracy"] == pytest.approx(40.0)
    assert table.ratings == 2 and table.stale == 0 and table.unreadable == []


def _rate(rv: Any, url: str, default: str, token: str) -> None:
    listed = rv.http("GET", f"{url}/api/tasks", token=default).json()
    assert listed and "judge_consistency" not in {t["queue"] for t in listed}  # karim has the default queues
    tasks = rv.http("GET", f"{url}/api/tasks", token=token).json()
    # every chittagong judgment with a parsed answer, confident ones included (c1, c2, c3, sure)
    assert {t["queue"] for t in tasks} == {"judge_consistency"} and len(tasks) == 4
    page = rv.http("GET", f"{url}/task/{tasks[0]['id']}", opener=rv.login(url, token))
    assert page.status == 200 and "decision accuracy" in page.text and "judge&#39;s scores" in page.text
    one = rv.http("GET", f"{url}/api/tasks/{tasks[0]['id']}", token=token).json()
    assert [(f["name"], f["maximum"]) for f in one["fields"]] == [
        ("decision_accuracy", 50), ("reasoning_alignment", 40), ("explanation_clarity", 10)]
    assert any(p["role"] == "reasoning" for p in one["target"]["panels"])
    bad = rv.http("POST", f"{url}/api/tasks/{tasks[0]['id']}/annotation", token=token,
                  body={"decision_accuracy": 60, "reasoning_alignment": 40, "explanation_clarity": 10})
    assert bad.status == 422 and bad.json()["detail"] == {"decision_accuracy": "60 is outside 0–50"}
    for task, points in zip(tasks[:2], ((50, 40, 10), (30, 20, 4)), strict=True):
        body = dict(zip(("decision_accuracy", "reasoning_alignment", "explanation_clarity"), points, strict=True))
        reply = rv.http("POST", f"{url}/api/tasks/{task['id']}/annotation", token=token, body=body)
        assert reply.status == 200, reply.text
