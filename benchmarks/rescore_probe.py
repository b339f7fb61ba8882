"""What asking "is any judgment to re-score?" costs on opening an experiment, before and after the (judge,
scoring) index of schema 12 (issue 23).

Every command that opens a judged experiment (run, report, export, status, the review app) re-scores the
judgments scored with other settings than the experiment's now (`JudgedTask.rescore`): per judge, it asks for
those whose `scoring` fingerprint is not the current one. Before, that read the whole `judgments` table in
rowid order for each judge, also when none was stale; now `stale_scorings` probes the index.

On each store `tenx.py --keep DIR` kept (opened with this code: a v11 store gains the index first), every
judge's question is asked with the current fingerprint (the one its judgments hold: nothing is stale) by the
old query and by `judgments_to_rescore`, alternately, twice each, from a warm page cache; both must find
nothing. Printed: CPU per scale, ns per judgment, the growth per judgment from the first scale to the last
(1.0 = linear), before / after. Writes benchmarks/results/rescore_probe.json.

Usage:
  nice python benchmarks/tenx.py --keep /tmp/tenx                   # build and keep x1/ and x10/
  nice python benchmarks/rescore_probe.py --keep /tmp/tenx
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from export_joins import growth_table, kept_stores, probe_args, read_through, schema_14_only  # noqa: E402

from dialectbias.store import Store, judgments_to_rescore  # noqa: E402
from dialectbias.store._judgments import RESCORE_BATCH  # noqa: E402

#: `judgments_to_rescore`'s query before this change (commit 619f998), verbatim
BEFORE_SQL = ("SELECT j.rowid, j.request_id, j.judge_id, j.item_id, j.variant, j.parse_status, j.parsed, j.clipped, "
              "j.reason, q.refs, q.meta FROM judgments j NOT INDEXED JOIN requests q ON q.request_id = j.request_id "
              "WHERE j.judge_id = ? AND j.scoring IS NOT ? AND j.rowid > ? "
              "AND j.request_id IN (SELECT request_id FROM current_requests) ORDER BY j.rowid LIMIT ?")

Probe = Callable[[str, str], int]


def cpu_of(probe: Probe, judges: list[tuple[str, str]]) -> tuple[float, int]:
    started = time.process_time()  # ns resolution: the index probes take well under a millisecond
    found = sum(probe(judge, fingerprint) for judge, fingerprint in judges)
    return time.process_time() - started, found


def measure(path: Path, rounds: int) -> dict[str, Any]:
    read_through(path)
    with Store.open(path, create=False) as store:
        judgments = store.query("SELECT count(*) FROM judgments")[0][0]
        judges = [(r[0], r[1]) for r in store.query(
            "SELECT judge_id, max(scoring) FROM judgments GROUP BY judge_id ORDER BY judge_id")]
        versions: dict[str, Probe] = {
            "before": lambda j, f: len(store.query(BEFORE_SQL, (j, f, 0, RESCORE_BATCH))),
            "after": lambda j, f: sum(len(b) for b in judgments_to_rescore(store, j, f)),
        }
        runs: dict[str, list[tuple[float, int]]] = {name: [] for name in versions}
        for _ in range(rounds):
            for name, probe in versions.items():
                runs[name].append(cpu_of(probe, judges))
    out: dict[str, Any] = {"judgments": judgments, "judges": len(judges)}
    for name, done in runs.items():
        if any(found for _, found in done):
            raise SystemExit(f"{path}: the {name} probe found stale judgments (the store is not all current)")
        cpu = min(c for c, _ in done)
        out[name] = {"cpu_ms": round(1e3 * cpu, 3), "ns_per_judgment": round(1e9 * cpu / judgments, 3),
                     "runs_cpu_ms": [round(1e3 * c, 3) for c, _ in done]}
    return out


def main() -> None:
    schema_14_only(Path(__file__).name)
    args = probe_args(__doc__, "rescore_probe.json")
    results: dict[str, Any] = {}
    for scale, path in kept_stores(args.keep, args.scales).items():
        results[scale] = r = measure(path, args.rounds)
        print(f"x{scale:3} {r['judgments']:>10,} judgments, {r['judges']} judges  "
              f"before {r['before']['cpu_ms']:9.1f} ms  after {r['after']['cpu_ms']:6.3f} ms CPU", flush=True)
    grew = growth_table({name: [results[s][name]["ns_per_judgment"] for s in args.scales]
                         for name in ("before", "after")}, args.scales, "judgment", unit_time="ns")
    speedup = {s: round(results[s]["before"]["cpu_ms"] / max(results[s]["after"]["cpu_ms"], 0.001))
               for s in args.scales}
    print("before / after: " + ", ".join(f"x{s} {v:,}" for s, v in speedup.items()))
    args.out.write_text(json.dumps({"results": results, "grew_per_judgment": grew, "before_over_after": speedup},
                                   indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
