"""What superseding a share of a stage's requests costs, before and after pruning from what was superseded
(issue 23).

When a compile drops requests from a (stage, model)'s current set (answers regenerated, a template edited), the
store supersedes, until none is left, the current requests that refer to a superseded one: the judge requests
of old generations (`Store._prune_orphans`). Before, each pass looked every current request's row up by its id
(a random read of `requests` per current request, 2.8M at 10× the paper) and each of its refs up in
`current_requests`. Now each pass reads `requests` once in storage order and looks the refs up in the small
set the transaction has just superseded.

On each store `tenx.py --keep DIR` kept, inside one transaction that is rolled back at the end (the store is
left as it was), the generation requests whose ids start with "0" (1/16 of them, every model's) leave the
current set; then each version prunes, alternately, twice each, from a warm page cache, each inside a
savepoint rolled back after it. The current sets they leave must hash the same. Printed: CPU and wall time per
scale, µs per request in the store, the growth per request from the first scale to the last (1.0 = linear),
and before / after. Writes benchmarks/results/prune_pass.json.

Usage:
  nice python benchmarks/tenx.py --keep /tmp/tenx                   # build and keep x1/ and x10/
  nice python benchmarks/prune_pass.py --keep /tmp/tenx
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from export_joins import growth_table, kept_stores, probe_args, read_through, schema_14_only  # noqa: E402

from dialectbias.store import Store  # noqa: E402

#: `Store._prune_orphans` before this change (commit 619f998), verbatim: repeated until it deletes nothing
BEFORE_SQL = ("DELETE FROM current_requests WHERE request_id IN (SELECT c.request_id FROM current_requests c "
              "JOIN requests r ON r.request_id = c.request_id, json_each(r.refs) ref "
              "WHERE ref.value NOT IN (SELECT request_id FROM current_requests))")
#: the regenerated share: ids are hex content hashes, so those starting with "0" are 1/16 of each model's
REGENERATED = "stage = 'generate' AND substr(request_id, 1, 1) = '0'"


def before(store: Store) -> None:
    store._conn.execute(f"DELETE FROM current_requests WHERE {REGENERATED}")
    while store._conn.execute(BEFORE_SQL).rowcount:
        pass


def after(store: Store) -> None:
    store._start_superseding()
    store._supersede(REGENERATED)
    store._prune_orphans()


def run(store: Store, prune: Callable[[Store], None]) -> dict[str, Any]:
    """One version inside a savepoint rolled back after it: its CPU and wall time and the current set it left."""
    conn = store._conn
    conn.execute("SAVEPOINT prune")
    try:
        used, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        prune(store)
        wall, done = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
        digest, left = hashlib.sha256(), 0
        for (request_id,) in conn.execute("SELECT request_id FROM current_requests ORDER BY request_id"):
            digest.update(request_id.encode())
            left += 1
    finally:
        conn.execute("ROLLBACK TO prune")
        conn.execute("RELEASE prune")
    cpu = done.ru_utime - used.ru_utime + done.ru_stime - used.ru_stime
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "current_left": left, "sha256": digest.hexdigest()}


def measure(path: Path, rounds: int) -> dict[str, Any]:
    read_through(path)
    with Store.open(path, create=False) as store:
        conn = store._conn
        n_requests = conn.execute("SELECT count(*) FROM requests").fetchone()[0]
        current = conn.execute("SELECT count(*) FROM current_requests").fetchone()[0]
        versions = {"before": before, "after": after}
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
        conn.execute("BEGIN")
        try:
            for _ in range(rounds):
                for name, prune in versions.items():
                    runs[name].append(run(store, prune))
        finally:
            conn.execute("ROLLBACK")
    out: dict[str, Any] = {"requests": n_requests, "current_requests": current}
    for name, done in runs.items():
        if len({(r["current_left"], r["sha256"]) for r in [*done, *runs["before"]]}) != 1:
            raise SystemExit(f"{path}: the {name} prune leaves another current set than the old one")
        cpu = min(r["cpu_s"] for r in done)
        out[name] = {"cpu_s": cpu, "wall_s": min(r["wall_s"] for r in done),
                     "us_per_request": round(1e6 * cpu / n_requests, 3), "runs": done}
    out["superseded"] = current - runs["after"][0]["current_left"]
    return out


def main() -> None:
    schema_14_only(Path(__file__).name)
    args = probe_args(__doc__, "prune_pass.json")
    results: dict[str, Any] = {}
    for scale, path in kept_stores(args.keep, args.scales).items():
        results[scale] = r = measure(path, args.rounds)
        print(f"x{scale:3} {r['requests']:>10,} requests, {r['superseded']:>8,} superseded  "
              f"before {r['before']['cpu_s']:7.2f} s CPU {r['before']['wall_s']:7.2f} s wall  "
              f"after {r['after']['cpu_s']:6.2f} s CPU {r['after']['wall_s']:6.2f} s wall", flush=True)
    grew = growth_table({name: [results[s][name]["us_per_request"] for s in args.scales]
                         for name in ("before", "after")}, args.scales, "request in the store")
    speedup = {s: round(results[s]["before"]["cpu_s"] / max(results[s]["after"]["cpu_s"], 0.01), 2)
               for s in args.scales}
    print("before / after (CPU): " + ", ".join(f"x{s} {v:.2f}" for s, v in speedup.items()))
    args.out.write_text(json.dumps({"regenerated": REGENERATED, "results": results, "grew_per_request": grew,
                                    "before_over_after": speedup}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
