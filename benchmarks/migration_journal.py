"""Schema 15's upgrade of an older store under the write-ahead log and under a rollback journal, side by side.

Migration 15 (integer keys) copies requests, results and judgments into new tables and drops the old ones, in
one transaction. Under the write-ahead log every page it writes goes to the log first: at 10× the paper the log
reached 22.6 GB before it was folded into a 16.7 GB store (docs/runs.md). A rollback journal keeps only the
old content of pages the transaction overwrites; the new tables are written past the file's old end and are
not journaled. `Store._migrate` upgrades an existing store under a rollback journal when it can.

For each scale, on the stores `tenx.py --keep DIR` kept (schema 15), this makes a copy schema 14 again (the
tests' `store_sql.downgrade_to_v14`: the same rows, keyed by request id) and compacts it (`VACUUM INTO`, so it
holds no free pages, as a store that was never downgraded), then upgrades it once per mode (a fresh copy for
each but the last), each in a fresh subprocess, sampling the sizes of the store, its log and its journal every
0.2 s. The modes: `journal`, this code; `log`, this code kept on the write-ahead log; `before`, also with this
SQLite build's `secure_delete` (on: every page the dropped tables free is zeroed, so written once more), which
`_migrate` now turns off for the migration. It prints, per mode, CPU and wall time, the largest log or journal,
the largest total on disk and the store after, and writes benchmarks/results/migration_journal.json.

Disk: at 10× the three modes need about 3.3 times the kept store's size free (the schema-14 copy and its
copy, the grown file, the log); `--modes journal` alone needs 1.7 times.

Usage:
  nice python benchmarks/migration_journal.py --keep /work/tenx15 --scales 1
  nice python benchmarks/migration_journal.py --keep /work/tenx15 --scales 1 10 --scratch /work/mig
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # store_sql: the tests' downgrade to schema 14

#: the upgrade in a fresh process: `Store.open` migrates. Mode `log` keeps the write-ahead log; `before` also
#: leaves SQLite's secure_delete as this build has it (on: freed pages are zeroed), as the code before did
UPGRADE = """
import sqlite3, sys
from dialectbias.store import Store
class Before(sqlite3.Connection):
    def execute(self, sql, *args):
        return super().execute("PRAGMA secure_delete" if sql == "PRAGMA secure_delete=OFF" else sql, *args)
connect = sqlite3.connect
if sys.argv[2] in ("before", "log"):
    Store._rollback_journal = lambda self: False
if sys.argv[2] == "before":
    sqlite3.connect = lambda *args, **kwargs: connect(*args, factory=Before, **kwargs)
Store.open(sys.argv[1]).close()
"""

MODES = ["journal", "log", "before"]
RATIOS = ("cpu_s", "wall_s", "largest_log_or_journal_mb", "largest_on_disk_mb")
COUNTS_SQL = ("SELECT (SELECT value FROM meta WHERE key = 'schema_version'), (SELECT count(*) FROM requests), "
              "(SELECT count(*) FROM results), (SELECT count(*) FROM judgments)")


def _mb(n: int) -> float:
    return round(n / 1e6, 1)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def make_v14(source: Path, target: Path) -> dict[str, Any]:
    """A compact schema-14 copy of the schema-15 store `source` at `target`."""
    from store_sql import downgrade_to_v14

    started = time.perf_counter()
    work = target.with_name(target.name + ".work")
    shutil.copyfile(source, work)
    with closing(sqlite3.connect(work)) as conn:  # (`with` alone does not close it)
        conn.execute("PRAGMA journal_mode=DELETE")  # the downgrade's own copies are not logged either
    downgrade_to_v14(work)
    with closing(sqlite3.connect(work)) as conn:  # (`with` alone does not close it)
        conn.execute("VACUUM INTO ?", (str(target),))
    work.unlink()
    return {"made_s": round(time.perf_counter() - started, 1), "store_mb": _mb(_size(target))}


def upgrade(v14: Path, path: Path, mode: str) -> dict[str, Any]:
    """Upgrade a copy of `v14` at `path` (`v14` itself when it is `path`) in a subprocess, sampling the files'
    sizes."""
    if path != v14:
        shutil.copyfile(v14, path)
    files = {"store": path, "log": Path(f"{path}-wal"), "journal": Path(f"{path}-journal")}
    peak = {name: 0 for name in files} | {"total": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            sizes = {name: _size(p) for name, p in files.items()}
            for name, n in sizes.items():
                peak[name] = max(peak[name], n)
            peak["total"] = max(peak["total"], sum(sizes.values()))
            done.wait(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", UPGRADE, str(path), mode])
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{path}: the {mode} upgrade exited with {os.waitstatus_to_exitcode(status)}")
    with closing(sqlite3.connect(path)) as conn:
        counts = conn.execute(COUNTS_SQL).fetchone()
    return {"cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "wall_s": round(wall, 1),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "largest_log_or_journal_mb":
            _mb(max(peak["log"], peak["journal"])), "largest_on_disk_mb": _mb(peak["total"]),
            "store_after_mb": _mb(_size(path)), "schema_and_rows": list(counts)}


def with_ratios(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with each other mode's figures over the journal's (computed again), printed."""
    row = {key: value for key, value in row.items() if not key.endswith("_over_journal")}
    for mode in MODES[1:]:
        if mode in row and "journal" in row:
            row[f"{mode}_over_journal"] = ratio = {key: round(row[mode][key] / max(row["journal"][key], 0.1), 2)
                                                   for key in RATIOS}
            print(f"  {mode} / journal {json.dumps(ratio)}", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="the folder `tenx.py --keep` filled (x1/, x10/)")
    parser.add_argument("--scales", nargs="+", default=["1", "10"])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES)
    parser.add_argument("--scratch", type=Path, help="where the copies go (default: DIR/migration)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "migration_journal.json")
    parser.add_argument("--table", type=Path, help="print the ratios of this results file again (and write "
                        "them into it, computed from its figures)")
    args = parser.parse_args()
    if args.table:
        table = json.loads(args.table.read_text())
        for scale, row in table.items():
            print(f"{scale}: " + ", ".join(f"{mode} CPU {row[mode]['cpu_s']} s" for mode in MODES if mode in row))
            table[scale] = with_ratios(row)
        args.table.write_text(json.dumps(table, indent=2) + "\n")
        return
    if args.keep is None:
        parser.error("--keep DIR is needed (the folder `tenx.py --keep` filled)")
    scratch = args.scratch or args.keep / "migration"
    scratch.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    for scale in args.scales:
        source = args.keep / f"x{scale}" / "study.sqlite"
        if not source.is_file():
            raise SystemExit(f"{source}: no kept store at scale {scale} (run tenx.py --keep {args.keep})")
        v14 = scratch / f"x{scale}-v14.sqlite"
        row: dict[str, Any] = {"v14": make_v14(source, v14)}
        print(f"{scale}×: schema-14 copy {row['v14']}", flush=True)
        for n, mode in enumerate(args.modes):
            path = v14 if n == len(args.modes) - 1 else scratch / f"x{scale}-{mode}.sqlite"  # the last: in place
            row[mode] = upgrade(v14, path, mode)
            print(f"  {mode:8} {json.dumps(row[mode])}", flush=True)
            for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
                leftover.unlink(missing_ok=True)
        if len({json.dumps(row[mode]["schema_and_rows"]) for mode in MODES if mode in row}) > 1:
            raise SystemExit(f"{scale}×: the modes left different stores: {row}")
        results[f"x{scale}"] = with_ratios(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
