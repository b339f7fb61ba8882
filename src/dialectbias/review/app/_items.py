"""The annotator's pages: their queues with progress (home), the next open task of a queue, a task's page
(what to annotate and the form), the images shown on it, and the static files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from dialectbias.review._annotators import Annotator, Task, annotator_named, task_of, tasks_of
from dialectbias.review._kinds import ReviewConfig, queue_kinds
from dialectbias.review._sample import stored_sample
from dialectbias.review._targets import Panel, language_tag, text_direction
from dialectbias.review.app._deps import PACKAGE_DIR, AppState, State, session_of
from dialectbias.review.app._sessions import Session, safe_next
from dialectbias.store import Store, latest_annotations, stored_image

router = APIRouter()

#: at most this many characters of a text are on the page (a 1 MB text made a 6 MB page that took minutes
#: to render); the whole text is one click away (`/task/{id}/text/{panel}`), behind the same session
PANEL_CHARS = 10_000
#: the judge's values shown under the texts (internal names left out: the annotator needs the scores)
HIDDEN_DETAILS = frozenset({"rubric", "judge", "flags", "field group", "fields", "model"})
DETAIL_CHARS = 500

STATIC_FILES = {"review.css": "text/css; charset=utf-8", "review.js": "text/javascript; charset=utf-8"}


@router.get("/", response_class=HTMLResponse)
async def home(request: Request, state: State, done: str = "") -> Response:
    session = await run_in_threadpool(session_of, state, request)
    if session is None:
        return state.login_page(401)

    def build() -> dict[str, Any] | None:
        state.maybe_assign()
        with state.open() as store:
            annotator = annotator_named(store, session.annotator)
            if annotator is None:
                return None
            return {"annotator": annotator, "queues": _progress(store, annotator)}

    context = await run_in_threadpool(build)
    if context is None:
        return state.login_page(401)
    finished = queue_kinds()[done].title if done in queue_kinds() else ""
    return state.page("home.html", csrf=session.csrf, finished=finished, **context,
                      listed=[q for q in context["queues"] if q["total"]],
                      empty=[q for q in context["queues"] if not q["total"]])


@router.get("/queue/{queue}")
async def next_task(request: Request, state: State, queue: str, after: str = "") -> Response:
    session = await run_in_threadpool(session_of, state, request)
    if session is None:
        return state.login_page(401)

    def find() -> Task | bool | None:
        with state.open() as store:
            annotator = annotator_named(store, session.annotator)
            if annotator is None or queue not in annotator.queues:
                return False
            return _next_open(tasks_of(store, annotator, queue), after)

    found = await run_in_threadpool(find)
    if found is False:
        return state.page("message.html", 404, message="No such queue.", csrf=session.csrf)
    if found is None:
        return RedirectResponse("/?done=" + queue if queue in queue_kinds() else "/", status_code=303)
    assert isinstance(found, Task)
    return RedirectResponse(f"/task/{found.task_id}", status_code=303)


@router.get("/task/{task_id}", response_class=HTMLResponse)
async def task_page(request: Request, state: State, task_id: str) -> Response:
    session = await run_in_threadpool(session_of, state, request)
    if session is None:  # back to this item after the log-in
        return state.login_page(401, next_page=safe_next(f"/task/{task_id}"))
    kept = state.sessions.take_restored(session, f"/task/{task_id}")
    restored = form_data(kept) if kept else None
    context = await run_in_threadpool(task_context, state, session, task_id, restored, None)
    if context is None:
        return state.page("message.html", 404, message="No such task.", csrf=session.csrf)
    if context["target"] is not None and context["target"].image:
        state.sessions.allow_image(session, context["target"].image)
    return state.page("task.html", csrf=session.csrf, restored=restored is not None, **context)


@router.get("/task/{task_id}/text/{index}")
async def panel_text(request: Request, state: State, task_id: str, index: int) -> Response:
    """The whole text of one of a task's panels (the page shows at most PANEL_CHARS of it), as plain text."""
    session = await run_in_threadpool(session_of, state, request)
    if session is None:
        return Response(status_code=401)
    context = await run_in_threadpool(task_context, state, session, task_id, None, None)
    target = context["target"] if context else None
    if target is None or not 0 <= index < len(target.panels):
        return Response(status_code=404)
    return PlainTextResponse(target.panels[index].text)


@router.get("/image/{sha256}")
async def image(request: Request, state: State, sha256: str) -> Response:
    session = await run_in_threadpool(session_of, state, request)
    if session is None or sha256 not in session.images:
        return Response(status_code=401 if session is None else 404)

    def read() -> tuple[str, bytes] | None:
        with state.open() as store:
            return stored_image(store, sha256)

    found = await run_in_threadpool(read)
    if found is None:
        return Response(status_code=404)
    return Response(found[1], media_type=found[0])


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC_FILES:
        return Response(status_code=404)
    return Response((PACKAGE_DIR / "static" / name).read_bytes(), media_type=STATIC_FILES[name],
                    headers={"Cache-Control": "no-cache"})


# -- what the pages show ---------------------------------------------------------------------------------


def form_data(pairs: list[tuple[str, str]] | Mapping[str, list[str]]) -> dict[str, Any]:
    """A posted form as the queue kinds read it: one value per field, a list for repeated fields (and
    always for `categories`, the error codes' boxes)."""
    grouped: dict[str, list[str]] = {}
    for key, value in (pairs.items() if isinstance(pairs, Mapping) else
                       [(k, [v]) for k, v in pairs]):
        grouped.setdefault(key, []).extend(value)
    return {k: v if len(v) > 1 or k == "categories" else v[0] for k, v in grouped.items()}


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


def task_context(state: AppState, session: Session, task_id: str, submitted: Mapping[str, Any] | None,
                 errors: Mapping[str, str] | None) -> dict[str, Any] | None:
    """What the task page shows: the target, the form with the caller's previous (or just submitted)
    answer and its problems, the queue's progress; None when the task is not the caller's."""
    with state.open() as store:
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
    config = state.config
    lang = language_tag(task.dialect, config.dialects, config.language)
    return {"annotator": annotator, "task": task, "kind": kind, "target": target, "fields": fields,
            "values": values, "comment": comment, "errors": dict(errors or {}),
            "panels": [_panel_view(config, p, f"/task/{task_id}/text/{i}")
                       for i, p in enumerate(target.panels if target else [])],
            "shown_details": _shown_details(target.details if target else {}),
            "dialect_lang": lang, "dialect_dir": text_direction(lang),
            "progress": {"done": sum(t.done for t in queue_tasks), "total": len(queue_tasks),
                         "position": next((i + 1 for i, t in enumerate(queue_tasks) if t.task_id == task_id), 0)},
            "previous": mine is not None}


def _panel_view(config: ReviewConfig, panel: Panel, whole: str) -> dict[str, Any]:
    """A panel as the page shows it: at most PANEL_CHARS characters, and when there are more, how many and
    where the whole text is."""
    lang = language_tag(panel.variant, config.dialects, config.language) if panel.variant else None
    shortened = len(panel.text) > PANEL_CHARS
    return {"label": panel.label, "text": panel.text[:PANEL_CHARS] if shortened else panel.text,
            "role": panel.role, "lang": lang, "dir": text_direction(lang) if lang else "auto",
            "wide": panel.role in ("reasoning", "info", "reference"),
            "shortened": f"{len(panel.text):,}" if shortened else "", "whole": whole, "shown": f"{PANEL_CHARS:,}"}


def _shown_details(details: Mapping[str, Any]) -> dict[str, str]:
    """The automatic judge's values in plain words ("judge factual_correctness" -> "factual correctness")."""
    out = {}
    for key, value in details.items():
        if key in HIDDEN_DETAILS or isinstance(value, Mapping):
            continue
        label = key.removeprefix("judge ").replace("_", " ")
        text = "" if value is None else str(value)
        out[label] = text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + " …"
    return out
