"""The review app over HTTP: authentication on every route, no access to another annotator's tasks (URL
tampering), CSRF on every form write, escaped text, parameterised SQL, concurrent writes losing nothing."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest

from dialectbias.store import Store

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")
pytest.importorskip("uvicorn", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")

LIKERT = {"dialect_comprehension": 4, "factual_correctness": 4, "content_completeness": 3, "response_clarity": 5,
          "appropriate_length": 2}


def _tasks(served: Any, rv: Any, who: str) -> list[dict[str, Any]]:
    reply = rv.http("GET", f"{served.url}/api/tasks", token=served.tokens[who])
    assert reply.status == 200
    return reply.json()


def _annotations(served: Any) -> list[tuple[str, str, str]]:
    with Store.open(served.store.path, create=False) as store:
        return [(r[0], r[1], r[2]) for r in store.query("SELECT target_id, annotator, kind FROM annotations")]


def test_every_api_route_needs_a_valid_token(served: Any, rv: Any) -> None:
    task = _tasks(served, rv, "rahim")[0]["id"]
    routes = [("GET", "/api/tasks", None), ("GET", f"/api/tasks/{task}", None),
              ("POST", f"/api/tasks/{task}/annotation", LIKERT)]
    for method, path, body in routes:
        for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": "Bearer wrong-token"},
                        {"Authorization": f"Basic {served.tokens['rahim']}"}):
            reply = rv.http(method, served.url + path, body=body, headers=headers)
            assert reply.status == 401, (method, path, headers)
            assert reply.headers.get("www-authenticate") == "Bearer"
    assert _annotations(served) == []


def test_every_page_needs_a_session(served: Any, rv: Any) -> None:
    task = _tasks(served, rv, "rahim")[0]["id"]
    for path in ("/", f"/task/{task}", "/queue/judgments", f"/image/{served.store.image_sha}"):
        reply = rv.http("GET", served.url + path)
        assert reply.status == 401, path
        assert ("প্রশ্ন" not in reply.text and "Log in" in reply.text) or path.startswith("/image")
    # a bearer token is for the API only: pages need the browser session
    assert rv.http("GET", f"{served.url}/task/{task}", token=served.tokens["rahim"]).status == 401
    reply = rv.http("POST", f"{served.url}/task/{task}", form={**LIKERT, "csrf": "x"})
    assert reply.status == 401 and _annotations(served) == []


def test_a_wrong_token_cannot_log_in(served: Any, rv: Any) -> None:
    opener = rv.browser_opener()
    page = rv.http("GET", f"{served.url}/login", opener=opener)
    reply = rv.http("POST", f"{served.url}/login", form={"token": "nope", "csrf": rv.hidden(page.text)},
                    opener=opener)
    assert reply.status == 401 and "Unknown token" in reply.text
    assert rv.http("GET", f"{served.url}/", opener=opener).status == 401


def test_the_login_form_needs_its_csrf_token(served: Any, rv: Any) -> None:
    opener = rv.browser_opener()
    rv.http("GET", f"{served.url}/login", opener=opener)
    reply = rv.http("POST", f"{served.url}/login", form={"token": served.tokens["rahim"], "csrf": "forged"},
                    opener=opener)
    assert reply.status == 403 and rv.http("GET", f"{served.url}/", opener=opener).status == 401


def test_url_tampering_cannot_read_or_write_anothers_task(served: Any, rv: Any) -> None:
    mine = {t["id"] for t in _tasks(served, rv, "rahim")}
    theirs = [t for t in _tasks(served, rv, "karim") if t["id"] not in mine]
    assert theirs, "karim has tasks rahim does not"
    other = theirs[0]["id"]
    for tampered in (other, other.upper(), f"{other}'--", "'%20OR%20'1'='1", "..%2Fapi%2Ftasks", "%2e%2e"):
        assert rv.http("GET", f"{served.url}/api/tasks/{tampered}", token=served.tokens["rahim"]).status == 404
        reply = rv.http("POST", f"{served.url}/api/tasks/{tampered}/annotation", token=served.tokens["rahim"],
                        body={"score": 5, **LIKERT})
        assert reply.status == 404, tampered
    opener = rv.login(served.url, served.tokens["rahim"])
    page = rv.http("GET", f"{served.url}/task/{other}", opener=opener)
    assert page.status == 404
    home = rv.http("GET", f"{served.url}/", opener=opener)
    csrf = rv.hidden(home.text)
    assert rv.http("POST", f"{served.url}/task/{other}", form={**LIKERT, "csrf": csrf, "score": 5},
                   opener=opener).status == 404
    nila = rv.login(served.url, served.tokens["nila"])  # her only queue is translation_correction
    assert rv.http("GET", f"{served.url}/queue/judgments", opener=nila).status == 404
    assert _annotations(served) == []


def test_every_form_write_needs_the_sessions_csrf_token(served: Any, rv: Any) -> None:
    task = _tasks(served, rv, "rahim")[0]["id"]
    opener = rv.login(served.url, served.tokens["rahim"])
    page = rv.http("GET", f"{served.url}/task/{task}", opener=opener)
    csrf = rv.hidden(page.text)
    assert re.findall(r'<form method="post"', page.text) and all(
        'name="csrf"' in form for form in re.findall(r'<form method="post".*?</form>', page.text, re.S))
    other = rv.login(served.url, served.tokens["karim"])
    other_csrf = rv.hidden(rv.http("GET", f"{served.url}/", opener=other).text)
    for bad in ({}, {"csrf": ""}, {"csrf": "x" * 43}, {"csrf": other_csrf}):
        reply = rv.http("POST", f"{served.url}/task/{task}", form={**LIKERT, **bad}, opener=opener)
        assert reply.status == 403, bad
    assert _annotations(served) == []
    assert rv.http("POST", f"{served.url}/logout", form={"csrf": "x"}, opener=opener).status == 403
    reply = rv.http("POST", f"{served.url}/task/{task}", form={**LIKERT, "csrf": csrf}, opener=opener)
    assert reply.status == 303 and len(_annotations(served)) == 1


def test_item_text_and_model_output_are_escaped(served: Any, rv: Any) -> None:
    task = next(t for t in _tasks(served, rv, "rahim") if t["item_id"] == "q1")
    opener = rv.login(served.url, served.tokens["rahim"])
    page = rv.http("GET", f"{served.url}/task/{task['id']}", opener=opener).text
    assert "<script>window" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in page
    assert "&#34;&gt;&lt;img src=x onerror=&#34;window.__xss = 2&#34;&gt;" in page
    assert len(re.findall("<script", page)) == 1  # the app's own script tag only
    csp = rv.http("GET", f"{served.url}/", opener=opener).headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp


def test_a_submitted_form_with_markup_is_rerendered_escaped(served: Any, rv: Any) -> None:
    task = _tasks(served, rv, "rahim")[0]["id"]
    opener = rv.login(served.url, served.tokens["rahim"])
    csrf = rv.hidden(rv.http("GET", f"{served.url}/task/{task}", opener=opener).text)
    reply = rv.http("POST", f"{served.url}/task/{task}", opener=opener,
                    form={**LIKERT, "factual_correctness": '"><img src=x onerror=alert(1)>', "csrf": csrf,
                          "comment": "</textarea><script>alert(1)</script>"})
    assert reply.status == 422 and "<script>alert" not in reply.text and "<img src=x" not in reply.text
    assert "factual_correctness" in reply.text and _annotations(served) == []


def test_images_are_served_only_behind_a_session_that_was_shown_them(served: Any, rv: Any) -> None:
    sha = served.store.image_sha
    task = next(t for t in _tasks(served, rv, "karim") if t["queue"] == "error_coding")
    karim = rv.login(served.url, served.tokens["karim"])
    assert rv.http("GET", f"{served.url}/image/{sha}", opener=karim).status == 404  # not shown yet
    page = rv.http("GET", f"{served.url}/task/{task['id']}", opener=karim)
    assert f'src="/image/{sha}"' in page.text
    image = rv.http("GET", f"{served.url}/image/{sha}", opener=karim)
    assert image.status == 200 and image.headers["content-type"] == "image/png" and image.body.startswith(b"\x89PNG")
    rahim = rv.login(served.url, served.tokens["rahim"])
    assert rv.http("GET", f"{served.url}/image/{sha}", opener=rahim).status == 404


def test_the_api_lists_gets_and_stores_the_callers_tasks(served: Any, rv: Any) -> None:
    tasks = _tasks(served, rv, "rahim")
    assert {t["queue"] for t in tasks} == {"judgments"} and {t["dialect"] for t in tasks} == {"chittagong"}
    assert set(tasks[0]) >= {"id", "queue", "dialect", "item_id"}
    one = rv.http("GET", f"{served.url}/api/tasks/{tasks[0]['id']}", token=served.tokens["rahim"]).json()
    assert [f["name"] for f in one["fields"]][:5] == list(LIKERT) and one["annotation"] is None
    bad = rv.http("POST", f"{served.url}/api/tasks/{tasks[0]['id']}/annotation", token=served.tokens["rahim"],
                  body={**LIKERT, "response_clarity": 9})
    assert bad.status == 422 and "response_clarity" in bad.json()["detail"]
    assert rv.http("POST", f"{served.url}/api/tasks/{tasks[0]['id']}/annotation", token=served.tokens["rahim"],
                   body=[1, 2]).status == 400
    ok = rv.http("POST", f"{served.url}/api/tasks/{tasks[0]['id']}/annotation", token=served.tokens["rahim"],
                 body={**LIKERT, "comment": "ঠিক আছে"})
    assert ok.status == 200 and ok.json()["stored"] is True and ok.json()["value"]["fields"] == LIKERT
    assert [t["id"] for t in _tasks(served, rv, "rahim")] == [t["id"] for t in tasks[1:]]  # open tasks only
    again = rv.http("GET", f"{served.url}/api/tasks/{tasks[0]['id']}", token=served.tokens["rahim"]).json()
    assert again["done"] is True and again["annotation"]["comment"] == "ঠিক আছে"


def test_concurrent_writes_from_several_annotators_lose_nothing(served: Any, rv: Any) -> None:
    """Every annotator posts every one of their tasks at once, several times with changing values."""
    jobs: list[tuple[str, str, dict[str, Any]]] = []
    for who in ("rahim", "karim", "nila"):
        for t in _tasks(served, rv, who):
            detail = rv.http("GET", f"{served.url}/api/tasks/{t['id']}", token=served.tokens[who]).json()
            body = _answer(detail)
            for round_ in range(3):
                jobs.append((who, t["id"], {**body, "comment": f"{who} round {round_}"}))
    errors: list[str] = []

    def post(job: tuple[str, str, dict[str, Any]]) -> None:
        who, task, body = job
        reply = rv.http("POST", f"{served.url}/api/tasks/{task}/annotation", token=served.tokens[who], body=body)
        if reply.status != 200:
            errors.append(f"{who} {task}: {reply.status} {reply.text}")

    threads = [threading.Thread(target=post, args=(job,)) for job in jobs]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert errors == []
    with Store.open(served.store.path, create=False) as store:
        rows = store.query("SELECT target_id, annotator, count(*) FROM annotations GROUP BY target_id, annotator, "
                           "kind")
    assert sum(r[2] for r in rows) == len(jobs)  # every distinct write is a row (three comments per task)
    assert len(rows) == len(jobs) // 3
    assert {r[1] for r in rows} == {"rahim", "karim", "nila"}


def _answer(detail: dict[str, Any]) -> dict[str, Any]:
    """A valid body for any queue's form."""
    body: dict[str, Any] = {}
    for f in detail["fields"]:
        if f["kind"] == "scale":
            body[f["name"]] = f["values"][-1]
        elif f["kind"] == "text":
            body[f["name"]] = detail["target"]["edit_text"] + " ঠিক"
        elif f["kind"] == "flags":
            body[f["name"]] = [f["options"][0][0]]
    return body


def test_no_sql_is_built_from_request_values() -> None:
    """The SQL the review app reaches (the store's review modules; review/ itself holds none) is parameterised:
    no `%`/`.format` SQL; f-strings only splice fixed fragments."""
    from pathlib import Path

    import dialectbias.store as store_package

    root = Path(store_package.__file__).parent
    modules = [root / f"{name}.py" for name in ("_annotations", "_assignments", "_snapshots", "_review_reads")]
    statements = 0
    for path in modules:
        text = path.read_text(encoding="utf-8")
        statements += len(re.findall(r"\b(?:SELECT|INSERT|UPDATE|DELETE)\b", text))
        assert not re.search(r"(SELECT|INSERT|UPDATE|DELETE)[^\n]*['\"]\s*%\s*[(\w]", text), path
        assert not re.search(r"(SELECT|INSERT|UPDATE|DELETE)[^\n]*\.format\(", text), path
        for fstring in re.findall(r'f"[^"\n]*(?:SELECT|INSERT|UPDATE|DELETE|WHERE)[^"\n]*"', text):
            spliced = re.findall(r"\{([^}]*)\}", fstring)
            assert all(name in {"_ANNOTATOR_COLUMNS", "where", "REF_OUTPUTS_SQL"} for name in spliced), (path, fstring)
    assert statements >= 10, "the review's SQL moved again: point this check at where it lives now"
    assert json.dumps  # (json is used by the other tests of this module)


def test_a_rotated_token_ends_the_old_sessions_and_api_access(served: Any, rv: Any) -> None:
    from dialectbias.review import add_annotator

    opener = rv.login(served.url, served.tokens["rahim"])
    assert rv.http("GET", f"{served.url}/", opener=opener).status == 200
    with Store.open(served.store.path, create=False) as store:
        new = add_annotator(store, "rahim", ["chittagong"], rotate=True)
    assert rv.http("GET", f"{served.url}/", opener=opener).status == 401
    assert rv.http("GET", f"{served.url}/api/tasks", token=served.tokens["rahim"]).status == 401
    assert rv.http("GET", f"{served.url}/api/tasks", token=new).status == 200


def test_the_last_task_of_a_queue_leads_home_with_a_message(served: Any, rv: Any) -> None:
    opener = rv.login(served.url, served.tokens["nila"])
    tasks = _tasks(served, rv, "nila")
    csrf = rv.hidden(rv.http("GET", f"{served.url}/", opener=opener).text)
    for t in tasks:
        reply = rv.http("POST", f"{served.url}/task/{t['id']}", form={"text": "সিলেটি", "csrf": csrf}, opener=opener)
        assert reply.status == 303
    assert reply.headers["location"] == "/queue/translation_correction?after=" + tasks[-1]["id"]
    done = rv.http("GET", served.url + reply.headers["location"], opener=opener)
    assert done.status == 303 and done.headers["location"] == "/?done=translation_correction"
    home = rv.http("GET", served.url + done.headers["location"], opener=opener)
    assert "Translations to correct: nothing left to do" in home.text
