"""Dispatch throughput: requests/second of several clients against the same local test server.

All clients send the same number of chat-completion requests (default 5,000, unique prompts) at
the same concurrency (default 32) to one `dialectbias.testing.TestServer` (echo responder, no
faults), which runs in its own process. Each client runs in a fresh subprocess; only the
dispatch itself is timed (imports and setup are not).

Clients:
  bare     32 threads, stdlib http.client with one keep-alive connection per thread (reference)
  aiohttp  raw asyncio aiohttp client (shows the server's ceiling; not a ratio baseline)
  inspect  inspect_ai eval, `openai-api/bench/<model>`, generate() only, max_connections=C
  lmeval   lm-eval LocalChatCompletion.generate_until on N Instances, num_concurrent=C
  ours     dialectbias.api.run_experiment on a generated qa_bias experiment, then a second,
           fully cached run of the same file

Usage (see benchmarks/README.md for the venv):
  /work/benchvenv/bin/python benchmarks/dispatch.py [--requests 5000] [--concurrency 32]
      [--skip inspect --skip lmeval ...] [--only ours] [--out benchmarks/results/dispatch.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CLIENTS = ("bare", "aiohttp", "inspect", "lmeval", "ours")
MODEL = "bench-model"
DOMAINS = ("Technology", "Health", "Finance", "Education", "Agriculture", "Travel", "Law", "Food")
QTYPES = ("definitional", "procedural", "comparative", "advice")


class Skip(Exception):
    """The client cannot run here (package missing, API not landed yet)."""


def _ensure_dialectbias_importable() -> None:
    try:
        import dialectbias.testing  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / "src"))


# --------------------------------------------------------------------------------------------
# workload
# --------------------------------------------------------------------------------------------


def make_items(n_requests: int) -> list[dict[str, Any]]:
    """n_requests/2 qa_bias items with two variants each: unique texts, deterministic."""
    n_items = (n_requests + 1) // 2
    items = []
    for i in range(1, n_items + 1):
        domain = DOMAINS[i % len(DOMAINS)]
        qtype = QTYPES[i % len(QTYPES)]
        items.append({
            "id": f"q{i:05d}",
            "domain": domain,
            "question_type": qtype,
            "variants": {
                "standard": f"Question {i} ({domain}, {qtype}): what does the term number {i} mean, "
                            f"and why does it matter for everyday life?",
                "chittagong": f"Hoin {i} ({domain}, {qtype}): term number {i} ibar mane ki, "
                              f"aar roj-er jibon-ot ita kiyolla dorkar?",
            },
        })
    return items


def make_prompts(n_requests: int) -> list[str]:
    prompts = []
    for item in make_items(n_requests):
        prompts.extend(item["variants"].values())
    return prompts[:n_requests]


# --------------------------------------------------------------------------------------------
# clients (each runs inside a worker subprocess; returns {"wall_s": ..., ...})
# --------------------------------------------------------------------------------------------


def run_bare(base_url: str, prompts: list[str], concurrency: int) -> dict[str, Any]:
    import http.client
    import threading
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + "/chat/completions"
    lock = threading.Lock()
    next_idx = [0]
    errors: list[str] = []

    def worker() -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        headers = {"Content-Type": "application/json", "Authorization": "Bearer bench"}
        try:
            while True:
                with lock:
                    i = next_idx[0]
                    next_idx[0] += 1
                if i >= len(prompts):
                    return
                body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": prompts[i]}],
                                   "temperature": 0.0, "max_tokens": 256})
                conn.request("POST", path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                if resp.status != 200:
                    errors.append(f"HTTP {resp.status}")
                    continue
                json.loads(data)["choices"][0]["message"]["content"]
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "errors": len(errors)}


def run_aiohttp(base_url: str, prompts: list[str], concurrency: int) -> dict[str, Any]:
    import asyncio

    import aiohttp

    url = base_url.rstrip("/") + "/chat/completions"

    async def main() -> tuple[float, int]:
        errors = 0
        it = iter(prompts)
        conn = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=conn) as session:
            async def worker() -> None:
                nonlocal errors
                for prompt in it:
                    body = {"model": MODEL, "messages": [{"role": "user", "content": prompt}],
                            "temperature": 0.0, "max_tokens": 256}
                    async with session.post(url, json=body) as resp:
                        data = await resp.read()
                        if resp.status != 200:
                            errors += 1
                        else:
                            json.loads(data)

            t0 = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return time.perf_counter() - t0, errors

    wall, errors = asyncio.run(main())
    return {"wall_s": wall, "errors": errors}


def run_inspect(base_url: str, prompts: list[str], concurrency: int) -> dict[str, Any]:
    try:
        from inspect_ai import Task, eval
        from inspect_ai.dataset import MemoryDataset, Sample
        from inspect_ai.solver import generate
    except ImportError as exc:
        raise Skip(f"inspect_ai not installed ({exc}); pip install inspect-ai openai") from exc

    os.environ["BENCH_BASE_URL"] = base_url
    os.environ["BENCH_API_KEY"] = "bench"
    task = Task(
        dataset=MemoryDataset([Sample(id=i, input=p) for i, p in enumerate(prompts)]),
        solver=generate(),
        scorer=None,
        name="dispatch_bench",
    )
    with tempfile.TemporaryDirectory(prefix="bench-inspect-") as log_dir:
        t0 = time.perf_counter()
        logs = eval(task, model=f"openai-api/bench/{MODEL}", max_connections=concurrency,
                    log_dir=log_dir, display="none", score=False, max_retries=0,
                    # log_realtime=False is inspect's fastest setting that still logs every
                    # sample (measured ~1.5x faster than its default on this workload)
                    log_realtime=False)
        wall = time.perf_counter() - t0
        log = logs[0]
        if log.status != "success":
            raise RuntimeError(f"inspect eval finished with status {log.status}: {log.error}")
        n_samples = len(log.samples or [])
    return {"wall_s": wall, "samples": n_samples}


def run_lmeval(base_url: str, prompts: list[str], concurrency: int) -> dict[str, Any]:
    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.api_models import JsonChatStr
        from lm_eval.models.openai_completions import LocalChatCompletion
    except ImportError as exc:
        raise Skip(f"lm_eval not installed ({exc}); pip install lm-eval") from exc

    lm = LocalChatCompletion(
        model=MODEL,
        base_url=base_url.rstrip("/") + "/chat/completions",
        num_concurrent=concurrency,
        tokenized_requests=False,
        tokenizer_backend=None,
        max_gen_toks=256,
    )
    gen_kwargs = {"until": [], "max_gen_toks": 256, "temperature": 0.0}
    instances = [
        Instance(
            request_type="generate_until",
            doc={"id": i},
            arguments=(JsonChatStr(json.dumps([{"role": "user", "content": p}])), dict(gen_kwargs)),
            idx=0,
            metadata=("dispatch_bench", i, 1),
        )
        for i, p in enumerate(prompts)
    ]
    t0 = time.perf_counter()
    outputs = lm.generate_until(instances, disable_tqdm=True)
    wall = time.perf_counter() - t0
    empty = sum(1 for o in outputs if not o)
    if len(outputs) != len(prompts) or empty:
        raise RuntimeError(f"lm-eval returned {len(outputs)} outputs, {empty} empty")
    return {"wall_s": wall}


def run_ours(base_url: str, prompts: list[str], concurrency: int) -> dict[str, Any]:
    _ensure_dialectbias_importable()
    try:
        from dialectbias.api import run_experiment
    except ImportError as exc:
        raise Skip(f"dialectbias.api.run_experiment is not available yet ({exc})") from exc

    n_requests = len(prompts)
    with tempfile.TemporaryDirectory(prefix="bench-ours-") as tmp:
        root = Path(tmp)
        with (root / "items.jsonl").open("w", encoding="utf-8") as fh:
            for item in make_items(n_requests):
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
        exp = root / "exp.yaml"
        exp.write_text(
            "name: bench\n"
            "task: qa_bias\n"
            "data: items.jsonl\n"
            "models:\n"
            "  - id: m1\n"
            "    provider: openai\n"
            f"    base_url: {base_url}\n"
            f"    model: {MODEL}\n"
            f"    max_concurrency: {concurrency}\n",
            encoding="utf-8",
        )
        t0 = time.perf_counter()
        first = run_experiment(exp, progress=True)
        wall = time.perf_counter() - t0
        calls = int(getattr(first, "calls_made", -1))
        t1 = time.perf_counter()
        second = run_experiment(exp, progress=True)
        cached_wall = time.perf_counter() - t1
        cached_calls = int(getattr(second, "calls_made", -1))
    return {"wall_s": wall, "calls_made": calls, "cached_wall_s": cached_wall,
            "cached_calls_made": cached_calls}


RUNNERS = {"bare": run_bare, "aiohttp": run_aiohttp, "inspect": run_inspect, "lmeval": run_lmeval,
           "ours": run_ours}


def worker_main(client: str, base_url: str, n_requests: int, concurrency: int) -> None:
    """Subprocess entry: run one client, print one JSON line on the last line of stdout."""
    prompts = make_prompts(n_requests)
    try:
        result = {"status": "ok", **RUNNERS[client](base_url, prompts, concurrency)}
    except Skip as exc:
        result = {"status": "skipped", "message": str(exc)}
    except Exception as exc:  # report, don't crash the whole benchmark
        import traceback

        traceback.print_exc()
        result = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
    sys.stdout.flush()
    print("\n@@RESULT@@" + json.dumps(result), flush=True)


# --------------------------------------------------------------------------------------------
# orchestration
# --------------------------------------------------------------------------------------------


def run_client(client: str, srv: Any, n_requests: int, concurrency: int, timeout: float) -> dict[str, Any]:
    srv.reset_stats()
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_worker", client, "--_base-url", srv.base_url,
           "--requests", str(n_requests), "--concurrency", str(concurrency)]
    env = dict(os.environ)
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env["PYTHONPATH"] = str(REPO / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "error", "message": f"timed out after {timeout:.0f}s"}
    marker = proc.stdout.rfind("@@RESULT@@")
    if marker < 0:
        tail = (proc.stderr or proc.stdout)[-2000:]
        return {"status": "error", "message": f"worker exited {proc.returncode} without a result:\n{tail}"}
    result: dict[str, Any] = json.loads(proc.stdout[marker + len("@@RESULT@@"):].strip().splitlines()[0])
    if result["status"] == "error":
        result["stderr_tail"] = proc.stderr[-2000:]
    stats = srv.stats()
    result["server_requests"] = stats["requests_total"]
    result["server_max_in_flight"] = stats["max_in_flight"]
    if result["status"] == "ok":
        result["req_per_s"] = n_requests / result["wall_s"]
        if client == "ours":
            result["cached_pct_of_first"] = 100.0 * result["cached_wall_s"] / result["wall_s"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip", action="append", default=[], choices=CLIENTS,
                        help="skip a client (repeatable)")
    parser.add_argument("--only", action="append", default=[], choices=CLIENTS,
                        help="run only these clients (repeatable)")
    parser.add_argument("--timeout", type=float, default=900.0, help="per-client time limit (s)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "dispatch.json")
    parser.add_argument("--_worker", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--_base-url", dest="base_url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._worker:
        worker_main(args._worker, args.base_url, args.requests, args.concurrency)
        return 0

    _ensure_dialectbias_importable()
    from dialectbias.testing import TestServer

    selected = [c for c in CLIENTS if (not args.only or c in args.only) and c not in args.skip]
    results: dict[str, dict[str, Any]] = {}
    for c in CLIENTS:
        if c not in selected:
            results[c] = {"status": "skipped", "message": "skipped on the command line"}
    print(f"dispatch benchmark: {args.requests} requests, concurrency {args.concurrency}, "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs", flush=True)
    with TestServer(record_requests=0) as srv:
        print(f"test server at {srv.base_url}", flush=True)
        for client in selected:
            print(f"-> {client} ...", flush=True)
            res = run_client(client, srv, args.requests, args.concurrency, args.timeout)
            results[client] = res
            if res["status"] == "ok":
                line = (f"   {res['req_per_s']:.0f} req/s ({res['wall_s']:.2f}s, "
                        f"server saw {res['server_requests']})")
                if client == "ours":
                    line += (f"; cached rerun {res['cached_wall_s']:.3f}s = "
                             f"{res['cached_pct_of_first']:.2f}% of first "
                             f"(calls_made {res['calls_made']} then {res['cached_calls_made']})")
                print(line, flush=True)
                expected = args.requests
                if res["server_requests"] < expected:
                    print(f"   WARNING: server received {res['server_requests']} < {expected} requests",
                          flush=True)
            else:
                print(f"   {res['status']}: {res.get('message')}", flush=True)

    def rps(name: str) -> float | None:
        r = results.get(name, {})
        return r.get("req_per_s") if r.get("status") == "ok" else None

    ratios: dict[str, float | None] = {}
    for base in ("inspect", "lmeval", "bare"):
        a, b = rps("ours"), rps(base)
        ratios[f"ours/{base}"] = (a / b) if a and b else None

    print()
    print(f"{'client':<10} {'status':<8} {'req/s':>9} {'wall s':>8} {'server reqs':>11}")
    for c in CLIENTS:
        r = results[c]
        if r.get("status") == "ok":
            print(f"{c:<10} {'ok':<8} {r['req_per_s']:>9.0f} {r['wall_s']:>8.2f} {r['server_requests']:>11}")
        else:
            print(f"{c:<10} {r['status']:<8} {'-':>9} {'-':>8} {'-':>11}")
    for k, v in ratios.items():
        print(f"{k:<14} {v:.2f}" if v is not None else f"{k:<14} n/a")
    ours = results.get("ours", {})
    if ours.get("status") == "ok":
        print(f"ours cached rerun: {ours['cached_pct_of_first']:.2f}% of first run (SPEC target < 2%)")

    payload = {
        "requests": args.requests,
        "concurrency": args.concurrency,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "clients": results,
        "ratios": ratios,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
