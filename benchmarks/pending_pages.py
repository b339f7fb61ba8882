"""What finding a resumed run's pending requests costs, before and after the done test on the status index (issue 23).

A resumed run pages through every current request of each (stage, model) in request-id order to find those
without a successful result (`Store.pending_requests`, 2,000 a page, as the executors do). Before, each
request's full request row and full result row (its output) were read before a done one was skipped; now a
done request is skipped on the results' (request id, status) index alone.

On each store `tenx.py --keep DIR` kept, inside one transaction that is rolled back at the end (the store is
left as it was), the results of 1/16 of the requests are deleted (request ids starting with "0", spread over
every stage, model and page): a run stopped with that much still to send. Both versions then page through
every (stage, model) of the study, alternately, twice each, from a warm page cache; their rows must hash the
same. Printed: CPU µs per current request walked, per scale, with the growth per request from the first scale
to the last (1.0 = linear), and before / after. Writes benchmarks/results/pending_pages.json.

Usage:
  nice python benchmarks/tenx.py --keep /tmp/tenx                   # build and keep x1/ and x10/
  nice python benchmarks/pending_pages.py --keep /tmp/tenx
"""

from __future__ import annotations

import hashlib
import json
import resource
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from export_joins import growth_table, kept_stores, probe_args, read_through, schema_14_only  # noqa: E402

from dialectbias.run._executor import PAGE  # noqa: E402
from dialectbias.store import Store  # noqa: E402
from dialectbias.store._store import PENDING_COLUMNS  # noqa: E402

#: `Store.pending_requests` before this change (commit e0c0042): the same columns, then its joins verbatim
BEFORE_SQL = (
    f"SELECT {PENDING_COLUMNS} FROM current_requests cr JOIN requests r ON r.request_id = cr.request_id "
    "LEFT JOIN results s ON s.request_id = r.request_id "
    "LEFT JOIN cache c ON c.cache_key = r.cache_key "
    "WHERE cr.stage=? AND cr.model_id=? AND cr.request_id>? AND (s.status IS NULL OR s.status != 'ok') "
    "ORDER BY cr.request_id LIMIT ?")
#: the share of requests left to send: ids are hex content hashes, so those starting with "0" are 1/16 of each
LEFT_SQL = "substr(request_id, 1, 1) = '0'"

Pages = Callable[[str, str, str], list[sqlite3.Row]]


def walk(pairs: list[tuple[str, str]], pages: Pages) -> dict[str, Any]:
    """Every pending request of every (stage, model), page by page as an executor reads them: how many, a hash
    of their rows, and the CPU it took."""
    digest, rows = hashlib.sha256(), 0
    before = resource.getrusage(resource.RUSAGE_SELF)
    for stage, model in pairs:
        after = ""
        while page := pages(stage, model, after):
            after = page[-1]["request_id"]
            rows += len(page)
            for row in page:
                digest.update(json.dumps(tuple(row), ensure_ascii=False, default=str).encode())
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = used.ru_utime - before.ru_utime + used.ru_stime - before.ru_stime
    return {"pending": rows, "cpu_s": round(cpu, 2), "sha256": digest.hexdigest()}


def measure(path: Path, rounds: int) -> dict[str, Any]:
    read_through(path)
    with Store.open(path, create=False) as store:
        conn = store._conn  # one connection: both versions must see the rolled-back deletion
        pairs = [(r[0], r[1]) for r in conn.execute(
            "SELECT stage, model_id FROM current_stages ORDER BY stage, model_id")]
        walked = conn.execute("SELECT count(*) FROM current_requests").fetchone()[0]
        versions: dict[str, Pages] = {
            "before": lambda s, m, a: conn.execute(BEFORE_SQL, (s, m, a, PAGE)).fetchall(),
            "after": lambda s, m, a: store.pending_requests(s, m, after=a, limit=PAGE),
        }
        conn.execute("BEGIN")
        try:
            left = conn.execute(f"DELETE FROM results WHERE {LEFT_SQL}").rowcount
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
            for _ in range(rounds):
                for name, pages in versions.items():
                    runs[name].append(walk(pairs, pages))
        finally:
            conn.execute("ROLLBACK")
    out: dict[str, Any] = {"current_requests": walked, "results_deleted": left}
    for name, done in runs.items():
        if len({(r["pending"], r["sha256"]) for r in [*done, *runs["before"]]}) != 1:
            raise SystemExit(f"{path}: the {name} pages differ from the old query's (rows or values)")
        cpu = min(r["cpu_s"] for r in done)
        out[name] = {"pending": done[0]["pending"], "cpu_s": cpu, "us_per_request": round(1e6 * cpu / walked, 2),
                     "runs_cpu_s": [r["cpu_s"] for r in done], "sha256": done[0]["sha256"]}
    return out


def main() -> None:
    schema_14_only(Path(__file__).name)
    args = probe_args(__doc__, "pending_pages.json")
    results: dict[str, Any] = {}
    for scale, path in kept_stores(args.keep, args.scales).items():
        results[scale] = r = measure(path, args.rounds)
        print(f"x{scale:3} {r['current_requests']:>10,} current, {r['after']['pending']:>8,} pending  "
              f"before {r['before']['cpu_s']:6.2f} s  after {r['after']['cpu_s']:6.2f} s CPU", flush=True)
    grew = growth_table({name: [results[s][name]["us_per_request"] for s in args.scales]
                         for name in ("before", "after")}, args.scales, "current request walked")
    speedup = {s: round(results[s]["before"]["cpu_s"] / max(results[s]["after"]["cpu_s"], 0.01), 2)
               for s in args.scales}
    print("before / after: " + ", ".join(f"x{s} {v:.2f}" for s, v in speedup.items()))
    args.out.write_text(json.dumps({"page": PAGE, "left": LEFT_SQL, "results": results, "grew_per_request": grew,
                                    "before_over_after": speedup}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
