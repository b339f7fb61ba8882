"""The dispatch's peak memory against the number of calls it sends, on one store (issue 23 item 3).

`tenx.py` sends 5% of the generation requests for real at every scale, so its dispatch step sends 3,800
calls at 1× and 38,000 at 10×, and its peak RSS grew with them (103 → 188 MB). Is that the study's size
or a bound being reached? Each model's runner keeps one page of its pending requests in memory
(`run/_executor.py`: PAGE rows, read from the store in request-id order) and SQLite's page cache is bounded
(`CACHE_KIB`), so the peak should stop growing once every model has a full page pending. This builds one
study (the paper's shape at `--scale`, `tenx.py`'s synthetic answers), leaves a different number of
requests unanswered each time, and sends them with `executor: local` to the package's test server in a
fresh process (`tenx.py --child dispatch`), printing the dispatch's peak RSS for each. Writes
benchmarks/results/dispatch_memory.json.

Usage: nice python benchmarks/dispatch_memory.py [--scale 1] [--pending 3800 19000 38000 76000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tenx  # noqa: E402


def child(step: str, exp_path: Path, pending: int) -> dict[str, Any]:
    """One `tenx.py` step in a fresh process; its result line."""
    return tenx.child_result([sys.executable, str(HERE / "tenx.py"), "--child", step, str(exp_path), "--sample",
                              str(pending)], f"step {step} with {pending:,} pending")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="the study's size (1 = the paper's 400 items)")
    parser.add_argument("--pending", type=int, nargs="+", default=[3_800, 19_000, 38_000, 76_000],
                        help="requests left for the dispatch to send, one run each")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "dispatch_memory.json")
    args = parser.parse_args()
    tenx._ensure_importable()
    from dialectbias.run._executor import PAGE
    from dialectbias.store._store import CACHE_KIB
    from dialectbias.testing import TestServer

    pool, _ = tenx.sentences()
    n_items = max(1, round(tenx.PAPER_ITEMS * args.scale))
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-dispatch-memory-") as tmp, \
            TestServer(record_requests=0) as server:
        for pending in args.pending:
            folder = Path(tmp) / f"p{pending}"
            folder.mkdir()
            exp_path = tenx.write_study(folder, n_items, server.base_url, pool)
            child("compile-generate", exp_path, pending)
            child("fill-generate", exp_path, pending)
            calls = server.stats()["chat_requests"]
            got = child("dispatch", exp_path, pending)
            got["server_calls"] = server.stats()["chat_requests"] - calls
            if got["unanswered"] or got["server_calls"] != got["sent"]:
                raise SystemExit(f"{pending:,} pending: {got['unanswered']} left unanswered, "
                                 f"{got['server_calls']} calls for {got['sent']} requests")
            results.append({"pending": pending, **got})
            per_model = got["sent"] / len(tenx.MODELS)
            print(f"{got['sent']:>8,} calls ({per_model:,.0f} a model): peak RSS {got['peak_rss_mb']:6.1f} MB, "
                  f"{got['requests_per_s']:,.0f} req/s", flush=True)
            shutil.rmtree(folder)
    meta = {"scale": args.scale, "items": n_items, "models": len(tenx.MODELS), "page_rows": PAGE,
            "sqlite_cache_kib": CACHE_KIB}
    args.out.write_text(json.dumps({**meta, "results": results}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
