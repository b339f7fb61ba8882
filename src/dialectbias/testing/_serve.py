"""Running the test server: `serve` (the app on 127.0.0.1 until SIGTERM/SIGINT) and `main`, the command
``python -m dialectbias.testing.server --port 0 [--faults faults.json] [--api-key KEY]``, which prints one
JSON line ``{"port": N}`` once it listens."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from dialectbias.testing._app import make_app
from dialectbias.testing._faults import FaultSpec
from dialectbias.testing._imitation import IMITATED
from dialectbias.testing._responders import load_responder
from dialectbias.testing._server_help import ServerParser

HOST = "127.0.0.1"


async def serve(port: int = 0, *, faults: FaultSpec | dict[str, Any] | str | Path | None = None,
                api_key: str | None = None, responder: str = "echo", record_requests: int = 20_000,
                announce: Callable[[int], None] | None = None, imitate: str | None = None,
                context: int | None = None, slots: int | None = None, tokenize: bool = True) -> None:
    """Run the server on 127.0.0.1:`port` until SIGTERM/SIGINT; `announce(port)` once listening."""
    app = make_app(faults, api_key=api_key, responder=responder, record_requests=record_requests,
                   imitate=imitate, context=context, slots=slots, tokenize=tokenize)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port, backlog=1024)
    await site.start()
    bound = runner.addresses[0][1]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    if announce is not None:
        announce(bound)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = ServerParser()
    parser.add_argument("--port", type=int, default=0, help="0 = pick a free port (printed as JSON)")
    parser.add_argument("--faults", default=None, help="fault spec: path to a JSON file, or inline JSON "
                        "(format below)")
    parser.add_argument("--api-key", default=None, help="require 'Authorization: Bearer KEY' (or set "
                        "DIALECTBIAS_TESTSERVER_API_KEY)")
    parser.add_argument("--responder", default="echo", help="'echo', 'fixed:TEXT' or 'module:function', e.g. "
                        "dialectbias.testing:qa_responder (below)")
    parser.add_argument("--record-requests", type=int, default=20_000,
                        help="keep the last N request bodies for GET /requests (0 = off)")
    parser.add_argument("--imitate", choices=IMITATED, default=None, metavar="KIND",
                        help=f"one of {', '.join(IMITATED)}: answer GET /v1/models (and llama.cpp's GET /props) "
                        "as this server does, and refuse a prompt over --context as it does")
    parser.add_argument("--context", type=int, default=None, help="the imitated server's context window in "
                        "tokens (one per 4 characters; default 8192)")
    parser.add_argument("--slots", type=int, default=None, help="the imitated llama.cpp's parallel slots "
                        "(GET /props total_slots; default 1)")
    parser.add_argument("--no-tokenize", action="store_true", help="the imitated server has no tokenize route "
                        "(an older vLLM): POST /tokenize answers 404")
    args = parser.parse_args(argv)
    api_key = args.api_key or os.environ.get("DIALECTBIAS_TESTSERVER_API_KEY") or None
    try:
        load_responder(args.responder)  # a bad one is refused here, before the port is announced
    except ValueError as exc:
        parser.error(f"--responder: {exc}")

    def announce(port: int) -> None:
        sys.stdout.write(json.dumps({"port": port}) + "\n")
        sys.stdout.flush()

    try:
        import uvloop  # optional speed-up
    except ImportError:
        runner: Callable[..., Any] = asyncio.run
    else:  # pragma: no cover - depends on environment
        runner = uvloop.run
    runner(serve(args.port, faults=args.faults, api_key=api_key, responder=args.responder,
                 record_requests=args.record_requests, announce=announce, imitate=args.imitate,
                 context=args.context, slots=args.slots, tokenize=not args.no_tokenize))


__all__ = ["HOST", "main", "serve"]
