"""`executor: ray` over HTTP: throughput with 1 and 2 workers against a test server with a fixed per-request
latency (the scaling ratio), and the per-request overhead of the Ray path over `executor: local`.

Setup: one `dialectbias.testing.TestServer` (echo responder, 127.0.0.1) whose every answer waits
`--latency` seconds (a `slow` fault on every request), one local Ray (`--num-cpus`, started once and timed
apart). Each measurement compiles `--requests` fresh requests into a new store and times only the
executor's `run_stage` (results written through the post-call machine, as a run does):

  ray-1, ray-2   executor: ray with `replicas: 1` / `2` client actors, each `--concurrency` requests at once;
                 ideal scaling ratio ray-2 / ray-1 = 2 (the latency, not the CPU, bounds a worker)
  local, ray-0   executor: local vs executor: ray (1 replica) at the same concurrency against a server with
                 no added latency: (ray − local) seconds / requests = the Ray path's per-request overhead

Usage:
  python benchmarks/scale.py                      # 2,000 requests, 50 ms latency, concurrency 8
  python benchmarks/scale.py --requests 400       # smoke
Writes benchmarks/results/scale.json. Needs the ray extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def run_once(executor_name: str, base_url: str, n: int, concurrency: int, replicas: int, batch: int) -> float:
    """Seconds of one executor's `run_stage` over n fresh requests."""
    from dialectbias.config import Experiment
    from dialectbias.providers import config_class
    from dialectbias.run import Stage, StageStats
    from dialectbias.run._executor import LocalExecutor
    from dialectbias.run._ray import RayExecutor
    from dialectbias.run._specs import RequestSpec
    from dialectbias.store import Store

    config = config_class("openai").model_validate(
        {"id": "m", "provider": "openai", "base_url": base_url, "model": "m", "max_concurrency": concurrency,
         "replicas": replicas, "timeout_s": 30})
    exp = Experiment(name="bench", task="qa_bias", models=[config], executor=executor_name,
                     ray={"batch_size": batch})
    tag = f"{executor_name}-{replicas}-{time.time_ns()}"
    specs = [RequestSpec(stage="gen", model=config, item_id=f"i{i}", variant="standard", template="t",
                         messages=[{"role": "user", "content": f"{tag} request {i}"}], params={"max_tokens": 8})
             for i in range(n)]
    stage = Stage(name="gen", models=[config], build=lambda store, model: iter(specs))
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "bench.sqlite") as store:
        store.add_requests((s.to_row() for s in specs), current=("gen", "m"))
        stats = {"m": StageStats(stage="gen", model_id="m", total=n)}
        executor = (RayExecutor if executor_name == "ray" else LocalExecutor)(exp)

        async def go() -> float:
            await executor.prepare(stage, store)
            started = time.perf_counter()
            await executor.run_stage(stage, store, stats, lambda *_: None)
            elapsed = time.perf_counter() - started
            await executor.aclose()
            return elapsed

        seconds = asyncio.run(go())
        ok = store.query("SELECT count(*) FROM results WHERE status='ok'")[0][0]
    if ok != n:
        raise RuntimeError(f"{executor_name} × {replicas}: {ok} of {n} requests answered")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64, help="ray: requests per Ray call")
    parser.add_argument("--num-cpus", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "scale.json")
    args = parser.parse_args()

    import ray

    from dialectbias.testing import TestServer

    started = time.perf_counter()
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    ray_start_s = time.perf_counter() - started
    results: dict[str, Any] = {"ray_init_s": round(ray_start_s, 2)}
    n, c = args.requests, args.concurrency
    try:
        with TestServer(faults=[{"kind": "slow", "delay_s": args.latency}], record_requests=0) as slow:
            for replicas in (1, 2):
                seconds = run_once("ray", slow.base_url, n, c, replicas, args.batch)
                results[f"ray-{replicas}"] = {"seconds": round(seconds, 2), "requests_per_s": round(n / seconds, 1)}
                print(f"ray × {replicas} worker(s), {args.latency * 1000:.0f} ms latency: {n / seconds:.1f} req/s",
                      flush=True)
        ideal = c / args.latency
        results["ideal_requests_per_s_per_worker"] = ideal
        results["scaling_ratio_2_over_1"] = round(results["ray-2"]["requests_per_s"] /
                                                  results["ray-1"]["requests_per_s"], 2)
        with TestServer(record_requests=0) as fast:
            local = run_once("local", fast.base_url, n, c, 1, args.batch)
            remote = run_once("ray", fast.base_url, n, c, 1, args.batch)
        results["no-latency"] = {"local_s": round(local, 3), "ray_s": round(remote, 3),
                                 "local_requests_per_s": round(n / local, 1),
                                 "ray_requests_per_s": round(n / remote, 1)}
        results["ray_overhead_ms_per_request"] = round((remote - local) / n * 1000, 3)
    finally:
        ray.shutdown()
    print(json.dumps(results, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    payload = {**previous, "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                       "load_average_at_start": os.getloadavg()},
               "settings": vars(args) | {"out": str(args.out)}, "results": results}
    args.out.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
