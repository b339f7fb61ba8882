"""`dialectbias view EXP.yaml [MORE.yaml …]`: the read-only results explorer (issue 22 item 1; docs/explorer.md)."""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path
from typing import Annotated

import typer

from dialectbias.cli import _app
from dialectbias.cli._app import clear_errors
from dialectbias.cli._review import AllowedHostOpt, SecureCookiesOpt, TrustedProxyOpt


@clear_errors
def view(experiments: Annotated[list[Path], typer.Argument(help="experiment YAML file(s); two or more can be "
                                                           "compared", show_default=False)],
         host: Annotated[str, typer.Option("--host", help="address to listen on (only this machine by default; "
                                           "any other needs the access token printed at start)")] = "127.0.0.1",
         port: Annotated[int, typer.Option("--port", min=0, max=65535, help="port")] = 8766,
         allowed_host: AllowedHostOpt = None,
         secure_cookies: SecureCookiesOpt = False,
         trusted_proxy: TrustedProxyOpt = None) -> None:
    """Explore the results in a browser, read-only: every table of the report, sortable and filterable; a figure
    leads to the answers behind it, an answer to its evidence (prompts, answers, each judge's parsed fields,
    checks, flags, human overrides, request ids, re-asks). Two experiments, or two models of one, compared
    cell by cell with the answers whose verdict flipped. JSON: GET /api/evidence?item_id=&variant=&model=.

    Never writes to the stores (a run may go on meanwhile). Listens on 127.0.0.1 unless --host says otherwise;
    then every request needs the access token printed at start, and only the bound address
    and the --allowed-host names are answered (docs/review.md, "Security and deployment").

    Example: dialectbias view bn-qa.yaml bn-qa-v2.yaml --port 8766
    """
    from dialectbias.cli._review import _listen, web_settings
    from dialectbias.errors import ConfigError

    try:
        import uvicorn

        from dialectbias.view import create_app, load_experiment_read_only
    except ImportError as exc:
        raise ConfigError(f"the explorer needs the `review` extra: pip install 'dialectbias[review]' "
                          f"({exc.name} is missing)") from None
    for path in experiments:
        if not path.is_file():
            raise ConfigError(f"{path}: no such experiment file")
    web = web_settings(host, allowed_host, secure_cookies, trusted_proxy)
    loaded = [load_experiment_read_only(path) for path in experiments]
    loopback = host in ("127.0.0.1", "localhost", "::1")
    token = None if loopback else secrets.token_urlsafe(24)
    app = create_app(loaded, token=token, title="dialectbias view", web=web)
    sock = _listen(host, port)  # before anything is printed: a busy port is one error line
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    if token:
        _app.err_console.print(f"warning: listening on {host}: other machines can reach the explorer; it needs the "
                               "token in this link (or Authorization: Bearer TOKEN); the traffic is not encrypted "
                               "unless a TLS proxy is in front", highlight=False, soft_wrap=True)
    _app.console.print(f"explorer (read-only): {url}  (Ctrl+C stops it)", highlight=False, soft_wrap=True)
    with sock, contextlib.suppress(KeyboardInterrupt):
        # proxy_headers off: the web guard reads X-Forwarded-* itself, from --trusted-proxy only
        uvicorn.Server(uvicorn.Config(app, log_level="warning", server_header=False, proxy_headers=False)
                       ).run(sockets=[sock])
    _app.console.print("explorer stopped", highlight=False)
