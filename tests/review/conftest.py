"""A store holding something for every review queue kind, and the review app served on 127.0.0.1."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import pytest

from dialectbias.data import Item
from dialectbias.judges import RLAIF_CATEGORIES, load_rubric, rlaif_score
from dialectbias.review import ReviewConfig, add_annotator
from dialectbias.store import ContentRow, Store, dumps

JUDGE = "judge-1"
MODELS = ["model-a", "model-b"]
FIELDS = [name for name, _ in RLAIF_CATEGORIES]
SCRIPT = "<script>window.__xss = 1</script>"
IMG = '"><img src=x onerror="window.__xss = 2">'


def png_bytes(color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), color).save(buf, format="PNG")
    return buf.getvalue()


def _request(store: Store, rid: str, stage: str, model: str, item: str, variant: str, *, refs: list[str] | None = None,
             messages: Any = "[]", meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"request_id": rid, "stage": stage, "model_id": model, "item_id": item, "variant": variant,
            "refs": dumps(refs or []), "template": "t", "prompt_hash": "h",
            "messages": messages if isinstance(messages, str) else dumps(messages), "params": "{}",
            "json_schema": None, "cache_key": rid, "meta": dumps(meta or {}), "created_at": 0.0}


def add_judgment(store: Store, model: str, item: str, variant: str, *, confidence: int = 2,
                 likert: tuple[int, ...] = (3, 3, 3, 3, 3), judge: str = JUDGE, needs_review: bool = True,
                 answer: str = "উত্তর", reasoning: str = "যুক্তি") -> str:
    """The two generations, the judge request and its judgment (RLAIF); returns the judgment id."""
    ids = []
    for v, text in (("standard", f"প্রমিত {answer}"), (variant, f"আঞ্চলিক {answer}")):
        rid = f"gen-{model}-{item}-{v}"
        store.write([("requests", _request(store, rid, "generate", model, item, v)),
                     ("results", {"request_id": rid, "status": "ok", "output": text, "completed_at": 0.0})])
        ids.append(rid)
    rid = f"judge-{judge}-{model}-{item}-{variant}"
    parsed = {"chain_of_thought_reasoning": reasoning, "script_valid": True, "refusal": False,
              **dict(zip(FIELDS, likert, strict=True)), "confidence": confidence}
    store.write([("requests", _request(store, rid, "judge", judge, item, variant, refs=ids,
                                       meta={"model_id": model})),
                 ("results", {"request_id": rid, "status": "ok", "output": "{}", "completed_at": 0.0}),
                 ("judgments", {"request_id": rid, "judge_id": judge, "model_id": model, "item_id": item,
                                "variant": variant, "rubric": "rlaif", "parsed": dumps(parsed),
                                "score": rlaif_score(likert), "confidence": confidence, "parse_status": "ok",
                                "needs_review": int(needs_review), "flagged": 0})])
    return rid


def add_image_generation(store: Store, model: str, item: str, variant: str, output: str) -> tuple[str, str]:
    """A model request with an image part and its answer; returns (request id, image sha256)."""
    data = png_bytes()
    sha = hashlib.sha256(data).hexdigest()
    store.add_content([ContentRow(sha, "image", "image/png", len(data), data, 64, 48)])
    rid = f"vqa-{model}-{item}-{variant}"
    messages = [{"role": "user", "content": [{"type": "image", "sha256": sha, "mime": "image/png"},
                                             {"type": "text", "text": "question"}]}]
    store.write([("requests", _request(store, rid, "generate", model, item, variant, messages=messages)),
                 ("results", {"request_id": rid, "status": "ok", "output": output, "completed_at": 0.0})])
    return rid, sha


@dataclass
class ReviewStore:
    path: Path
    judgments: dict[str, str]
    image_request: str
    image_sha: str

    def open(self) -> Store:
        return Store.open(self.path, create=False)


def build_review_store(path: Path) -> ReviewStore:
    """Items q1–q6 (standard, chittagong, sylhet; q1 carries markup in its text and answers; q5/q6 have
    machine-made sylhet variants), RLAIF judgments needing review in both dialects, one confident judgment,
    and a model answer to an image (urdu)."""
    with Store.open(path) as store:
        items = [Item(id=f"q{i}", variants={"standard": f"প্রশ্ন {i}?", "chittagong": f"চাটগাঁইয়া প্রশ্ন {i}?",
                                            "sylhet": f"সিলেটি প্রশ্ন {i}?", "urdu": f"سوال {i}؟"})
                 for i in range(1, 7)]
        items[0].variants["standard"] = f"প্রশ্ন ১ {SCRIPT}"
        items[0].variants["chittagong"] = f"চাটগাঁইয়া {IMG}"
        for item in items[4:]:
            item.metadata["is_human_validated"] = {"sylhet": False}
        store.save_items(items)
        judgments = {
            "c1": add_judgment(store, "model-a", "q1", "chittagong", answer=IMG, reasoning=SCRIPT),
            "c2": add_judgment(store, "model-a", "q2", "chittagong", confidence=1),
            "c3": add_judgment(store, "model-b", "q3", "chittagong", confidence=3),
            "s1": add_judgment(store, "model-a", "q1", "sylhet"),
            "s2": add_judgment(store, "model-b", "q4", "sylhet", confidence=3),
            "sure": add_judgment(store, "model-a", "q5", "chittagong", confidence=5, needs_review=False),
        }
        image_request, sha = add_image_generation(store, "model-a", "q6", "urdu", f"جواب {IMG}")
    return ReviewStore(path, judgments, image_request, sha)


def review_config(**changes: Any) -> ReviewConfig:
    return ReviewConfig(judge_ids=[JUDGE], model_ids=MODELS, rubrics={JUDGE: load_rubric("rlaif")},
                        translation_stage="translate", **changes)


@pytest.fixture
def review_store(tmp_path: Path) -> ReviewStore:
    return build_review_store(tmp_path / "review.sqlite")


# -- the app on a free port ---------------------------------------------------------------------------


@dataclass
class Served:
    url: str
    store: ReviewStore
    tokens: dict[str, str] = field(default_factory=dict)


@contextlib.contextmanager
def serve_app(store_path: Path, config: ReviewConfig, *, port: int = 0, **app_options: Any) -> Iterator[str]:
    """Run the app with uvicorn in a thread on 127.0.0.1 (a free port, or `port`); yields its base URL.
    `app_options` go to `create_app` (web settings, the login throttle)."""
    import uvicorn

    from dialectbias.review.app import create_app

    app = create_app(store_path, config, **app_options)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                            proxy_headers=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the review app did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def served(review_store: ReviewStore) -> Iterator[Served]:
    """The app over `review_store` with annotators rahim (chittagong) and karim (chittagong, sylhet)."""
    with review_store.open() as store:
        tokens = {"rahim": add_annotator(store, "rahim", ["chittagong"]),
                  "karim": add_annotator(store, "karim", ["chittagong", "sylhet", "urdu"]),
                  "nila": add_annotator(store, "nila", ["sylhet"], ["translation_correction"])}
    with serve_app(review_store.path, review_config(overlap=2)) as url:
        yield Served(url, review_store, tokens)


# -- HTTP clients ---------------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str]
    url: str

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def http(method: str, url: str, *, token: str | None = None, body: Any = None, form: dict[str, Any] | None = None,
         opener: urllib.request.OpenerDirector | None = None, headers: dict[str, str] | None = None) -> Reply:
    """One request; JSON `body` or urlencoded `form`; `token` as a Bearer header; never raises on 4xx/5xx."""
    import urllib.parse

    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form, doseq=True).encode()
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    opener = opener or urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=30) as resp:
            return Reply(resp.status, resp.read(), dict(resp.headers), resp.url)
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, exc.read(), dict(exc.headers), url)


def browser_opener() -> urllib.request.OpenerDirector:
    """An opener that keeps cookies and does not follow redirects (a minimal browser)."""
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()), _NoRedirect)


def hidden(html: str, name: str = "csrf") -> str:
    import re

    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no hidden {name} input"
    return found.group(1)


def login(url: str, token: str) -> urllib.request.OpenerDirector:
    opener = browser_opener()
    page = http("GET", f"{url}/login", opener=opener)
    reply = http("POST", f"{url}/login", form={"token": token, "csrf": hidden(page.text)}, opener=opener)
    assert reply.status == 303, reply.text
    return opener


@pytest.fixture(scope="session")
def rv() -> Any:
    """This module's helpers (http, login, hidden, build_review_store, serve_app, …)."""
    return _THIS


# taken while this module is being imported: every tests/*/conftest.py is named `conftest`, so
# sys.modules["conftest"] names whichever was imported last by the time a test runs
_THIS = sys.modules[__name__]
