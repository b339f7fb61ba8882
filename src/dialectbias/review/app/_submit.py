"""Submitting an annotation from the task page's form (the API's submissions go through `store_annotation`
too): CSRF-checked, validated by the queue kind, stored as the caller's own annotation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse, Response

from dialectbias.review._annotators import Task, annotator_named, task_of
from dialectbias.review._kinds import AnnotationError, ReviewConfig, queue_kinds, save_annotation
from dialectbias.review.app._deps import State, log, session_of
from dialectbias.review.app._items import form_data, task_context
from dialectbias.review.app._sessions import keep_form, safe_next, same
from dialectbias.store import Store

router = APIRouter()
MAX_COMMENT_CHARS = 5000


@router.post("/task/{task_id}")
async def submit(request: Request, state: State, task_id: str) -> Response:
    session = await run_in_threadpool(session_of, state, request)
    form = await request.form()
    if session is None:  # the server restarted or the session ended: keep the answer through the log-in
        kept = keep_form([(k, str(v)) for k, v in form.multi_items()])
        return state.login_page(401, kept=kept, next_page=safe_next(f"/task/{task_id}") if kept else "",
                                notice="You were logged out (the review server restarted or your session ended). "
                                       "Log in again: your answers are kept, and you can check them before "
                                       "saving." if kept else "")
    if not same(str(form.get("csrf", "")), session.csrf):
        return state.page("message.html", 403, message="The form expired; reload the page and submit again.",
                          csrf=session.csrf)
    data = form_data([(k, str(v)) for k, v in form.multi_items()])

    def write() -> tuple[str, Any]:
        with state.open() as store:
            annotator = annotator_named(store, session.annotator)
            task = task_of(store, annotator, task_id) if annotator else None
            if task is None or annotator is None:
                return "missing", None
            try:
                store_annotation(state.config, store, task, data)
            except AnnotationError as exc:
                return "invalid", exc.problems
            return "ok", task

    outcome, detail = await run_in_threadpool(write)
    if outcome == "missing":
        return state.page("message.html", 404, message="No such task.", csrf=session.csrf)
    if outcome == "invalid":
        context = await run_in_threadpool(task_context, state, session, task_id, data, detail)
        if context is None:
            return state.page("message.html", 404, message="No such task.", csrf=session.csrf)
        return state.page("task.html", 422, csrf=session.csrf, **context)
    return RedirectResponse(f"/queue/{detail.queue}?after={task_id}", status_code=303)


def store_annotation(config: ReviewConfig, store: Store, task: Task, data: Mapping[str, Any]
                     ) -> tuple[bool, dict[str, Any]]:
    """Validate submitted data through the task's queue kind and store it as the task annotator's answer:
    (whether it changed their answer, the stored value); AnnotationError names each bad field."""
    kind = queue_kinds()[task.queue]
    target = kind.target(config, store, task.target_id)
    if target is None:
        raise AnnotationError({"target": "this item no longer needs review"})
    comment = data.get("comment") or ""
    if not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS:
        raise AnnotationError({"comment": "must be text of at most 5,000 characters"})
    value = kind.annotation(config, store, target, data)
    changed = save_annotation(store, task.target_id, task.annotator, kind.annotation_kind, value, comment)
    log.info("review app: %s annotated %s task %s", task.annotator, task.queue, task.task_id)
    return changed, value
