"""The explorer's FastAPI app: typed state (`app.state.view`: the experiments, the table cache, the
templates), the review app's security middleware (body cap, CSP with scripts from 'self' only, no framing,
no-store; `review.app._app.limit_and_secure`, so its hardening applies here too), and, when the app listens
beyond this machine, an access token: `?token=` once (then an HttpOnly cookie) or `Authorization: Bearer`."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from dialectbias.review.app._app import limit_and_secure
from dialectbias.review.app._security import WebSettings
from dialectbias.view._experiments import LoadedExperiment
from dialectbias.view._tables import TableCache

PACKAGE_DIR = Path(str(resources.files("dialectbias.view")))
TOKEN_COOKIE = "dialectbias_view"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def templates() -> Environment:
    """The explorer's Jinja2 templates (every text autoescaped)."""
    return Environment(loader=FileSystemLoader(str(PACKAGE_DIR / "templates")),
                       autoescape=select_autoescape(["html"], default=True), trim_blocks=True, lstrip_blocks=True)


@dataclass
class ViewState:
    """The app's state: the experiments by key (in the order given), the tables, the access token (None:
    loopback only, no token)."""

    experiments: dict[str, LoadedExperiment]
    title: str
    token: str | None = None
    tables: TableCache = field(default_factory=TableCache)
    env: Environment = field(default_factory=templates)

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(name).render(title=self.title, state=self, **context),
                            status_code=status)

    def experiment(self, key: str | None) -> LoadedExperiment | None:
        """The experiment named `key`; the only one when there is one and no key is given."""
        if not key:
            return next(iter(self.experiments.values())) if len(self.experiments) == 1 else None
        return self.experiments.get(key)


def view_state(request: Request) -> ViewState:
    state: ViewState = request.app.state.view
    return state


#: a route's app state (FastAPI dependency)
State = Annotated[ViewState, Depends(view_state)]


def unique_keys(loaded: Sequence[LoadedExperiment]) -> dict[str, LoadedExperiment]:
    """The experiments by key: their names, with `-2`, `-3` … where two share one."""
    out: dict[str, LoadedExperiment] = {}
    for exp in loaded:
        key, n = exp.key, 1
        while key in out:
            n += 1
            key = f"{exp.key}-{n}"
        exp.key = key
        out[key] = exp
    return out


def create_app(experiments: Sequence[LoadedExperiment], *, token: str | None = None,
               title: str = "dialectbias view", web: WebSettings | None = None) -> FastAPI:
    """The explorer over the experiments (each opened read-only). With `token`, every request must carry it.
    `web`: how it is reached (bound address, allowed host names, TLS, trusted proxies), for the web guard."""
    from dialectbias.view import _api, _pages

    state = ViewState(unique_keys(experiments), title, token)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        state.tables.close()

    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.view = state
    app.state.web = web or WebSettings()
    app.middleware("http")(require_token)
    app.middleware("http")(limit_and_secure)
    app.mount("/static", StaticFiles(directory=str(PACKAGE_DIR / "static")), name="static")
    for router in (_pages.router, _api.router):
        app.include_router(router)
    app.add_exception_handler(404, not_found)
    return app


async def require_token(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """With an access token set: a request must carry it (cookie, bearer header, or `?token=`, which sets the
    cookie and redirects to the same URL without it); 401 otherwise."""
    state = view_state(request)
    if state.token is None:
        return await call_next(request)
    given = request.query_params.get("token")
    if given is not None and secrets.compare_digest(given.encode(), state.token.encode()):
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        query = urlencode(rest)
        response = RedirectResponse(request.url.path + (f"?{query}" if query else ""), status_code=303)
        response.set_cookie(TOKEN_COOKIE, state.token, httponly=True, samesite="strict", path="/",
                            secure=request.url.scheme == "https")
        return response
    scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
    for candidate in (request.cookies.get(TOKEN_COOKIE), bearer.strip() if scheme.lower() == "bearer" else None):
        if candidate and secrets.compare_digest(candidate.encode(), state.token.encode()):
            return await call_next(request)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": "a valid token is required (Authorization: Bearer TOKEN, or open the "
                                       "link `dialectbias view` printed)"}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})
    return state.page("message.html", 401, message="This explorer needs its access token: open the link "
                      "`dialectbias view` printed (…/?token=…).")


async def not_found(request: Request, exc: Exception) -> Response:
    """404 as JSON under /api/, else the message page."""
    detail = getattr(exc, "detail", None) or "not found"
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": detail}, status_code=404)
    return view_state(request).page("message.html", 404, message=f"Not found: {detail}.")
