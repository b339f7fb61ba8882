"""Logging in with the personal token and out: a browser session in an HttpOnly cookie (`_sessions`).

Log-ins are throttled per client address and overall (`_throttle`: exponential backoff after a few
failures; 429 with Retry-After and a message on the page). A form posted after the session ended (the
server restarted, the session expired) comes back on the login page as hidden fields; after the log-in the
annotator lands on the task again with the values filled in, checks them and saves (nothing is stored
without that last click, so a form another site posts cannot store anything in the annotator's name)."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dialectbias.review._annotators import Annotator, annotator_for_token, hash_token
from dialectbias.review.app._deps import State, log
from dialectbias.review.app._security import client_address, web_settings
from dialectbias.review.app._sessions import (
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    SESSION_SECONDS,
    keep_form,
    safe_next,
    same,
)

router = APIRouter()


@router.get("/login", response_class=HTMLResponse)
async def login_form(state: State) -> Response:
    return state.login_page(200)


@router.post("/login")
async def login(request: Request, state: State) -> Response:
    form = await request.form()
    kept = keep_form([(k, str(v)) for k, v in form.multi_items() if k.startswith("keep.")])
    kept = {k.removeprefix("keep."): v for k, v in kept.items()}
    next_page = safe_next(form.get("next"))
    client = client_address(web_settings(request), request)
    wait = state.throttle.wait(client)
    if wait > 0:
        seconds = math.ceil(wait)
        log.info("review app: a log-in was refused by the throttle (%d s to wait)", seconds)
        refused = state.login_page(429, f"Too many failed log-ins. Please wait {seconds} seconds, then try "
                                    "again.", kept=kept, next_page=next_page)
        refused.headers["Retry-After"] = str(seconds)
        return refused
    if not same(str(form.get("csrf", "")), request.cookies.get(LOGIN_CSRF_COOKIE)):
        return state.login_page(403, "The form expired; please try again.", kept=kept, next_page=next_page)
    token = str(form.get("token", "")).strip()

    def check() -> Annotator | None:
        with state.open() as store:
            return annotator_for_token(store, token)

    annotator = await run_in_threadpool(check)
    if annotator is None:
        state.throttle.failed(client)
        log.info("review app: a login with an unknown token was refused")
        return state.login_page(401, "Unknown token.", kept=kept, next_page=next_page)
    state.throttle.succeeded(client)
    sid, session = state.sessions.create(annotator.name, hash_token(token))
    state.sessions.restore(session, next_page, kept)
    log.info("review app: %s logged in", annotator.name)
    response = RedirectResponse(next_page or "/", status_code=303)
    response.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict", max_age=SESSION_SECONDS, path="/")
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response


@router.post("/logout")
async def logout(request: Request, state: State) -> Response:
    session = state.sessions.get(request.cookies.get(SESSION_COOKIE))
    form = await request.form()
    if session is None or not same(str(form.get("csrf", "")), session.csrf):
        return state.login_page(403, "The form expired; please log in again.")
    state.sessions.drop(request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
