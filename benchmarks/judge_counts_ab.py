"""`judge_counts` before and after schema 14, side by side on one store (issue 23 item 4).

A run's closing counts (`judge_counts`: judgments, failed, zeroed, flagged, for review, invalid, clipped per
judge) read each key's latest current judgment. Before schema 14 the query walked `judgments_key` to find
those judgments and then read every `judgments` row in rowid order to test them (the table is the store's
widest: answers' parsed JSON, checks, flags). Schema 14's `judgments_key` also holds the counted columns, so
the walk that finds a judgment answers for it. This runs both queries alternately on the same store (a study
`tenx.py --keep DIR` kept, migrated to schema 14 by any `dialectbias` command), checks they give the same
counts, and prints the best CPU and wall seconds of each, the ratio, and writes
benchmarks/results/judge_counts_ab.json. `--cold` empties the page cache before each query (needs root).

Usage:
  nice python benchmarks/tenx.py --scales 1 10 --keep /tmp/tenx
  nice python benchmarks/judge_counts_ab.py /tmp/tenx/x1/study.sqlite /tmp/tenx/x10/study.sqlite --rounds 3
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import astuple
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from tenx import DROP_CACHES, drop_page_cache  # noqa: E402

from dialectbias.store import SCHEMA_VERSION, Store, judge_counts  # noqa: E402
from dialectbias.store._judgments import (  # noqa: E402
    _ZEROED_SQL,
    INVALID_SQL,
    LATEST_CURRENT_SQL,
    OUT_OF_RANGE_SQL,
)


def counts_before(store: Store, judge_ids: list[str]) -> dict[str, tuple[int, ...]]:
    """`judge_counts`' query up to schema 13 (commit 376ff0d), verbatim."""
    rows = store.query(
        f"SELECT j.judge_id, count(*), coalesce(sum(j.parse_status = 'failed'), 0), coalesce(sum({_ZEROED_SQL}), 0), "
        f"coalesce(sum(j.flagged), 0), coalesce(sum(j.needs_review), 0), coalesce(sum({INVALID_SQL}), 0), "
        f"coalesce(sum({OUT_OF_RANGE_SQL}), 0) FROM judgments j NOT INDEXED "
        f"WHERE j.judge_id IN ({','.join('?' * len(judge_ids))}) AND {LATEST_CURRENT_SQL} GROUP BY j.judge_id",
        tuple(judge_ids))
    return {r[0]: tuple(r[1:]) for r in rows}


def counts_now(store: Store, judge_ids: list[str]) -> dict[str, tuple[int, ...]]:
    return {k: astuple(v) for k, v in judge_counts(store, judge_ids).items()}


def timed(fn: Any, store: Store, judge_ids: list[str], cold: bool) -> tuple[dict[str, Any], Any]:
    if cold and not drop_page_cache():
        raise SystemExit(f"--cold: {DROP_CACHES} is not writable (run as root, or leave --cold out)")
    cpu, wall = time.process_time(), time.perf_counter()
    got = fn(store, judge_ids)
    return {"cpu_s": round(time.process_time() - cpu, 2), "wall_s": round(time.perf_counter() - wall, 2)}, got


def measure(path: Path, rounds: int, cold: bool) -> dict[str, Any]:
    with Store.open(path, create=False) as store:
        judge_ids = [r[0] for r in store.query("SELECT DISTINCT judge_id FROM judgments")]
        n = store.query("SELECT count(*) FROM judgments")[0][0]
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "now": []}
        for _ in range(rounds):
            before, got_before = timed(counts_before, store, judge_ids, cold)
            now, got_now = timed(counts_now, store, judge_ids, cold)
            if got_before != got_now:
                raise SystemExit(f"{path}: the two queries disagree:\n{got_before}\n{got_now}")
            runs["before"].append(before)
            runs["now"].append(now)
    best = {k: min(v, key=lambda r: r["cpu_s"]) for k, v in runs.items()}
    ratio = best["before"]["cpu_s"] / best["now"]["cpu_s"] if best["now"]["cpu_s"] else None
    return {"store": str(path), "judgments": n, "judges": len(judge_ids), "rounds": runs, "best": best,
            "before_over_now_cpu": None if ratio is None else round(ratio, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stores", type=Path, nargs="+", help="study.sqlite files (tenx.py --keep DIR kept them)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="empty the page cache before each query (root)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "judge_counts_ab.json")
    args = parser.parse_args()
    for path in args.stores:
        if not path.is_file():
            raise SystemExit(f"{path}: no such store (build one with tenx.py --keep DIR)")
    results = [measure(p, args.rounds, args.cold) for p in args.stores]
    print(f"{'store':<34}{'judgments':>11}{'before CPU s':>14}{'now CPU s':>11}{'ratio':>8}")
    for r in results:
        print(f"{r['store'][-33:]:<34}{r['judgments']:>11,}{r['best']['before']['cpu_s']:>14.2f}"
              f"{r['best']['now']['cpu_s']:>11.2f}{r['before_over_now_cpu'] or 0:>8.2f}")
    args.out.write_text(json.dumps({"schema": SCHEMA_VERSION, "cold": args.cold, "results": results}, indent=1)
                        + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
