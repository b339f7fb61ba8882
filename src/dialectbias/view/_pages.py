"""The explorer's pages: the experiments, each one's report tables (sortable and filterable; without
JavaScript, `?table=&sort=&desc=&f.<column>=` do it on the server), the answers behind a cell, one answer's
evidence beside the standard variant's, and comparisons (two experiments, or two models of one)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse, Response

from dialectbias.dialects import STANDARD
from dialectbias.store import MAX_CELL_ROWS, cell_rows
from dialectbias.view._app import State, ViewState
from dialectbias.view._compare import TableDiff, flipped, table_diff, verdicts
from dialectbias.view._evidence import evidence
from dialectbias.view._experiments import LoadedExperiment
from dialectbias.view._tables import ReportTable, cell_filters, display, filtered_rows
from dialectbias.view._text import PAGE_CHARS, ShownText, pretty, shown_text, variant_lang

router = APIRouter()

#: a filter offers a list of values for a key column with at most this many distinct values
MAX_CHOICES = 60


def _loaded(state: ViewState, key: str) -> LoadedExperiment:
    loaded = state.experiment(key)
    if loaded is None:
        raise HTTPException(404, f"experiment {key!r}")
    return loaded


def _text(loaded: LoadedExperiment, text: str | None, variant: str | None, url: str = "") -> ShownText:
    return shown_text(text, variant_lang(variant, dict(loaded.exp.dialects), loaded.language), url)


@router.get("/")
async def home(state: State) -> Response:
    if len(state.experiments) == 1:
        return RedirectResponse(f"/exp/{next(iter(state.experiments))}", status_code=303)
    return state.page("home.html", experiments=list(state.experiments.values()))


def _table_view(loaded: LoadedExperiment, table: ReportTable, request: Request) -> dict[str, Any]:
    """A table for the page: choices per key column, rows (filtered and sorted on the server when the query asks
    for this table), each cell with its display text, exact CSV text and link to the answers behind it."""
    q = request.query_params
    mine = q.get("table") == table.name
    filters = {k[2:]: v for k, v in q.items() if mine and k.startswith("f.") and v}
    rows = filtered_rows(table, filters, q.get("sort") if mine else None, q.get("desc") == "1")
    choices = {}
    for c in table.keys:
        values = sorted(set(table.column(c)))
        if 1 < len(values) <= MAX_CHOICES:
            choices[c] = values
    shown = []
    for row in rows:
        cells = []
        for c, v in zip(table.columns, row, strict=True):
            filters_of = cell_filters(loaded, table, row, c)
            link = f"/exp/{loaded.key}/items?{urlencode(filters_of)}" if filters_of else ""
            cells.append({"text": display(v), "value": v, "link": link})
        shown.append(cells)
    sort = q.get("sort") if mine else None
    return {"table": table, "rows": shown, "choices": choices, "filters": filters, "sort": sort,
            "desc": q.get("desc") == "1"}


@router.get("/exp/{key}")
async def experiment_page(key: str, request: Request, state: State) -> Response:
    loaded = _loaded(state, key)
    tables = await run_in_threadpool(state.tables.get, loaded)
    views = [_table_view(loaded, t, request) for t in tables.tables]
    return state.page("tables.html", loaded=loaded, tables=tables, views=views,
                      others=[e for e in state.experiments.values() if e.key != key])


@router.get("/exp/{key}/items")
async def items_page(key: str, request: Request, state: State) -> Response:
    loaded = _loaded(state, key)
    if stale := await run_in_threadpool(state.tables.stale, loaded):
        return state.page("message.html", 409, message=stale)
    q = request.query_params
    filters = {k: q[k] for k in ("model", "variant", "domain", "question_type", "item_id") if q.get(k)}

    def read() -> tuple[list[Any], int]:
        with loaded.open() as store:
            return cell_rows(store, model_id=filters.get("model"), variant=filters.get("variant"),
                             domain=filters.get("domain"), question_type=filters.get("question_type"),
                             item_id=filters.get("item_id"), exclude_models=loaded.judge_ids)

    rows, total = await run_in_threadpool(read)
    judges = sorted({j for r in rows for j in r.scores})
    previews = [_text(loaded, r.preview, r.variant) for r in rows]
    return state.page("items.html", loaded=loaded, filters=filters, rows=list(zip(rows, previews, strict=True)),
                      total=total, limit=MAX_CELL_ROWS, judges=judges, display=_score)


def _score(v: float | None) -> str:
    return "—" if v is None else display(repr(float(v)))


def _side(loaded: LoadedExperiment, ev: dict[str, Any] | None) -> dict[str, Any] | None:
    """One column of the item page: the variant's prompt, answer and judgments, texts capped."""
    if ev is None:
        return None
    base = f"/api/text?experiment={loaded.key}&request_id={ev['request_id']}"
    variant = ev["variant"]
    judgments = []
    for j in ev["judgments"]:
        jr = j["judge_request"] or {}
        jbase = f"/api/text?experiment={loaded.key}&request_id={j['request_id']}"
        judgments.append({**j, "reason_text": _text(loaded, j["reason"], None),
                          "raw_text": _text(loaded, j["raw_output"], variant, jbase),
                          "judge_prompt": _text(loaded, jr.get("prompt"), variant, jbase + "&part=prompt"),
                          "parsed_json": pretty(j["parsed"]), "checks_json": pretty(j["checks"]),
                          "clipped_json": pretty(j["clipped"]) if j["clipped"] else "",
                          "reask_text": _text(loaded, (j["reask"] or {}).get("output"), variant,
                                              f"/api/text?experiment={loaded.key}&request_id="
                                              f"{j['source_request_id']}") if j["reask"] else None})
    return {**ev, "prompt_text": _text(loaded, ev["prompt"], variant, base + "&part=prompt"),
            "output_text": _text(loaded, ev["output"], variant, base),
            "item_text": _text(loaded, ev["item_variants"].get(variant), variant),
            "request_json": pretty({k: v for k, v in (ev["request"] or {}).items()
                                    if k not in ("messages", "prompt", "output")}),
            "reask_texts": [(r, _text(loaded, r["output"], variant, f"/api/text?experiment={loaded.key}&request_id="
                                      f"{r['request_id']}")) for r in ev["reasks"]],
            "judgments_view": judgments}


@router.get("/exp/{key}/item")
async def item_page(key: str, request: Request, state: State) -> Response:
    loaded = _loaded(state, key)
    q = request.query_params
    missing = [n for n in ("item_id", "variant", "model") if not q.get(n)]
    if missing:
        return state.page("message.html", 400, message=f"Missing: {', '.join(missing)}.")
    if stale := await run_in_threadpool(state.tables.stale, loaded):
        return state.page("message.html", 409, message=stale)

    def read() -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        with loaded.open() as store:
            main = evidence(loaded, store, q["item_id"], q["variant"], q["model"])
            standard = None if q["variant"] == STANDARD else evidence(loaded, store, q["item_id"], STANDARD,
                                                                      q["model"])
            return main, standard

    main, standard = await run_in_threadpool(read)
    if main is None:
        raise HTTPException(404, f"no answer of model {q['model']!r} to item {q['item_id']!r} in {q['variant']!r}")
    api = urlencode({"experiment": loaded.key, **{k: q[k] for k in ("item_id", "variant", "model")}})
    return state.page("item.html", loaded=loaded, main=_side(loaded, main), standard=_side(loaded, standard),
                      score=_score, page_chars=PAGE_CHARS, api=f"/api/evidence?{api}")


@router.get("/compare")
async def compare_page(request: Request, state: State) -> Response:
    """`?a=KEY&b=KEY`: two experiments; `?a=KEY&model_a=M1&model_b=M2`: two models of one."""
    q = request.query_params
    a = state.experiment(q.get("a"))
    if a is None:
        return state.page("message.html", 400, message="Compare: choose experiment A (a=).")
    m1, m2 = q.get("model_a"), q.get("model_b")
    if m1 or m2:
        if not (m1 and m2) or m1 not in a.model_ids or m2 not in a.model_ids:
            return state.page("message.html", 400, message=f"Compare models: model_a and model_b must be models of "
                              f"{a.key} ({', '.join(a.model_ids)}).")
        b = a
    else:
        found = state.experiment(q.get("b"))
        if found is None:
            return state.page("message.html", 400, message="Compare: choose experiment B (b=).")
        b = found
    models = (m1, m2) if m1 and m2 else None

    def read() -> tuple[list[TableDiff], list[Any], str | None]:
        ta, tb = state.tables.get(a), state.tables.get(b)
        alert = ta.alert or tb.alert
        diffs = []
        for t in ta.tables:
            other = tb.table(t.name)
            if other is None:
                continue
            if models:
                column = next((c for c in ("model", "model_id") if c in t.columns), None)
                if column is None:
                    continue
                diffs.append(table_diff(t, other, model_column=column, models=models))
            else:
                diffs.append(table_diff(t, other))
        with a.open() as sa:
            va = verdicts(a, sa, list(models) if models else None)
        if b is a:
            vb = va
        else:
            with b.open() as sb:
                vb = verdicts(b, sb)
        return diffs, flipped(va, vb, models), alert

    diffs, flips, alert = await run_in_threadpool(read)
    return state.page("compare.html", a=a, b=b, models=models, diffs=[d for d in diffs if d.rows],
                      flips=flips, alert=alert, score=_score, fmt=display)
