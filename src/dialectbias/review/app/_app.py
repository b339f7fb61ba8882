"""The review app (SPEC §6): server-rendered pages for annotators and a small JSON API, over one store.

Pages need a browser session (log in with the personal token); the API needs `Authorization: Bearer TOKEN`.
Every write is the caller's own annotation (`annotations` row with their name and the time); a task id that
is not the caller's answers 404, as if it did not exist. Forms carry a per-session CSRF token; Jinja2
autoescapes every text; SQL is parameterised; each request opens its own connection to the store (WAL, busy
timeout), so several annotators can write at once.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from dialectbias.review._annotators import (
    Annotator,
    Task,
    annotator_for_token,
    annotator_named,
    assign,
    hash_token,
    task_of,
    tasks_of,
)
from dialectbias.review._kinds import AnnotationError, ReviewConfig, queue_kinds, save_annotation
from dialectbias.review._sample import stored_sample
from dialectbias.review._targets import language_tag, text_direction
from dialectbias.review.app._sessions import LOGIN_CSRF_COOKIE, SESSION_COOKIE, SESSION_SECONDS, Session, Sessions, same
from dialectbias.store import Store, annotator_token_hash, latest_annotations, stored_image

log = logging.getLogger("dialectbias.review")
T = TypeVar("T")

PACKAGE_DIR = Path(str(resources.files("dialectbias.review.app")))
#: assignments are refreshed (new targets given out) at most this often, when someone opens the home page
ASSIGN_EVERY_S = 30.0
MAX_BODY_BYTES = 1_000_000
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


@dataclass
class AppState:
    store_path: Path
    config: ReviewConfig
    title: str
    sessions: Sessions
    last_assign: float = 0.0
    assign_lock: threading.Lock = field(default_factory=threading.Lock)


def create_app(store_path: str | Path, config: ReviewConfig, *, title: str = "dialectbias review",
               assign_on_start: bool = True) -> FastAPI:
    """The app over the store at `store_path` (it must exist; `review serve` builds `config` from the
    experiment file)."""
    state = AppState(Path(store_path), config, title, Sessions())
    if assign_on_start:
        with _open(state) as store:
            assign(store, config)
        state.last_assign = time.time()
    env = Environment(loader=FileSystemLoader(str(PACKAGE_DIR / "templates")),
                      autoescape=select_autoescape(["html"], default=True), trim_blocks=True, lstrip_blocks=True)
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.review = state

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Any]) -> Response:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            return JSONResponse({"detail": "request body too large"}, status_code=413)
        response: Response = await call_next(request)
        for k, v in SECURITY_HEADERS.items():
            response.headers.setdefault(k, v)
        return response

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(name).render(title=state.title, **context)
        return HTMLResponse(html, status_code=status)

    def login_page(status: int, error: str = "") -> HTMLResponse:
        csrf = secrets.token_urlsafe(32)
        response = page("login.html", status, csrf=csrf, error=error)
        response.set_cookie(LOGIN_CSRF_COOKIE, csrf, httponly=True, samesite="strict", max_age=3600, path="/login")
        return response

    def session_of(request: Request) -> Session | None:
        session = state.sessions.get(request.cookies.get(SESSION_COOKIE))
        if session is None:
            return None
        with _open(state) as store:
            token_hash = annotator_token_hash(store, session.annotator)
        if not same(token_hash, session.token_hash):  # token rotated or annotator gone
            state.sessions.drop(request.cookies.get(SESSION_COOKIE))
            return None
        return session

    def annotator_of(store: Store, session: Session) -> Annotator | None:
        return annotator_named(store, session.annotator)

    # -- pages -----------------------------------------------------------------------------------------
    @app.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request) -> Response:
        return login_page(200)

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        if not same(str(form.get("csrf", "")), request.cookies.get(LOGIN_CSRF_COOKIE)):
            return login_page(403, "The form expired; please try again.")
        token = str(form.get("token", "")).strip()

        def check() -> Annotator | None:
            with _open(state) as store:
                return annotator_for_token(store, token)

        annotator = await run_in_threadpool(check)
        if annotator is None:
            log.info("review app: a login with an unknown token was refused")
            return login_page(401, "Unknown token.")
        sid, _ = state.sessions.create(annotator.name, hash_token(token))
        log.info("review app: %s logged in", annotator.name)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict", max_age=SESSION_SECONDS, path="/")
        response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
        return response

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        session = state.sessions.get(request.cookies.get(SESSION_COOKIE))
        form = await request.form()
        if session is None or not same(str(form.get("csrf", "")), session.csrf):
            return login_page(403, "The form expired; please log in again.")
        state.sessions.drop(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    @app.get("/", response_class=HTMLResponse)
    async def home(request: Request, done: str = "") -> Response:
        session = await run_in_threadpool(session_of, request)
        if session is None:
            return login_page(401)

        def build() -> dict[str, Any] | None:
            _maybe_assign(state)
            with _open(state) as store:
                annotator = annotator_of(store, session)
                if annotator is None:
                    return None
                return {"annotator": annotator, "queues": _progress(store, annotator)}

        context = await run_in_threadpool(build)
        if context is None:
            return login_page(401)
        finished = queue_kinds()[done].title if done in queue_kinds() else ""
        return page("home.html", csrf=session.csrf, finished=finished, **context)

    @app.get("/queue/{queue}")
    async def next_task(request: Request, queue: str, after: str = "") -> Response:
        session = await run_in_threadpool(session_of, request)
        if session is None:
            return login_page(401)

        def find() -> Task | bool | None:
            with _open(state) as store:
                annotator = annotator_of(store, session)
                if annotator is None or queue not in annotator.queues:
                    return False
                return _next_open(tasks_of(store, annotator, queue), after)

        found = await run_in_threadpool(find)
        if found is False:
            return page("message.html", 404, message="No such queue.", csrf=session.csrf)
        if found is None:
            return RedirectResponse("/?done=" + queue if queue in queue_kinds() else "/", status_code=303)
        assert isinstance(found, Task)
        return RedirectResponse(f"/task/{found.task_id}", status_code=303)

    @app.get("/task/{task_id}", response_class=HTMLResponse)
    async def task_page(request: Request, task_id: str) -> Response:
        session = await run_in_threadpool(session_of, request)
        if session is None:
            return login_page(401)
        context = await run_in_threadpool(_task_context, state, session, task_id, None, None)
        if context is None:
            return page("message.html", 404, message="No such task.", csrf=session.csrf)
        if context["target"] is not None and context["target"].image:
            state.sessions.allow_image(session, context["target"].image)
        return page("task.html", csrf=session.csrf, **context)

    @app.post("/task/{task_id}")
    async def submit(request: Request, task_id: str) -> Response:
        session = await run_in_threadpool(session_of, request)
        if session is None:
            return login_page(401)
        form = await request.form()
        if not same(str(form.get("csrf", "")), session.csrf):
            return page("message.html", 403, message="The form expired (missing or wrong CSRF token); reload the "
                        "page and submit again.", csrf=session.csrf)
        data: dict[str, Any] = {}
        for key in form:
            values = [str(v) for v in form.getlist(key)]
            data[key] = values if len(values) > 1 or key == "categories" else values[0]

        def write() -> tuple[str, Any]:
            with _open(state) as store:
                annotator = annotator_of(store, session)
                task = task_of(store, annotator, task_id) if annotator else None
                if task is None or annotator is None:
                    return "missing", None
                try:
                    _store_annotation(state.config, store, task, data)
                except AnnotationError as exc:
                    return "invalid", exc.problems
                return "ok", task

        outcome, detail = await run_in_threadpool(write)
        if outcome == "missing":
            return page("message.html", 404, message="No such task.", csrf=session.csrf)
        if outcome == "invalid":
            context = await run_in_threadpool(_task_context, state, session, task_id, data, detail)
            if context is None:
                return page("message.html", 404, message="No such task.", csrf=session.csrf)
            return page("task.html", 422, csrf=session.csrf, **context)
        return RedirectResponse(f"/queue/{detail.queue}?after={task_id}", status_code=303)

    @app.get("/image/{sha256}")
    async def image(request: Request, sha256: str) -> Response:
        session = await run_in_threadpool(session_of, request)
        if session is None or sha256 not in session.images:
            return Response(status_code=401 if session is None else 404)

        def read() -> tuple[str, bytes] | None:
            with _open(state) as store:
                return stored_image(store, sha256)

        found = await run_in_threadpool(read)
        if found is None:
            return Response(status_code=404)
        return Response(found[1], media_type=found[0])

    @app.get("/static/{name}")
    async def static(name: str) -> Response:
        files = {"review.css": "text/css; charset=utf-8", "review.js": "text/javascript; charset=utf-8"}
        if name not in files:
            return Response(status_code=404)
        return Response((PACKAGE_DIR / "static" / name).read_bytes(), media_type=files[name],
                        headers={"Cache-Control": "no-cache"})

    # -- JSON API ----------------------------------------------------------------------------------------
    def bearer(request: Request) -> Annotator | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        with _open(state) as store:
            return annotator_for_token(store, token.strip())

    def unauthorized() -> JSONResponse:
        return JSONResponse({"detail": "a valid token is required (Authorization: Bearer TOKEN)"}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    @app.get("/api/tasks")
    async def api_tasks(request: Request, all: bool = False) -> Response:
        annotator = await run_in_threadpool(bearer, request)
        if annotator is None:
            return unauthorized()

        def listing() -> list[dict[str, Any]]:
            _maybe_assign(state)
            with _open(state) as store:
                return [_task_json(t) for t in tasks_of(store, annotator) if all or not t.done]

        return JSONResponse(await run_in_threadpool(listing))

    @app.get("/api/tasks/{task_id}")
    async def api_task(request: Request, task_id: str) -> Response:
        annotator = await run_in_threadpool(bearer, request)
        if annotator is None:
            return unauthorized()

        def one() -> dict[str, Any] | None:
            with _open(state) as store:
                task = task_of(store, annotator, task_id)
                if task is None:
                    return None
                kind = queue_kinds()[task.queue]
                target = kind.target(state.config, store, task.target_id)
                mine = latest_annotations(store, kind.annotation_kind, annotator.name).get((task.target_id,
                                                                                           annotator.name))
                return _task_json(task) | {
                    "target": target.model_dump() if target else None,
                    "fields": [f.model_dump() for f in kind.fields(state.config, target)] if target else [],
                    "annotation": None if mine is None else {"value": mine[0], "comment": mine[1],
                                                             "created_at": mine[2]}}

        found = await run_in_threadpool(one)
        if found is None:
            return JSONResponse({"detail": "no such task"}, status_code=404)
        return JSONResponse(found)

    @app.post("/api/tasks/{task_id}/annotation")
    async def api_annotate(request: Request, task_id: str) -> Response:
        annotator = await run_in_threadpool(bearer, request)
        if annotator is None:
            return unauthorized()
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"detail": "the body must be a JSON object of the queue's fields"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"detail": "the body must be a JSON object of the queue's fields"}, status_code=400)

        def write() -> tuple[int, dict[str, Any]]:
            with _open(state) as store:
                task = task_of(store, annotator, task_id)
                if task is None:
                    return 404, {"detail": "no such task"}
                try:
                    changed, value = _store_annotation(state.config, store, task, body)
                except AnnotationError as exc:
                    return 422, {"detail": exc.problems}
                return 200, {"stored": changed, "value": value, "task": _task_json(task) | {"done": True}}

        status, payload = await run_in_threadpool(write)
        return JSONResponse(payload, status_code=status)

    @app.exception_handler(404)
    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": "not found"}, status_code=404)
        return page("message.html", 404, message="Not found.", csrf="")

    return app


# -- helpers -------------------------------------------------------------------------------------------------


@contextmanager
def _open(state: AppState) -> Iterator[Store]:
    store = Store.open(state.store_path, create=False)
    try:
        yield store
    finally:
        store.close()


def _maybe_assign(state: AppState) -> None:
    """Give out targets that appeared since the last time (a new run, a new annotator), at most every 30 s."""
    if time.time() - state.last_assign < ASSIGN_EVERY_S or not state.assign_lock.acquire(blocking=False):
        return
    try:
        with _open(state) as store:
            assign(store, state.config)
        state.last_assign = time.time()
    finally:
        state.assign_lock.release()


def _task_json(task: Task) -> dict[str, Any]:
    return {"id": task.task_id, "queue": task.queue, "dialect": task.dialect, "item_id": task.item_id,
            "target_id": task.target_id, "done": task.done}


def _next_open(tasks: list[Task], after: str) -> Task | None:
    """The first open task after `after` in the queue's order, else the first open one."""
    ids = [t.task_id for t in tasks]
    start = ids.index(after) + 1 if after in ids else 0
    for t in [*tasks[start:], *tasks[:start]]:
        if not t.done and t.task_id != after:
            return t
    return None


def _progress(store: Store, annotator: Annotator) -> list[dict[str, Any]]:
    out = []
    for name, kind in queue_kinds().items():
        if name not in annotator.queues:
            continue
        tasks = tasks_of(store, annotator, name)
        sample = stored_sample(store, name)
        out.append({"name": name, "title": kind.title, "description": kind.description, "total": len(tasks),
                    "done": sum(t.done for t in tasks),
                    "sample": None if sample is None else
                    f"a sample: {sample.per} per {' × '.join(sample.by) or 'queue'} (seed {sample.seed})"})
    return out


def _store_annotation(config: ReviewConfig, store: Store, task: Task, data: Mapping[str, Any]
                      ) -> tuple[bool, dict[str, Any]]:
    kind = queue_kinds()[task.queue]
    target = kind.target(config, store, task.target_id)
    if target is None:
        raise AnnotationError({"target": "this item no longer needs review"})
    comment = data.get("comment") or ""
    if not isinstance(comment, str) or len(comment) > 5000:
        raise AnnotationError({"comment": "must be text of at most 5,000 characters"})
    value = kind.annotation(config, store, target, data)
    changed = save_annotation(store, task.target_id, task.annotator, kind.annotation_kind, value, comment)
    log.info("review app: %s annotated %s task %s", task.annotator, task.queue, task.task_id)
    return changed, value


def _task_context(state: AppState, session: Session, task_id: str, submitted: Mapping[str, Any] | None,
                  errors: Mapping[str, str] | None) -> dict[str, Any] | None:
    with _open(state) as store:
        annotator = annotator_named(store, session.annotator)
        if annotator is None:
            return None
        task = task_of(store, annotator, task_id)
        if task is None:
            return None
        kind = queue_kinds()[task.queue]
        target = kind.target(state.config, store, task.target_id)
        mine = latest_annotations(store, kind.annotation_kind, annotator.name).get((task.target_id, annotator.name))
        queue_tasks = tasks_of(store, annotator, task.queue)
    values: dict[str, Any] = dict(submitted or {})
    comment = str(values.get("comment", ""))
    if submitted is None and mine is not None:
        values, comment = kind.form_values(mine[0]), mine[1]
    fields = kind.fields(state.config, target) if target is not None else []
    for f in fields:  # correction boxes start from the machine's text
        if f.kind == "text" and f.name not in values:
            values[f.name] = f.default
    return {"annotator": annotator, "task": task, "kind": kind, "target": target, "fields": fields,
            "values": values, "comment": comment, "errors": dict(errors or {}),
            "panels": [_panel_view(state.config, p) for p in (target.panels if target else [])],
            "dialect_lang": language_tag(task.dialect, state.config.dialects, state.config.language),
            "dialect_dir": text_direction(language_tag(task.dialect, state.config.dialects, state.config.language)),
            "progress": {"done": sum(t.done for t in queue_tasks), "total": len(queue_tasks),
                         "position": next((i + 1 for i, t in enumerate(queue_tasks) if t.task_id == task_id), 0)},
            "previous": mine is not None}


def _panel_view(config: ReviewConfig, panel: Any) -> dict[str, Any]:
    lang = language_tag(panel.variant, config.dialects, config.language) if panel.variant else None
    return {"label": panel.label, "text": panel.text, "role": panel.role, "lang": lang,
            "dir": text_direction(lang) if lang else "auto",
            "wide": panel.role in ("reasoning", "info", "reference")}
