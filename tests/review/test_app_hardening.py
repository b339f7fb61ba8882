"""Hardening of the review app's web stack (issue 22 item 4), over real HTTP against uvicorn on 127.0.0.1:
the body cap holds for chunked uploads, `Secure` cookies behind TLS, a login throttle with backoff, the
`Host` header check (DNS rebinding), a half-filled form survives a restart of the server, the annotator's
home page explains empty queues, and the pages speak without internal terms."""

from __future__ import annotations

import re
import select
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from dialectbias.store import Store

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")
pytest.importorskip("uvicorn", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")

LIKERT = {"dialect_comprehension": 4, "factual_correctness": 4, "content_completeness": 3, "response_clarity": 5,
          "appropriate_length": 2}


class Clock:
    """An injected clock: tests move time, never sleep."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _tasks(served: Any, rv: Any, who: str) -> list[dict[str, Any]]:
    reply = rv.http("GET", f"{served.url}/api/tasks", token=served.tokens[who])
    assert reply.status == 200, reply.text
    return reply.json()


def _annotations(path: Any) -> list[dict[str, Any]]:
    import json

    with Store.open(path, create=False) as store:
        rows = store.query("SELECT target_id, annotator, kind, value, comment FROM annotations ORDER BY annotation_id")
    return [{**dict(r), "value": json.loads(r["value"])} for r in rows]


# -- 1. the body cap holds for chunked uploads --------------------------------------------------------------


def test_a_chunked_body_over_the_cap_is_refused_while_it_streams(served: Any, rv: Any) -> None:
    """A 300 MB chunked JSON body with a valid token: 413 long before the client has sent it all."""
    task = _tasks(served, rv, "rahim")[0]["id"]
    total = 300 * 1024 * 1024
    piece = b"x" * 65536
    yielded = 0

    def body() -> Iterator[bytes]:
        nonlocal yielded
        for part in (b'{"comment": "', *(piece for _ in range(total // len(piece))), b'"}'):
            yielded += len(part)
            yield part

    split = urlsplit(served.url)
    sock = socket.create_connection((split.hostname, split.port), timeout=30)
    head = (f"POST /api/tasks/{task}/annotation HTTP/1.1\r\nHost: {split.netloc}\r\n"
            f"Authorization: Bearer {served.tokens['rahim']}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n").encode()
    sock.sendall(head)
    reply = b""
    try:
        for part in body():
            sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            if select.select([sock], [], [], 0)[0]:
                break
        else:
            sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.settimeout(30)
    try:
        while b"\r\n\r\n" not in reply:
            data = sock.recv(65536)
            if not data:
                break
            reply += data
    except (ConnectionResetError, TimeoutError):
        pass
    sock.close()
    print(f"chunked upload refused after the client sent {yielded / 2**20:.1f} MB")
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert yielded < 32 * 1024 * 1024, f"the client sent {yielded / 2**20:.0f} MB before the refusal"
    assert _annotations(served.store.path) == []
    # a small chunked body is still read (the cap is on size, not on chunking)
    ok = rv.http("POST", f"{served.url}/api/tasks/{task}/annotation", token=served.tokens["rahim"], body=LIKERT)
    assert ok.status == 200


def test_a_chunked_form_over_the_cap_is_refused_on_the_login_page(served: Any, rv: Any) -> None:
    import http.client

    split = urlsplit(served.url)
    conn = http.client.HTTPConnection(str(split.hostname), split.port, timeout=30)
    conn.request("POST", "/login", body=iter([b"token=", b"a" * 1_500_000]), encode_chunked=True,
                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert conn.getresponse().status == 413
    conn.close()


# -- 2. Secure cookies behind TLS ---------------------------------------------------------------------------


def _login_cookies(url: str, token: str, headers: dict[str, str] | None = None) -> tuple[str, str]:
    """(the login page's CSRF Set-Cookie, the session Set-Cookie) of one log-in."""
    import http.client

    split = urlsplit(url)
    conn = http.client.HTTPConnection(str(split.hostname), split.port, timeout=30)
    conn.request("GET", "/login", headers=headers or {})
    page = conn.getresponse()
    csrf_cookie = next(v for k, v in page.getheaders() if k.lower() == "set-cookie")
    html = page.read().decode()
    csrf = re.search(r'name="csrf" value="([^"]*)"', html).group(1)  # type: ignore[union-attr]
    body = f"token={token}&csrf={csrf}"
    conn.request("POST", "/login", body=body, headers={**(headers or {}),
                                                       "Content-Type": "application/x-www-form-urlencoded",
                                                       "Cookie": csrf_cookie.split(";", 1)[0]})
    reply = conn.getresponse()
    reply.read()
    assert reply.status == 303
    session = next(v for k, v in reply.getheaders() if k.lower() == "set-cookie" and v.startswith("dbr_session="))
    conn.close()
    return csrf_cookie, session


def _secure(cookie: str) -> bool:
    return "secure" in [p.strip().lower() for p in cookie.split(";")]


def test_cookies_are_secure_with_the_flag(review_store: Any, rv: Any) -> None:
    from dialectbias.review import add_annotator
    from dialectbias.review.app._security import WebSettings

    with review_store.open() as store:
        token = add_annotator(store, "rahim", ["chittagong"])
    with rv.serve_app(review_store.path, rv.review_config(), web=WebSettings(secure_cookies=True)) as url:
        csrf, session = _login_cookies(url, token)
        assert _secure(csrf) and _secure(session) and "HttpOnly" in session
    with rv.serve_app(review_store.path, rv.review_config()) as url:  # plain HTTP on localhost: not Secure
        csrf, session = _login_cookies(url, token)
        assert not _secure(csrf) and not _secure(session)


def test_forwarded_proto_counts_only_from_a_trusted_proxy(review_store: Any, rv: Any) -> None:
    from dialectbias.review import add_annotator
    from dialectbias.review.app._security import WebSettings

    with review_store.open() as store:
        token = add_annotator(store, "rahim", ["chittagong"])
    https = {"X-Forwarded-Proto": "https"}
    with rv.serve_app(review_store.path, rv.review_config(), web=WebSettings(trusted_proxies=("127.0.0.1",))) as url:
        assert all(_secure(c) for c in _login_cookies(url, token, https))
        assert not any(_secure(c) for c in _login_cookies(url, token))
    with rv.serve_app(review_store.path, rv.review_config(), web=WebSettings(trusted_proxies=("10.9.8.7",))) as url:
        assert not any(_secure(c) for c in _login_cookies(url, token, https))  # anyone else's header is ignored
    with rv.serve_app(review_store.path, rv.review_config()) as url:  # no trusted proxy by default
        assert not any(_secure(c) for c in _login_cookies(url, token, https))


# -- 3. a login throttle with backoff --------------------------------------------------------------------


def test_the_throttle_backs_off_exponentially_per_client_and_overall() -> None:
    from dialectbias.review.app._throttle import LoginThrottle

    clock = Clock()
    throttle = LoginThrottle(free_per_client=3, free_overall=1000, base_seconds=2.0, max_seconds=60.0, clock=clock)
    for _ in range(3):
        assert throttle.wait("1.2.3.4") == 0
        throttle.failed("1.2.3.4")
    assert throttle.wait("1.2.3.4") == 2.0  # 4th try: 2 s after the 3rd failure
    assert throttle.wait("5.6.7.8") == 0  # another client is not held up
    clock.now += 2.0
    assert throttle.wait("1.2.3.4") == 0
    throttle.failed("1.2.3.4")
    assert throttle.wait("1.2.3.4") == 4.0  # doubled
    clock.now += 4.0
    throttle.failed("1.2.3.4")
    assert throttle.wait("1.2.3.4") == 8.0
    for _ in range(10):
        clock.now += 60.0
        throttle.failed("1.2.3.4")
    assert throttle.wait("1.2.3.4") == 60.0  # capped
    throttle.succeeded("1.2.3.4")
    assert throttle.wait("1.2.3.4") == 0  # a successful log-in clears the client's count

    overall = LoginThrottle(free_per_client=100, free_overall=5, base_seconds=1.0, max_seconds=30.0, clock=clock)
    for i in range(5):
        overall.failed(f"10.0.0.{i}")
    assert overall.wait("10.0.1.1") == 1.0  # a fresh address waits too: the failures are spread over many
    clock.now += 1.0
    assert overall.wait("10.0.1.1") == 0


def test_the_throttle_keeps_bounded_memory() -> None:
    from dialectbias.review.app._throttle import LoginThrottle

    clock = Clock()
    throttle = LoginThrottle(free_per_client=2, free_overall=10**9, max_clients=100, clock=clock)
    for i in range(5000):
        throttle.failed(f"client-{i}")
        clock.now += 0.001
    assert throttle.tracked() <= 100
    clock.now += 10**6  # long quiet: everything expires
    throttle.failed("late")
    assert throttle.tracked() == 1


def test_login_answers_429_with_retry_after_then_lets_the_right_token_in(review_store: Any, rv: Any) -> None:
    from dialectbias.review import add_annotator
    from dialectbias.review.app._throttle import LoginThrottle

    with review_store.open() as store:
        token = add_annotator(store, "rahim", ["chittagong"])
    clock = Clock()
    throttle = LoginThrottle(free_per_client=3, base_seconds=30.0, clock=clock)
    with rv.serve_app(review_store.path, rv.review_config(), throttle=throttle) as url:
        opener = rv.browser_opener()

        def attempt(value: str) -> Any:
            page = rv.http("GET", f"{url}/login", opener=opener)
            return rv.http("POST", f"{url}/login", form={"token": value, "csrf": rv.hidden(page.text)},
                           opener=opener)

        ok = attempt(token)  # a success first: it does not count
        assert ok.status == 303
        opener = rv.browser_opener()
        for _ in range(3):
            assert attempt("wrong").status == 401
        held = attempt(token)  # even the right token waits: the throttle does not reveal a good guess
        assert held.status == 429 and held.headers["retry-after"] == "30"
        assert "Too many failed log-ins" in held.text and "30 seconds" in held.text
        assert rv.http("GET", f"{url}/", opener=opener).status == 401
        clock.now += 30
        assert attempt(token).status == 303
        assert rv.http("GET", f"{url}/", opener=opener).status == 200


def test_the_throttle_counts_forwarded_clients_only_behind_a_trusted_proxy(review_store: Any, rv: Any) -> None:
    from dialectbias.review.app._security import WebSettings
    from dialectbias.review.app._throttle import LoginThrottle

    def fail(url: str, forwarded: str) -> int:
        opener = rv.browser_opener()
        page = rv.http("GET", f"{url}/login", opener=opener)
        return rv.http("POST", f"{url}/login", form={"token": "wrong", "csrf": rv.hidden(page.text)}, opener=opener,
                       headers={"X-Forwarded-For": forwarded}).status

    for trusted, second in ((("127.0.0.1",), 401), ((), 429)):
        throttle = LoginThrottle(free_per_client=2, base_seconds=60.0, clock=Clock())
        with rv.serve_app(review_store.path, rv.review_config(), throttle=throttle,
                          web=WebSettings(trusted_proxies=trusted)) as url:
            assert [fail(url, "198.51.100.1") for _ in range(3)] == [401, 401, 429]
            # behind the trusted proxy another client is not held up; without it the header means nothing
            assert fail(url, "198.51.100.2") == second


# -- 4. the Host header (DNS rebinding) -------------------------------------------------------------------


def test_the_host_header_is_checked_on_a_loopback_bind(served: Any, rv: Any) -> None:
    port = urlsplit(served.url).port
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost", f"LOCALHOST:{port}"):
        assert rv.http("GET", f"{served.url}/login", headers={"Host": host}).status == 200, host
    for host in (f"attacker.example:{port}", "attacker.example", f"localhost.attacker.example:{port}",
                 f"localhost:{port + 1}", f"127.0.0.1@attacker.example:{port}", ""):
        reply = rv.http("GET", f"{served.url}/login", headers={"Host": host})
        assert reply.status == 400 and "Host" in reply.text, host
    reply = rv.http("GET", f"{served.url}/api/tasks", token=served.tokens["rahim"],
                    headers={"Host": f"attacker.example:{port}"})
    assert reply.status == 400


def test_beyond_localhost_only_the_allowed_hosts_and_the_bound_address(review_store: Any, rv: Any) -> None:
    from dialectbias.review.app._security import WebSettings

    web = WebSettings(bind_host="0.0.0.0", allowed_hosts=("review.example.org",))
    with rv.serve_app(review_store.path, rv.review_config(), web=web) as url:
        port = urlsplit(url).port
        for host, status in (("review.example.org", 200), ("Review.Example.Org:443", 200),
                             (f"127.0.0.1:{port}", 200),  # the address this connection reached
                             (f"localhost:{port}", 400), ("attacker.example", 400), ("10.1.2.3", 400)):
            assert rv.http("GET", f"{url}/login", headers={"Host": host}).status == status, host


# -- 5. a restart does not drop a half-filled form ------------------------------------------------------------


def test_a_form_posted_after_a_restart_survives_the_login_and_is_stored_once(review_store: Any, rv: Any) -> None:
    from dialectbias.review import add_annotator

    with review_store.open() as store:
        token = add_annotator(store, "rahim", ["chittagong"])
    config = rv.review_config()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with rv.serve_app(review_store.path, config, port=port) as url:
        opener = rv.login(url, token)
        task = rv.http("GET", f"{url}/api/tasks", token=token).json()[0]["id"]
        page = rv.http("GET", f"{url}/task/{task}", opener=opener)
        csrf = rv.hidden(page.text)
    with rv.serve_app(review_store.path, config, port=port) as url:  # the server restarted: sessions gone
        answer = {**LIKERT, "comment": "মন্তব্য <b>", "csrf": csrf}
        login = rv.http("POST", f"{url}/task/{task}", form=answer, opener=opener)
        assert login.status == 401 and "Log in" in login.text
        assert "your answers are kept" in login.text.lower()
        assert _annotations(review_store.path) == []
        keep = {name: value for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"',
                                                           login.text)}
        assert keep["next"] == f"/task/{task}" and "<b>" not in login.text.split("মন্তব্য")[1][:20]
        reply = rv.http("POST", f"{url}/login", opener=opener,
                        form={**{k: _unescape(v) for k, v in keep.items()}, "token": token})
        assert reply.status == 303 and reply.headers["location"] == f"/task/{task}"
        assert _annotations(review_store.path) == []  # logging in stores nothing: the annotator checks first
        back = rv.http("GET", f"{url}/task/{task}", opener=opener)
        assert back.status == 200 and "restored" in back.text.lower()
        for name, value in LIKERT.items():
            assert re.search(rf'name="{name}" value="{value}"[^>]*checked', back.text), name
        assert "মন্তব্য &lt;b&gt;</textarea>" in back.text
        again = rv.http("GET", f"{url}/task/{task}", opener=opener)
        assert "restored" not in again.text.lower()  # the kept answer is shown once
        form = {**LIKERT, "comment": "মন্তব্য <b>", "csrf": rv.hidden(back.text)}
        assert rv.http("POST", f"{url}/task/{task}", form=form, opener=opener).status == 303
        stored = _annotations(review_store.path)
        assert len(stored) == 1 and stored[0]["value"]["fields"] == LIKERT and stored[0]["comment"] == "মন্তব্য <b>"


def test_a_task_link_opened_without_a_session_returns_to_the_task_after_login(served: Any, rv: Any) -> None:
    task = _tasks(served, rv, "rahim")[0]["id"]
    opener = rv.browser_opener()
    page = rv.http("GET", f"{served.url}/task/{task}", opener=opener)
    assert page.status == 401 and rv.hidden(page.text, "next") == f"/task/{task}"
    reply = rv.http("POST", f"{served.url}/login", opener=opener, form={
        "token": served.tokens["rahim"], "csrf": rv.hidden(page.text), "next": rv.hidden(page.text, "next")})
    assert reply.status == 303 and reply.headers["location"] == f"/task/{task}"
    assert "restored" not in rv.http("GET", f"{served.url}/task/{task}", opener=opener).text.lower()


def test_the_login_page_never_sends_the_annotator_elsewhere(review_store: Any, rv: Any) -> None:
    from dialectbias.review import add_annotator

    with review_store.open() as store:
        token = add_annotator(store, "rahim", ["chittagong"])
    with rv.serve_app(review_store.path, rv.review_config()) as url:
        for bad in ("https://attacker.example/", "//attacker.example", "/\\attacker.example", "/task/../api/tasks",
                    "/login"):
            opener = rv.browser_opener()
            page = rv.http("GET", f"{url}/login", opener=opener)
            reply = rv.http("POST", f"{url}/login", opener=opener,
                            form={"token": token, "csrf": rv.hidden(page.text), "next": bad})
            assert reply.status == 303 and reply.headers["location"] == "/", bad


def _unescape(value: str) -> str:
    import html

    return html.unescape(value)


def test_another_app_installing_the_middleware_gets_every_protection(rv: Any) -> None:
    """The results explorer installs `limit_and_secure` from the review app: the cap on chunked bodies, the
    Host check, the headers and Secure cookies hold for it too (with its own settings, or the defaults)."""
    import contextlib
    import http.client
    import threading
    import time

    import uvicorn
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    from dialectbias.review.app._app import SECURITY_HEADERS, limit_and_secure
    from dialectbias.review.app._security import WebSettings

    app = FastAPI()
    app.middleware("http")(limit_and_secure)

    async def echo(request: Any) -> JSONResponse:  # a plain Starlette endpoint: it gets the request
        reply = JSONResponse({"bytes": len(await request.body())})
        reply.set_cookie("c", "1", httponly=True)
        return reply

    app.router.add_route("/echo", echo, methods=["POST"])

    @contextlib.contextmanager
    def running(web: WebSettings | None) -> Iterator[int]:
        if web is not None:
            app.state.web = web
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", proxy_headers=False))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        try:
            yield sock.getsockname()[1]
        finally:
            server.should_exit = True
            thread.join(10)
            sock.close()

    with running(None) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/echo", body=iter([b"x" * 600_000, b"x" * 600_000]), encode_chunked=True)
        assert conn.getresponse().status == 413
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/echo", body=iter([b"x" * 1000, b"x" * 1000]), encode_chunked=True)
        reply = conn.getresponse()
        assert reply.status == 200 and reply.read() == b'{"bytes":2000}'
        assert all(reply.getheader(k) == v for k, v in SECURITY_HEADERS.items())
        assert "Secure" not in (reply.getheader("set-cookie") or "")
        conn.request("POST", "/echo", body=b"{}", headers={"Host": "attacker.example"})
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 400
        conn.close()
    with running(WebSettings(secure_cookies=True)) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/echo", body=b"{}")
        assert "Secure" in (conn.getresponse().getheader("set-cookie") or "")
        conn.close()


# -- 8. empty queues ------------------------------------------------------------------------------------------


def test_empty_queues_are_explained_not_listed(served: Any, rv: Any) -> None:
    opener = rv.login(served.url, served.tokens["rahim"])  # chittagong only: no translations, no images
    home = rv.http("GET", f"{served.url}/", opener=opener).text
    listed = re.findall(r'<li class="queue" data-queue="([^"]+)"', home)
    assert listed == ["judgments"]
    assert "0</span> / <span class=\"total\">0" not in home
    note = re.search(r'<p class="empty-queues"[^>]*>(.*?)</p>', home, re.S)
    assert note, "no note about the empty queues"
    text = re.sub(r"<[^>]+>", "", note.group(1))
    assert "Translations to score 0–10" in text and "Translations to correct" in text
    assert "nothing is assigned to you yet" in text and "chittagong" in text


# -- 7 and 9. annotator-facing wording ------------------------------------------------------------------------

INTERNAL_TERMS = ["primary judge", "clipped", "rubric", "ceiling", "exempt", "judge-1", "override", "target",
                  "needs_review", "confidence_threshold", "hcs", "fingerprint", "request id", "meaning shift"]


def _visible(html: str) -> str:
    """What a reader sees: the text outside tags, plus tooltips (title attributes) and button labels."""
    titles = " ".join(re.findall(r'title="([^"]*)"', html))
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    body = re.sub(r"<textarea[^>]*>.*?</textarea>", " ", body, flags=re.S)  # the annotator's own text
    return re.sub(r"<[^>]+>", " ", body) + " " + titles


def test_annotator_pages_use_no_internal_terms(served: Any, rv: Any) -> None:
    import html

    opener = rv.login(served.url, served.tokens["karim"])
    pages = {"home": rv.http("GET", f"{served.url}/", opener=opener).text}
    seen: set[str] = set()
    for t in _tasks(served, rv, "karim"):
        if t["queue"] not in seen:
            seen.add(t["queue"])
            pages[t["queue"]] = rv.http("GET", f"{served.url}/task/{t['id']}", opener=opener).text
    assert {"judgments", "translation_score", "translation_correction", "validation", "error_coding"} <= set(pages)
    pages["login"] = rv.http("GET", f"{served.url}/login").text
    for name, page in pages.items():
        text = html.unescape(_visible(page)).lower()
        for term in INTERNAL_TERMS:
            assert term not in text, f"{name} page shows {term!r}"
        snake = [w for w in re.findall(r"\b[a-z]+_[a-z_]+\b", text)]
        assert snake == [], f"{name} page shows internal names {snake}"


def test_translation_score_anchors_are_distinct_and_plain() -> None:
    from dialectbias.review._kind_translations import TRANSLATION_SCORE_ANCHORS, TranslationScoreQueue
    from dialectbias.review._kinds import ReviewConfig
    from dialectbias.review._targets import ReviewTarget

    target = ReviewTarget(queue="translation_score", target_id="t", item_id="i", dialect="sylhet", title="t")
    field = TranslationScoreQueue().fields(ReviewConfig(judge_ids=[], model_ids=[]), target)[0]
    anchors = field.anchors
    assert anchors == TRANSLATION_SCORE_ANCHORS and sorted(anchors) == list(range(11))
    assert len(set(anchors.values())) == 11, "two scores read the same"
    assert anchors[1] != anchors[2]
    for value, text in anchors.items():
        lowered = text.lower()
        for term in ("ceiling", "exempt", "inaccurac", "meaning shift", "dialectal synonym", "hallucination"):
            assert term not in lowered, (value, text)
    assert "ceiling" not in field.description.lower() and "phonetically" not in field.description.lower()
