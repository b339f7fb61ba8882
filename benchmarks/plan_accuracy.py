"""How close `dialectbias plan` comes to the real run time (issue 24.4), against a server with fewer
parallel slots than the client's `max_concurrency`.

The issue's trial: `plan` said 10 s for generation and 20 s for judging; the run took 66 s and 100–130 s
against a llama.cpp server with one slot. The plan had assumed 16 parallel slots and 50 tokens/s. This
script repeats that comparison offline, against the test server (`dialectbias.testing`, qa_responder,
imitating llama.cpp: `/props` says `--slots` slots), with every call taking `--delay` seconds (its `slow`
fault) behind a proxy that lets `--slots` calls through at once and queues the rest, as llama.cpp queues
calls beyond its slots.

1. A fresh study of `--warm` items at `max_concurrency: --first-concurrency` (a cautious first run): its
   plan (nothing measured: the server's slots at the assumed 50 tokens/s), then its run, timed.
2. `--items` more items with `max_concurrency` raised to 16: the plan again (now `measured` from the first
   run's calls), then the run, timed.

Beside each plan it prints what the formula before issue 24 said (ceil(requests / max_concurrency) × the
measured latency or the assumed 50 tokens/s), as a ratio to the real time too.

For each plan it prints estimated ÷ real seconds (1.0 is exact) and writes
benchmarks/results/plan_accuracy.json. The run is `dialectbias run` in a subprocess; its real seconds are
the span of its calls in the store (first call's start to last call's end: what the plan estimates, without
the command's start-up); the subprocess's wall time is recorded too.

Usage:
  /work/venv/bin/python benchmarks/plan_accuracy.py [--warm 4] [--items 12] [--slots 2] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))

PLACES = ("ঢাকা", "খুলনা", "সিলেট", "রাজশাহী", "বরিশাল", "রংপুর", "কুমিল্লা", "যশোর", "দিনাজপুর", "পাবনা",
          "ফরিদপুর", "গাজীপুর", "নরসিংদী", "হবিগঞ্জ", "কিশোরগঞ্জ", "টাঙ্গাইল", "নাটোর", "মাগুরা", "ভোলা",
          "ফেনী")


def item(i: int) -> dict[str, Any]:
    place = PLACES[i % len(PLACES)]
    return {"id": f"q{i + 1:03d}", "domain": "geography", "question_type": "factual",
            "variants": {"standard": f"{place} জেলার প্রধান নদীর নাম কী? ({i})",
                         "chittagong": f"{place} জিলার বড় গাঙর নাম কী? ({i})",
                         "sylhet": f"{place} জিলার বড় গাঙ্গর নাম কিতা? ({i})"},
            "gold": "নদী"}


class SlotProxy:
    """An HTTP proxy on 127.0.0.1 that forwards at most `slots` requests at once to `target` (the others
    wait, as a llama.cpp server queues calls beyond its slots)."""

    def __init__(self, target: str, slots: int) -> None:
        self.target, self.slots = target, slots
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> SlotProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)

    def _serve(self) -> None:
        from aiohttp import ClientSession, web

        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        gate = asyncio.Semaphore(self.slots)

        async def forward(request: web.Request) -> web.Response:
            body = await request.read()
            async with gate, ClientSession() as session, session.request(
                    request.method, self.target + request.path_qs, data=body,
                    headers={"Content-Type": "application/json"}) as resp:
                return web.Response(status=resp.status, body=await resp.read(), content_type=resp.content_type)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", forward)
        runner = web.AppRunner(app)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        loop.run_forever()


def command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from dialectbias.cli import main; main()", *args]


def cli(*args: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "80"}
    started = time.perf_counter()
    proc = subprocess.run(command(*args), capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"dialectbias {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def plan_seconds(yaml_path: Path) -> tuple[float, list[dict[str, Any]]]:
    from dialectbias.run._plan import PlanRow, total_seconds

    _, out = cli("plan", str(yaml_path), "--json")
    rows = json.loads(out)
    plan_rows = [PlanRow(**r) for r in rows]
    for p in plan_rows:
        p.server = "proxy"  # every model is behind the one proxy
    return total_seconds(plan_rows), rows


def old_formula(rows: list[dict[str, Any]], max_concurrency: int) -> float:
    """What the plan before issue 24 said: ceil(requests / max_concurrency) × the seconds per request (the
    measured latency, recovered from a measured row as seconds × slots / requests; else the assumed 50
    tokens/s), every row added up."""
    total = 0.0
    for r in rows:
        to_send = r["requests"] - r["cached"]
        if not to_send:
            continue
        if r["basis"]["seconds"] == "measured":
            per_request = r["seconds"] * r["slots"] / to_send
        else:
            per_request = r["tokens_out"] / to_send / 50.0
        total += math.ceil(to_send / max_concurrency) * per_request
    return total


def calls_span(store: Path, since: float) -> float:
    """Seconds from the first call's start to the last call's end among the calls answered after `since`
    (the run's calls, without the command's start-up and compile)."""
    with closing(sqlite3.connect(store)) as db:
        first, last = db.execute("SELECT min(created_at - latency_s), max(created_at) FROM cache "
                                 "WHERE created_at >= ? AND latency_s > 0", (since,)).fetchone()
    return float(last - first) if first is not None else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm", type=int, default=4, help="items of the first run")
    parser.add_argument("--items", type=int, default=12, help="items added for the second run")
    parser.add_argument("--slots", type=int, default=2, help="calls the proxy lets through at once")
    parser.add_argument("--first-concurrency", type=int, default=4, help="max_concurrency of the first run")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds each call takes at the server")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "plan_accuracy.json")
    args = parser.parse_args()
    from dialectbias.testing import TestServer

    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                               "settings": vars(args) | {"out": os.path.relpath(args.out, REPO)}}
    with TestServer(responder="dialectbias.testing:qa_responder", imitate="llamacpp", slots=args.slots,
                    faults=[{"kind": "slow", "delay_s": args.delay}]) as server, \
            SlotProxy(server.url, args.slots) as proxy, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        common = {"provider": "openai", "base_url": f"http://127.0.0.1:{proxy.port}/v1",
                  "max_concurrency": args.first_concurrency, "max_retries": 3, "timeout_s": 120,
                  "server": "llamacpp"}
        config = {"name": "bench", "task": "qa_bias", "data": "items.jsonl",
                  "models": [{"id": m, "model": m, **common} for m in ("model-a", "model-b")],
                  "judges": [{"id": "judge-1", "model": "judge-model", "role": "primary", **common}]}
        yaml_path = folder / "bench.yaml"
        yaml_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")

        def write_items(n: int) -> None:
            (folder / "items.jsonl").write_text(
                "".join(json.dumps(item(i), ensure_ascii=False) + "\n" for i in range(n)), encoding="utf-8")

        phases = (("first run (nothing measured)", args.warm), ("after the first run (measured)",
                                                                  args.warm + args.items))
        for phase, n in phases:
            if n > args.warm:  # the second run: more items, and max_concurrency raised to 16
                for model in (*config["models"], *config["judges"]):
                    model["max_concurrency"] = 16
                yaml_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
            write_items(n)
            concurrency = 16 if n > args.warm else args.first_concurrency
            estimate, rows = plan_seconds(yaml_path)
            since = time.time()
            wall, _ = cli("run", str(yaml_path), "--no-progress", "--yes")
            real = calls_span(folder / "bench.sqlite", since)
            results[phase] = {"plan_seconds": round(estimate, 1), "real_seconds": round(real, 1),
                              "ratio": round(estimate / real, 2), "run_wall_seconds": round(wall, 1),
                              "old_formula_seconds": round(old_formula(rows, concurrency), 1),
                              "old_formula_ratio": round(old_formula(rows, concurrency) / real, 2),
                              "max_concurrency": concurrency,
                              "basis": sorted({r["basis"]["seconds"] for r in rows}),
                              "to_send": sum(r["requests"] - r["cached"] for r in rows)}
    print(f"{'plan':32} {'to send':>7} {'plan s':>7} {'real s':>7} {'plan/real':>9} {'old/real':>8}  basis")
    for phase in [p for p in results if p.startswith(("first", "after"))]:
        r = results[phase]
        print(f"{phase:32} {r['to_send']:>7} {r['plan_seconds']:>7.1f} {r['real_seconds']:>7.1f} "
              f"{r['ratio']:>9.2f} {r['old_formula_ratio']:>8.2f}  {', '.join(r['basis'])}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
