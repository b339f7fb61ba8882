"""How much of a step's peak memory is SQLite's page cache (issue 23 item 4: "flat memory").

Every store connection bounds SQLite's page cache at `CACHE_KIB` (64 MiB). A step that touches more pages
than that at 10× and fewer at 1× shows a peak that grows with the study until the cache is full, and no
further. This runs `tenx.py`'s read-only steps (resume with everything done, report, export) on the stores
`tenx.py --keep DIR` kept, each in a fresh process, with the cache bound as shipped and with a small one,
alternately, and prints each one's peak RSS and CPU seconds: when the peak with the small cache is the same
at 1× and 10×, the growth was the cache. The first round of each store reads it from disk; compare the
later rounds' CPU. Writes benchmarks/results/cache_bound.json.

Usage: nice python benchmarks/cache_bound.py --keep DIR [--steps resume report export] [--small-kib 2048]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from export_joins import kept_stores  # noqa: E402


def run(kib: int, step: str, exp_path: Path) -> dict[str, Any]:
    """`tenx.py --child STEP` in a fresh process with SQLite's cache bounded at `kib`."""
    from tenx import child_result

    got = child_result([sys.executable, __file__, "--child", str(kib), step, str(exp_path)],
                       f"{exp_path}: {step} with a {kib} KiB cache")
    return {"cpu_s": got["cpu_s"], "wall_s": got["wall_s"], "peak_rss_mb": got["peak_rss_mb"]}


def child(kib: int, step: str, exp_path: Path) -> None:
    import tenx

    tenx._ensure_importable()
    import dialectbias.store._store as store_module

    store_module.CACHE_KIB = kib  # read by Store.open
    tenx.child(step, exp_path, 0)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the folder `tenx.py --keep` built")
    parser.add_argument("--scales", nargs="+", default=["1", "10"])
    parser.add_argument("--steps", nargs="+", default=["resume", "report", "export"],
                        choices=["resume", "report", "export"])
    parser.add_argument("--small-kib", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "cache_bound.json")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent / "src"))
    from dialectbias.store._store import CACHE_KIB

    stores = kept_stores(args.keep, args.scales)
    caches = (CACHE_KIB, args.small_kib)
    results: dict[str, Any] = {}
    print(f"{'scale':<6}{'step':<8}" + "".join(f"{f'{k // 1024} MiB: MB, CPU s':>22}" for k in caches))
    for scale, path in stores.items():
        yaml = next(path.parent.glob("*.yaml"))
        for step in args.steps:
            rounds: dict[int, list[dict[str, Any]]] = {k: [] for k in caches}
            for _ in range(args.rounds):
                for kib in caches:
                    rounds[kib].append(run(kib, step, yaml))
            results.setdefault(scale, {})[step] = {str(k): v for k, v in rounds.items()}
            cells = []
            for kib in caches:
                later = rounds[kib][1:] or rounds[kib]
                cells.append(f"{max(r['peak_rss_mb'] for r in rounds[kib]):>12.1f}, "
                             f"{min(r['cpu_s'] for r in later):>7.2f}")
            print(f"{'x' + scale:<6}{step:<8}" + "".join(f"{c:>22}" for c in cells), flush=True)
    args.out.write_text(json.dumps({"caches_kib": caches, "rounds": args.rounds, "results": results}, indent=1)
                        + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
