"""The web stack's guard, shared by every app of the package that installs `limit_and_secure` as its HTTP
middleware (the review app; the results explorer): the `Host` header check against DNS rebinding, the
request-body cap (by `Content-Length` and while a chunked body streams), `Secure` cookies when the request
came over TLS, and the security headers on every response.

What counts is the app's `WebSettings` (`app.state.web`; the defaults when an app sets none): the address
the server is bound to, the extra host names users reach it by, whether it is served over TLS, and which
reverse proxies' `X-Forwarded-Proto` / `X-Forwarded-For` are believed (none by default: anyone can send
those headers).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

#: ASGI's message and receive callable (as starlette.types names them; starlette comes with fastapi)
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]

MAX_BODY_BYTES = 1_000_000
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
#: the names a loopback-bound server answers to (with its port, or none)
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
TOO_LARGE = "request body too large (at most 1,000,000 bytes)"


@dataclass(frozen=True)
class WebSettings:
    """How the app is reached (`review serve --host/--allowed-host/--secure-cookies/--trusted-proxy`)."""

    #: the address the server listens on (`--host`)
    bind_host: str = "127.0.0.1"
    #: extra names in the `Host` header that are accepted (`--allowed-host`, e.g. the proxy's public name)
    allowed_hosts: tuple[str, ...] = ()
    #: every request came over TLS (a TLS proxy in front): cookies are `Secure`
    secure_cookies: bool = False
    #: addresses of reverse proxies whose X-Forwarded-Proto / X-Forwarded-For are believed
    trusted_proxies: tuple[str, ...] = ()

    @property
    def loopback(self) -> bool:
        return is_loopback(self.bind_host)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a `Host` header value (an IPv6 literal in brackets), None when malformed."""
    value = value.strip().lower()
    if not value or any(c in value for c in "@/\\ ?#"):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:]
    else:
        name, _, port = value.partition(":")
    if port and not port.isdigit():
        return None
    return name.rstrip("."), int(port) if port else None


def host_allowed(settings: WebSettings, host_header: str, server: tuple[str, int] | None) -> bool:
    """Whether the request's `Host` names this server: a loopback bind answers to localhost, 127.0.0.1 and
    [::1] (with its port or none); any bind answers to the address the connection reached (with its port)
    and to the allowed names (any port: a proxy in front may use 443). Everything else may be a DNS
    rebinding page of another site reaching the server through the browser."""
    parsed = split_host(host_header)
    if parsed is None:
        return False
    name, port = parsed
    if name in {h.lower().rstrip(".") for h in settings.allowed_hosts}:
        return True
    if name == settings.bind_host.lower().strip("[]") and not _is_ip(name):  # bound by a name (--host NAME)
        return True
    local, local_port = server if server else (settings.bind_host, None)
    if port is not None and local_port is not None and port != local_port:
        return False
    if settings.loopback and name in LOOPBACK_NAMES:
        return True
    return _same_address(name, local) or _same_address(name, settings.bind_host)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _same_address(name: str, address: str) -> bool:
    try:
        ip = ipaddress.ip_address(name)
        return not ip.is_unspecified and ip == ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False


def client_address(settings: WebSettings, request: Request) -> str:
    """The client's address: the peer's, or — when the peer is a trusted proxy — the last address its
    X-Forwarded-For names."""
    peer = request.client.host if request.client else ""
    if peer in settings.trusted_proxies:
        forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",") if a.strip()]
        if forwarded:
            return forwarded[-1]
    return peer


def over_tls(settings: WebSettings, request: Request) -> bool:
    """The request came over TLS: the app is served behind TLS (`secure_cookies`) or a trusted proxy says so
    in X-Forwarded-Proto (anyone else's header is ignored). The scheme uvicorn reports is not consulted: with
    its `proxy_headers` on it believes any local peer's header (serve it with `proxy_headers=False`)."""
    if settings.secure_cookies:
        return True
    peer = request.client.host if request.client else ""
    if peer in settings.trusted_proxies:
        proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        return proto == "https"
    return False


def web_settings(request: Request) -> WebSettings:
    """The app's web settings (`app.state.web`), the defaults (a loopback bind, plain HTTP) when it has none."""
    settings = getattr(request.app.state, "web", None)
    return settings if isinstance(settings, WebSettings) else WebSettings()


class _Cap:
    """The body read so far, and whether it passed the cap."""

    def __init__(self, limit: int) -> None:
        self.limit, self.seen, self.exceeded = limit, 0, False

    def wrap(self, receive: Receive) -> Receive:
        """`receive` that stops at the cap: once the body passes `limit` bytes nothing more of it is read,
        and the app is told the client went away (its read fails; the middleware answers 413)."""

        async def capped() -> Message:
            if self.exceeded:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                self.seen += len(message.get("body", b""))
                if self.seen > self.limit:
                    self.exceeded = True
                    return {"type": "http.disconnect"}
            return message

        return capped


def _too_large() -> Response:
    # Connection: close makes the server drop the connection instead of reading the rest of the body
    return JSONResponse({"detail": TOO_LARGE}, status_code=413, headers={"Connection": "close"})


async def limit_and_secure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """The HTTP middleware of the package's web apps (`app.middleware("http")(limit_and_secure)`): refuse a
    `Host` that does not name this server (400), bodies over MAX_BODY_BYTES whether announced by
    Content-Length or streamed in chunks (413, reading stops there), mark cookies `Secure` over TLS, and add
    the security headers to every response."""
    settings = web_settings(request)
    server = request.scope.get("server")
    local = (str(server[0]), int(server[1])) if server and len(server) >= 2 else None
    if not host_allowed(settings, request.headers.get("host", ""), local):
        response: Response = PlainTextResponse(
            "400 Bad Request: the Host header does not name this server (add the name with "
            "--allowed-host NAME)", status_code=400)
        return _secured(response, False)
    length = request.headers.get("content-length")
    if length and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
        return _secured(_too_large(), False)
    # Starlette's Request reads the ASGI messages through `_receive` (the routes' request.form()/json()
    # read through it, via the middleware's cached request): counting there caps a chunked body as it
    # streams (tests/review/test_app_hardening.py checks it over HTTP, for a starlette upgrade)
    cap = _Cap(MAX_BODY_BYTES)
    request._receive = cap.wrap(request._receive)
    try:
        response = await call_next(request)
    except Exception:
        if not cap.exceeded:
            raise
        response = _too_large()
    if cap.exceeded:
        response = _too_large()
    return _secured(response, over_tls(settings, request))


def _secured(response: Response, tls: bool) -> Response:
    for k, v in SECURITY_HEADERS.items():
        response.headers.setdefault(k, v)
    if tls:
        raw = []
        for key, value in response.raw_headers:
            if key.lower() == b"set-cookie" and b"secure" not in [p.strip().lower() for p in value.split(b";")]:
                value += b"; Secure"
            raw.append((key, value))
        response.raw_headers[:] = raw
    return response
