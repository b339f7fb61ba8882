"""The explorer's JSON API: the evidence behind an answer (`GET /api/evidence?item_id=&variant=&model=`,
`&experiment=` when several are loaded), a stored text in full (`GET /api/text?request_id=&part=`: the pages
cap long texts and link here), and the report's tables (`GET /api/tables`). 400 for a missing parameter, 404
for an unknown id, both as JSON."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from dialectbias.store import request_evidence
from dialectbias.view._app import State, ViewState
from dialectbias.view._evidence import evidence
from dialectbias.view._experiments import LoadedExperiment
from dialectbias.view._text import messages_text

router = APIRouter(prefix="/api")


def _error(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def _experiment(state: ViewState, request: Request) -> LoadedExperiment | JSONResponse:
    key = request.query_params.get("experiment")
    if not key and len(state.experiments) > 1:
        return _error(400, f"several experiments are loaded: add experiment= (one of {', '.join(state.experiments)})")
    loaded = state.experiment(key)
    if loaded is None:
        return _error(404, f"no experiment {key!r} (loaded: {', '.join(state.experiments)})")
    return loaded


def _missing(request: Request, names: tuple[str, ...]) -> JSONResponse | None:
    missing = [n for n in names if not request.query_params.get(n)]
    return _error(400, f"missing parameter(s): {', '.join(missing)}") if missing else None


@router.get("/evidence")
async def get_evidence(request: Request, state: State) -> Response:
    if (bad := _missing(request, ("item_id", "variant", "model"))) is not None:
        return bad
    loaded = _experiment(state, request)
    if isinstance(loaded, JSONResponse):
        return loaded
    if stale := await run_in_threadpool(state.tables.stale, loaded):
        return _error(409, stale)
    q = request.query_params

    def read() -> dict[str, Any] | None:
        with loaded.open() as store:
            return evidence(loaded, store, q["item_id"], q["variant"], q["model"])

    found = await run_in_threadpool(read)
    if found is None:
        return _error(404, f"no answer of model {q['model']!r} to item {q['item_id']!r} in variant {q['variant']!r} "
                           f"in experiment {loaded.key!r}")
    return JSONResponse(found)


#: the texts of a request `/api/text` serves
TEXT_PARTS = ("output", "prompt")


@router.get("/text")
async def get_text(request: Request, state: State) -> Response:
    """A request's whole output or prompt (`part=prompt`), as UTF-8 plain text."""
    if (bad := _missing(request, ("request_id",))) is not None:
        return bad
    loaded = _experiment(state, request)
    if isinstance(loaded, JSONResponse):
        return loaded
    part = request.query_params.get("part", "output")
    if part not in TEXT_PARTS:
        return _error(400, f"part={part!r}: one of {', '.join(TEXT_PARTS)}")
    request_id = request.query_params["request_id"]

    def read() -> str | None:
        with loaded.open() as store:
            r = request_evidence(store, request_id)
            if r is None:
                return None
            if part == "prompt":
                return messages_text(store.resolve_messages(r.messages, images="ref"))
            return r.output or ""

    text = await run_in_threadpool(read)
    if text is None:
        return _error(404, f"no request {request_id!r} in experiment {loaded.key!r}")
    return PlainTextResponse(text, media_type="text/plain; charset=utf-8")


@router.get("/tables")
async def get_tables(request: Request, state: State) -> Response:
    """The report's tables of an experiment: name, heading, columns, rows (the CSV's exact texts)."""
    loaded = _experiment(state, request)
    if isinstance(loaded, JSONResponse):
        return loaded
    tables = await run_in_threadpool(state.tables.get, loaded)
    return JSONResponse({"experiment": loaded.key, "title": tables.title, "alert": tables.alert,
                         "tables": [{"name": t.name, "heading": t.heading, "columns": t.columns, "rows": t.rows}
                                    for t in tables.tables]})
