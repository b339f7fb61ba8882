"""What a compile's inserts cost with schema 10's and schema 11's `requests_stage_model`, side by side (issue 23).

Schema 10 indexed requests by (stage, model, request id): request ids are content hashes, so every new
request went to a random place in that index. Schema 11 indexes (stage, model) alone: a (stage, model)'s
entries follow the rowid, and a compile appends to them. This runs the SQLite side of a judge compile, the
store's own `Store.add_requests` (the request rows, the current set, the compiled set), for the paper's judge
requests at each scale (1×: 205,200; 3 judges, each its own set), into a new store with each index, one after
the other in this process; the rows carry no text parts (they are the same for both). Printed: CPU µs per
request, per scale and index, with the growth per request from the first scale to the last (1.0 = linear),
and v10 / v11. Writes benchmarks/results/compile_inserts.json.

Usage:
  nice python benchmarks/compile_inserts.py                      # 1× and 10× (~15 min)
  nice python benchmarks/compile_inserts.py --scales 0.1 1       # quicker
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from export_joins import growth_table  # noqa: E402

from dialectbias.store import Store  # noqa: E402

PAPER_JUDGE_REQUESTS = 205_200
JUDGES = ("gpt-4o-judge", "claude-judge", "gemini-judge")
#: schema 10's index, put back on a new (schema 11) store for the side-by-side run
V10_INDEX = "CREATE INDEX requests_stage_model ON requests (stage, model_id, request_id)"


def rows(judge: str, n: int) -> Iterator[dict[str, Any]]:
    """A judge's request rows as a compile writes them (ids: content hashes; no text parts)."""
    for i in range(n):
        request_id = hashlib.sha256(f"{judge}/{i}".encode()).hexdigest()[:32]
        yield {"request_id": request_id, "stage": "judge", "model_id": judge, "item_id": f"q{i // 171:05d}",
               "variant": f"d{i % 9}", "refs": json.dumps([f"g{i}", f"s{i}"]), "template": "judge/rlaif",
               "prompt_hash": request_id[::-1], "messages": '[{"role":"user","content":"@part"}]',
               "params": "{}", "json_schema": None, "cache_key": request_id[1:] + "k",
               "meta": json.dumps({"model_id": f"m{i % 19}"}), "created_at": 0.0}


def compile_cost(n: int, index: str, folder: Path) -> dict[str, Any]:
    path = folder / f"{index}.sqlite"
    with Store.open(path) as store:
        if index == "v10":
            conn = store._conn  # the index put back below the store's interface, for this run only
            conn.execute("DROP INDEX requests_stage_model")
            conn.execute(V10_INDEX)
        before = resource.getrusage(resource.RUSAGE_SELF)
        for judge in JUDGES:
            store.add_requests(rows(judge, n // len(JUDGES)), fingerprint=f"fp-{judge}", current=("judge", judge))
        after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    size = path.stat().st_size
    path.unlink()
    return {"requests": n, "cpu_s": round(cpu, 2), "us_per_request": round(1e6 * cpu / n, 2),
            "store_mb": round(size / 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=float, nargs="+", default=[1, 10])
    parser.add_argument("--scratch", type=Path, help="folder for the new stores (default: a temporary one)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "compile_inserts.json")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        for scale in args.scales:
            n = round(PAPER_JUDGE_REQUESTS * scale)
            results[f"{scale:g}"] = r = {index: compile_cost(n, index, Path(tmp)) for index in ("v10", "v11")}
            print(f"x{scale:<4g} {n:>10,} judge requests  v10 {r['v10']['cpu_s']:7.1f} s  "
                  f"v11 {r['v11']['cpu_s']:7.1f} s CPU", flush=True)
    scales = list(results)
    grew = growth_table({index: [results[s][index]["us_per_request"] for s in scales] for index in ("v10", "v11")},
                        scales, "request")
    ratio = {s: round(results[s]["v10"]["cpu_s"] / max(results[s]["v11"]["cpu_s"], 0.01), 2) for s in scales}
    print("v10 / v11: " + ", ".join(f"x{s} {v:.2f}" for s, v in ratio.items()))
    args.out.write_text(json.dumps({"judges": JUDGES, "v10_index": V10_INDEX, "results": results,
                                    "grew_per_request": grew, "v10_over_v11": ratio}, indent=2) + "\n",
                        encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
