"""Logging in with the personal token and out: a browser session in an HttpOnly cookie (`_sessions`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dialectbias.review._annotators import Annotator, annotator_for_token, hash_token
from dialectbias.review.app._deps import State, log
from dialectbias.review.app._sessions import LOGIN_CSRF_COOKIE, SESSION_COOKIE, SESSION_SECONDS, same

router = APIRouter()


@router.get("/login", response_class=HTMLResponse)
async def login_form(state: State) -> Response:
    return state.login_page(200)


@router.post("/login")
async def login(request: Request, state: State) -> Response:
    form = await request.form()
    if not same(str(form.get("csrf", "")), request.cookies.get(LOGIN_CSRF_COOKIE)):
        return state.login_page(403, "The form expired; please try again.")
    token = str(form.get("token", "")).strip()

    def check() -> Annotator | None:
        with state.open() as store:
            return annotator_for_token(store, token)

    annotator = await run_in_threadpool(check)
    if annotator is None:
        log.info("review app: a login with an unknown token was refused")
        return state.login_page(401, "Unknown token.")
    sid, _ = state.sessions.create(annotator.name, hash_token(token))
    log.info("review app: %s logged in", annotator.name)
    response = RedirectResponse("/", status_code=303)
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
