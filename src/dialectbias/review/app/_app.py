"""The review app (SPEC §6): server-rendered pages for annotators and a small JSON API, over one store.

Pages need a browser session (log in with the personal token); the API needs `Authorization: Bearer TOKEN`.
Every write is the caller's own annotation (`annotations` row with their name and the time); a task id that
is not the caller's answers 404, as if it did not exist. Forms carry a per-session CSRF token; Jinja2
autoescapes every text; the store's queries are parameterised; each request opens its own connection to the
store (WAL, busy timeout), so several annotators can write at once. The web stack's guard (`_security`:
the Host check, the body cap while streaming, Secure cookies behind TLS, the security headers) and the login
throttle (`_throttle`) are their own modules; `limit_and_secure` and `SECURITY_HEADERS` stay importable
from here for the other apps that share them.

Routes by concern: `_auth` (log in and out), `_items` (the annotator's pages), `_submit` (the task form),
`_api` (the JSON API); `_deps` holds the typed state they share (`app.state.review`).
"""

from __future__ import annotations

import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from dialectbias.review._annotators import assign
from dialectbias.review._kinds import ReviewConfig
from dialectbias.review.app import _api, _auth, _items, _submit
from dialectbias.review.app._deps import AppState, app_state
from dialectbias.review.app._security import MAX_BODY_BYTES, SECURITY_HEADERS, WebSettings, limit_and_secure
from dialectbias.review.app._sessions import Sessions
from dialectbias.review.app._throttle import LoginThrottle

__all__ = ["MAX_BODY_BYTES", "SECURITY_HEADERS", "WebSettings", "create_app", "limit_and_secure"]


def create_app(store_path: str | Path, config: ReviewConfig, *, title: str = "dialectbias review",
               assign_on_start: bool = True, web: WebSettings | None = None,
               throttle: LoginThrottle | None = None) -> FastAPI:
    """The app over the store at `store_path` (it must exist; `review serve` builds `config` from the
    experiment file). `web`: how it is reached (bound address, allowed host names, TLS, trusted proxies;
    `_security`); `throttle`: the login throttle (`_throttle`; the defaults when None)."""
    state = AppState(Path(store_path), config, title, Sessions(), throttle or LoginThrottle())
    if assign_on_start:
        with state.open() as store:
            assign(store, config)
        state.last_assign = time.time()
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.review = state
    app.state.web = web or WebSettings()
    app.middleware("http")(limit_and_secure)
    for router in (_auth.router, _items.router, _submit.router, _api.router):
        app.include_router(router)
    app.add_exception_handler(404, not_found)
    return app


async def not_found(request: Request, exc: Exception) -> Response:
    """404 as JSON under /api/, else the message page."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": "not found"}, status_code=404)
    return app_state(request).page("message.html", 404, message="Not found.", csrf="")
