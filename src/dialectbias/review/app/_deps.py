"""What every route of the review app shares: the typed app state (the store's path, the review config,
the sessions, the templates), a store connection per request, the page renderer, and who is asking (a
browser session or an API token)."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from dialectbias.review._annotators import Annotator, annotator_for_token, assign
from dialectbias.review._kinds import ReviewConfig
from dialectbias.review.app._sessions import LOGIN_CSRF_COOKIE, SESSION_COOKIE, Kept, Session, Sessions, same
from dialectbias.review.app._throttle import LoginThrottle
from dialectbias.store import Store, annotator_token_hash

log = logging.getLogger("dialectbias.review")

PACKAGE_DIR = Path(str(resources.files("dialectbias.review.app")))
#: assignments are refreshed (new targets given out) at most this often, when someone opens the home page
ASSIGN_EVERY_S = 30.0


def templates() -> Environment:
    """The app's Jinja2 templates (every text autoescaped)."""
    return Environment(loader=FileSystemLoader(str(PACKAGE_DIR / "templates")),
                       autoescape=select_autoescape(["html"], default=True), trim_blocks=True, lstrip_blocks=True)


@dataclass
class AppState:
    """The app's state (`app.state.review`): one store, one review config, the browser sessions."""

    store_path: Path
    config: ReviewConfig
    title: str
    sessions: Sessions
    throttle: LoginThrottle
    env: Environment = field(default_factory=templates)
    last_assign: float = 0.0
    assign_lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def open(self) -> Iterator[Store]:
        """A connection of its own to the store (WAL, busy timeout), closed after use."""
        store = Store.open(self.store_path, create=False)
        try:
            yield store
        finally:
            store.close()

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(name).render(title=self.title, **context), status_code=status)

    def login_page(self, status: int, error: str = "", *, kept: Kept | None = None, next_page: str = "",
                   notice: str = "") -> HTMLResponse:
        """The login form with a fresh CSRF token (also in a cookie scoped to /login); `kept`: the values of
        a form posted after the session ended, carried through the login (hidden fields) back to
        `next_page`, where the annotator checks and saves them."""
        csrf = secrets.token_urlsafe(32)
        fields = [(name, v) for name, values in (kept or {}).items() for v in values]
        response = self.page("login.html", status, csrf=csrf, error=error, kept=fields, next_page=next_page,
                             notice=notice)
        response.set_cookie(LOGIN_CSRF_COOKIE, csrf, httponly=True, samesite="strict", max_age=3600, path="/login")
        return response

    def maybe_assign(self) -> None:
        """Give out targets that appeared since the last time (a new run, a new annotator), at most every 30 s."""
        if time.time() - self.last_assign < ASSIGN_EVERY_S or not self.assign_lock.acquire(blocking=False):
            return
        try:
            with self.open() as store:
                assign(store, self.config)
            self.last_assign = time.time()
        finally:
            self.assign_lock.release()


def app_state(request: Request) -> AppState:
    state: AppState = request.app.state.review
    return state


#: a route's app state (FastAPI dependency)
State = Annotated[AppState, Depends(app_state)]


def session_of(state: AppState, request: Request) -> Session | None:
    """The browser session of the request, if its annotator still holds the token it logged in with."""
    sid = request.cookies.get(SESSION_COOKIE)
    session = state.sessions.get(sid)
    if session is None:
        return None
    with state.open() as store:
        token_hash = annotator_token_hash(store, session.annotator)
    if not same(token_hash, session.token_hash):  # token rotated or annotator gone
        state.sessions.drop(sid)
        return None
    return session


def bearer(state: AppState, request: Request) -> Annotator | None:
    """The annotator of the request's `Authorization: Bearer TOKEN` (the API), or None."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    with state.open() as store:
        return annotator_for_token(store, token.strip())


def unauthorized() -> JSONResponse:
    return JSONResponse({"detail": "a valid token is required (Authorization: Bearer TOKEN)"}, status_code=401,
                        headers={"WWW-Authenticate": "Bearer"})
