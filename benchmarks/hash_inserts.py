"""Inserts keyed by content hashes, with SQLite's page cache as the store sets it and with one that holds them,
side by side (issue 23).

`tenx.py` has the judge compile and the judge fill ~1.1× above linear from 1× to 10× the paper. Both insert
rows whose keys are content hashes (SPEC §3): a compile puts each request id into the requests' unique index,
a fill puts each answer's cache key into the cache's. Hashes land at random places, so once an index outgrows
the page cache (`CACHE_KIB`, 64 MiB: each index is ~13 MB at 1× and ~130 MB at 10×) most inserts read a page
from outside it and dirty a page of their own. If that is what grows, a page cache large enough to hold the
indexes should bring the growth per row back to ~1.0.

For each scale this runs, into a new store and in this process, the SQLite side of the paper's judge compile
(`Store.add_requests`: 3 judges, each its own set; request ids are 64-hex sha256s; rows without text parts) and
then the fill's cache rows for the same requests (`Store.write`, 500 a transaction, ~700-byte outputs): with
the store's page cache and with `--big-mib` (set as a user does: $DIALECTBIAS_STORE_CACHE_MIB), and with keys
that are hashes, as in a study, and with keys of the same length given in insertion order (`ordered`: every
insert appends to its index). It prints CPU µs per row for each phase and run, with the growth per row from the
first scale to the last (1.0 = linear), and writes benchmarks/results/hash_inserts.json.

Usage:
  nice python benchmarks/hash_inserts.py                    # 1× and 10× (~20 min)
  nice python benchmarks/hash_inserts.py --scales 0.1 1     # quicker
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import tempfile
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from compile_inserts import JUDGES, PAPER_JUDGE_REQUESTS  # noqa: E402
from export_joins import growth_table  # noqa: E402

from dialectbias.store import Store  # noqa: E402
from dialectbias.store._store import CACHE_ENV, CACHE_KIB  # noqa: E402

OUTPUT = '{"score": 3, "confidence": 4, "reason": "' + "the answer keeps to the question; " * 20 + '"}'
BATCH = 500


def _hash(*parts: object) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


def _ordered(*parts: object) -> str:
    """A 64-character key of the same length as a hash, in insertion order (judge `j`, row `i`)."""
    kind, j, i = parts
    return f"{kind}{JUDGES.index(str(j))}{int(i):058d}"[:64].ljust(64, "0")


KEYS = {"hash": _hash, "ordered": _ordered}


def requests(key: Any, judge: str, n: int) -> Iterator[dict[str, Any]]:
    """A judge's request rows as a compile writes them (ids and cache keys by `key`; no text parts)."""
    for i in range(n):
        yield {"request_id": key("r", judge, i), "stage": "judge", "model_id": judge,
               "item_id": f"q{i // 171:05d}", "variant": f"d{i % 9}", "refs": json.dumps([_hash("gen", i)]),
               "template": "judge/rlaif", "prompt_hash": _hash("prompt", judge, i),
               "messages": '[{"role":"user","content":"@part"}]', "params": "{}", "json_schema": None,
               "cache_key": key("c", judge, i), "meta": json.dumps({"model_id": f"m{i % 19}"}),
               "created_at": 0.0}


def cache_rows(key: Any, n: int) -> Iterator[tuple[str, dict[str, Any]]]:
    for judge in JUDGES:
        for i in range(n // len(JUDGES)):
            yield "cache", {"cache_key": key("c", judge, i), "output": OUTPUT, "finish_reason": "stop",
                            "tokens_in": 900, "tokens_out": 60, "latency_s": 0.5, "created_at": 0.0}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(n: int, keys: str, cache_mib: int | None, folder: Path, journal: str, chunk: int) -> dict[str, Any]:
    path = folder / "hash.sqlite"
    if cache_mib is None:
        os.environ.pop(CACHE_ENV, None)
    else:  # as a user sets it (docs/scale.md "The page cache")
        os.environ[CACHE_ENV] = str(cache_mib)
    with Store.open(path) as store:
        if journal != "wal":
            store._conn.execute(f"PRAGMA journal_mode={journal}")
        started = _cpu()
        for judge in JUDGES:
            rows = requests(KEYS[keys], judge, n // len(JUDGES))
            if not chunk:
                store.add_requests(rows, fingerprint=f"fp-{judge}", current=("judge", judge))
            while chunk and (part := list(islice(rows, chunk))):  # a transaction each, as plain inserts
                store.add_requests(part)
        compiled = _cpu()
        answers = cache_rows(KEYS[keys], n)
        while batch := list(islice(answers, BATCH)):
            store.write(batch)
        filled = _cpu()
    size = path.stat().st_size
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    return {"rows": n, "compile_cpu_s": round(compiled - started, 2), "cache_cpu_s": round(filled - compiled, 2),
            "compile_us_per_row": round(1e6 * (compiled - started) / n, 2),
            "cache_us_per_row": round(1e6 * (filled - compiled) / n, 2), "store_mb": round(size / 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=float, nargs="+", default=[1, 10])
    parser.add_argument("--big-mib", type=int, default=1024, help="the large page cache (MiB)")
    parser.add_argument("--only", nargs="+", help="these runs alone, e.g. 'ordered, 1024 MiB'")
    parser.add_argument("--journal", choices=["wal", "delete"], default="wal", help="the store's journal mode "
                        "(delete: a rollback journal, not the store's own setting; for a probe of the log)")
    parser.add_argument("--chunk", type=int, default=0, help="insert each set's requests in transactions of "
                        "this many rows, as plain inserts (no current or compiled set): a probe of the "
                        "transaction's length; 0: the compile's one transaction a set")
    parser.add_argument("--scratch", type=Path, help="folder for the new stores (default: a temporary one)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "hash_inserts.json")
    args = parser.parse_args()
    caches = {f"{CACHE_KIB // 1024} MiB": None, f"{args.big_mib} MiB": args.big_mib}
    runs = {f"{keys}, {name}": (keys, mib) for keys in KEYS for name, mib in caches.items()
            if not args.only or f"{keys}, {name}" in args.only}
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        for scale in args.scales:
            n = round(PAPER_JUDGE_REQUESTS * scale)
            results[f"{scale:g}"] = r = {name: run(n, keys, mib, Path(tmp), args.journal, args.chunk)
                                         for name, (keys, mib) in runs.items()}
            print(f"x{scale:g}: {n:,} rows", flush=True)
            for name, v in r.items():
                print(f"  {name:18} compile {v['compile_cpu_s']:6.1f} s, cache {v['cache_cpu_s']:6.1f} s CPU",
                      flush=True)
    scales = list(results)
    grew = growth_table({f"{phase}, {name}": [results[s][name][f"{phase}_us_per_row"] for s in scales]
                         for phase in ("compile", "cache") for name in runs}, scales, "row")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"judges": JUDGES, "journal": args.journal, "chunk": args.chunk, "runs": list(runs),
                                    "results": results, "grew_per_row": grew}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
