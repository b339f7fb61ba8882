"""The JSON API for scripts (`Authorization: Bearer TOKEN`): the caller's tasks, one task with its target
and form, and submitting an annotation (validated and stored exactly like the page's form)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from dialectbias.review._annotators import Task, task_of, tasks_of
from dialectbias.review._kinds import AnnotationError, queue_kinds
from dialectbias.review.app._deps import State, bearer, unauthorized
from dialectbias.review.app._submit import store_annotation
from dialectbias.store import latest_annotations

router = APIRouter(prefix="/api")


@router.get("/tasks")
async def api_tasks(request: Request, state: State, all: bool = False) -> Response:
    annotator = await run_in_threadpool(bearer, state, request)
    if annotator is None:
        return unauthorized()

    def listing() -> list[dict[str, Any]]:
        state.maybe_assign()
        with state.open() as store:
            return [task_json(t) for t in tasks_of(store, annotator) if all or not t.done]

    return JSONResponse(await run_in_threadpool(listing))


@router.get("/tasks/{task_id}")
async def api_task(request: Request, state: State, task_id: str) -> Response:
    annotator = await run_in_threadpool(bearer, state, request)
    if annotator is None:
        return unauthorized()

    def one() -> dict[str, Any] | None:
        with state.open() as store:
            task = task_of(store, annotator, task_id)
            if task is None:
                return None
            kind = queue_kinds()[task.queue]
            target = kind.target(state.config, store, task.target_id)
            mine = latest_annotations(store, kind.annotation_kind, annotator.name).get((task.target_id,
                                                                                       annotator.name))
            return task_json(task) | {
                "target": target.model_dump() if target else None,
                "fields": [f.model_dump() for f in kind.fields(state.config, target)] if target else [],
                "annotation": None if mine is None else {"value": mine[0], "comment": mine[1],
                                                         "created_at": mine[2]}}

    found = await run_in_threadpool(one)
    if found is None:
        return JSONResponse({"detail": "no such task"}, status_code=404)
    return JSONResponse(found)


@router.post("/tasks/{task_id}/annotation")
async def api_annotate(request: Request, state: State, task_id: str) -> Response:
    annotator = await run_in_threadpool(bearer, state, request)
    if annotator is None:
        return unauthorized()
    try:
        body = await request.json()
    except ValueError:
        return JSONResponse({"detail": "the body must be a JSON object of the queue's fields"}, status_code=400)
    if not isinstance(body, dict):
        return JSONResponse({"detail": "the body must be a JSON object of the queue's fields"}, status_code=400)

    def write() -> tuple[int, dict[str, Any]]:
        with state.open() as store:
            task = task_of(store, annotator, task_id)
            if task is None:
                return 404, {"detail": "no such task"}
            try:
                changed, value = store_annotation(state.config, store, task, body)
            except AnnotationError as exc:
                return 422, {"detail": exc.problems}
            return 200, {"stored": changed, "value": value, "task": task_json(task) | {"done": True}}

    status, payload = await run_in_threadpool(write)
    return JSONResponse(payload, status_code=status)


def task_json(task: Task) -> dict[str, Any]:
    return {"id": task.task_id, "queue": task.queue, "dialect": task.dialect, "item_id": task.item_id,
            "target_id": task.target_id, "done": task.done}
