"""What each join of the judgments export costs per row, at each scale `tenx.py --keep DIR` kept (issue 23).

The export of a 10×-paper study grew 12.6× in CPU (benchmarks/README.md). This reads the judgments export's
query (`store/_export.py` `JUDGMENTS_SQL`, in its key order) built up one join at a time: the key index
alone, the judgment rows, then the current flag, the request and the result looked up by request id. Each
query is read to its end through SQLite alone (no JSON, no file), and its CPU time per row is printed for
every scale, with the growth per row from the first scale to the last (1.0 = linear growth of the whole
query). `--mmap BYTES` reads the store memory-mapped as well (SQLite's `mmap_size`), side by side.

The store files are read once before the timing, so every query reads from the page cache (the machine needs
the RAM to hold the largest store); the figures are SQLite's own CPU and the kernel's copies, not disk waits.
Writes benchmarks/results/export_joins.json.

Usage:
  nice python benchmarks/tenx.py --keep /tmp/tenx                   # build and keep x1/ and x10/
  nice python benchmarks/export_joins.py --keep /tmp/tenx --mmap 20000000000
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from dialectbias.store._export import JUDGMENTS_SQL  # noqa: E402
from dialectbias.store._store import CACHE_KIB  # noqa: E402

ORDER = "ORDER BY j.judge_id, j.model_id, j.item_id, j.variant, j.request_id"
CURRENT = "j.request_id IN (SELECT request_id FROM current_requests)"
#: the export's query, one join more at a time; "export" is `JUDGMENTS_SQL` itself
QUERIES = {
    "key index": f"SELECT j.request_id FROM judgments j {ORDER}",
    "+ judgment row": f"SELECT j.* FROM judgments j {ORDER}",
    "+ current flag": f"SELECT j.*, {CURRENT} FROM judgments j {ORDER}",
    "+ request": f"SELECT j.*, {CURRENT}, r.refs, r.template, r.prompt_hash FROM judgments j "
                 f"JOIN requests r ON r.request_id = j.request_id {ORDER}",
    "export": JUDGMENTS_SQL,
}


def read_through(path: Path) -> None:
    with path.open("rb") as fh:
        while fh.read(1 << 24):
            pass


#: the last commit whose store schema (14) keyed results, judgments and the current set by request id
LAST_V14 = "0a27c1f"


def schema_14_only(script: str) -> None:
    """Exits with a clear message when the code is past schema 14: the probes that call this compare queries of a
    store keyed by request id, verbatim, and opening a kept store with newer code migrates it (schema 15 keys its
    rows by integer). Their committed figures were measured at schema 14."""
    from dialectbias.store import SCHEMA_VERSION

    if SCHEMA_VERSION > 14:
        raise SystemExit(f"{script} compares queries of schema 14 stores (its figures were measured then); this "
                         f"dialectbias is at schema {SCHEMA_VERSION}. Run it from the last schema-14 code: "
                         f"`git worktree add /tmp/v14 {LAST_V14}`, then the same command in /tmp/v14, on stores "
                         "that code kept.")


def kept_stores(keep: Path, scales: list[str]) -> dict[str, Path]:
    """Each scale's store in the folder `tenx.py --keep` built; exits naming the ones missing."""
    stores = {s: keep / f"x{s}" / "study.sqlite" for s in scales}
    missing = [str(p) for p in stores.values() if not p.is_file()]
    if missing:
        raise SystemExit(f"no kept store at {', '.join(missing)} (run `tenx.py --keep {keep}` first)")
    return stores


def probe_args(doc: str | None, out_name: str) -> argparse.Namespace:
    """The command line of an A/B probe on the stores `tenx.py --keep DIR` kept: --keep, --scales, --rounds (each
    version this many times, alternately) and --out (default benchmarks/results/`out_name`)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the folder `tenx.py --keep` built")
    parser.add_argument("--scales", nargs="+", default=["1", "10"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results" / out_name)
    return parser.parse_args()


def growth_table(per_scale: dict[str, list[float]], scales: list[str], unit: str, unit_time: str = "µs"
                 ) -> dict[str, float]:
    """Prints each line's CPU `unit_time` per `unit` at every scale and its growth per unit from the first scale
    to the last (1.0 = linear growth of the whole); returns the growths."""
    width = max(len(name) for name in per_scale)
    print(f"\nCPU {unit_time} per {unit}; grew = per {unit} {scales[-1]}× / {scales[0]}× (1.0 = linear)")
    print(f"{'':{width}} " + " ".join(f"{'x' + s:>7}" for s in scales) + f" {'grew':>6}")
    grew = {}
    for name, figures in per_scale.items():
        grew[name] = round(figures[-1] / figures[0], 2)
        print(f"{name:{width}} " + " ".join(f"{v:7.2f}" for v in figures) + f" {grew[name]:6.2f}")
    return grew


def time_query(store: Path, sql: str, mmap: int) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    conn.execute(f"PRAGMA mmap_size={mmap}")
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    cur, rows = conn.execute(sql), 0
    while batch := cur.fetchmany(2000):
        rows += len(batch)
    after = resource.getrusage(resource.RUSAGE_SELF)
    conn.close()
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {"rows": rows, "wall_s": round(time.perf_counter() - started, 2), "user_s": round(user, 2),
            "sys_s": round(system, 2), "us_per_row": round(1e6 * (user + system) / max(rows, 1), 2)}


def main() -> None:
    schema_14_only(Path(__file__).name)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the folder `tenx.py --keep` built")
    parser.add_argument("--scales", nargs="+", default=["1", "10"])
    parser.add_argument("--mmap", type=int, default=0, help="also read with this mmap_size (bytes)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "export_joins.json")
    args = parser.parse_args()
    stores = kept_stores(args.keep, args.scales)
    modes = {"read": 0, **({"mmap": args.mmap} if args.mmap else {})}
    results: dict[str, Any] = {}
    for scale, store in stores.items():
        read_through(store)
        for name, sql in QUERIES.items():
            for mode, mmap in modes.items():
                results.setdefault(name, {}).setdefault(mode, {})[scale] = figure = time_query(store, sql, mmap)
                print(f"{'x' + scale:4} {name:15} {mode:5} {figure['rows']:>9,} rows "
                      f"{figure['us_per_row']:6.1f} µs/row", flush=True)
    grew = growth_table({f"{name} ({mode})": [by_scale[s]["us_per_row"] for s in args.scales]
                         for name, by_mode in results.items() for mode, by_scale in by_mode.items()},
                        args.scales, "row")
    for name, by_mode in results.items():
        for mode in by_mode:
            by_mode[mode]["grew_per_row"] = grew[f"{name} ({mode})"]
    args.out.write_text(json.dumps({"stores": {s: str(p) for s, p in stores.items()}, "mmap_size": args.mmap,
                                    "cache_kib": CACHE_KIB, "queries": QUERIES, "results": results},
                                   indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
