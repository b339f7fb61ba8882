"""Would integer keys in the export's order make the judgments export linear? A probe, not a migration (issue 23).

The export of a 10×-paper study grows faster than the study: each judgment's request, result and current flag
are looked up by a random 64-hex request id (`export_joins.py`). The fix proposed is a schema in which
requests, results and judgments share an integer key given in compile order, so that reading judgments in key
order reads the other tables in the same order. Before anyone writes that migration, this measures its best
case on the stores `tenx.py --keep DIR` kept, side by side with the export's own query:

  export     `store/_export.py` `JUDGMENTS_SQL` on the store (key order through `judgments_key`, lookups by
             request id)
  clustered  the same rows and columns from copies of the tables (in a scratch file) whose rowids are the
             export's order: judgments, then each one's full request row and full result row at the same
             rowid, and the current ones' rowids; read in rowid order, joined by rowid

The copies hold every column of the rows they copy, so the clustered read reads as many bytes as the export.
Both queries are read to their end through SQLite alone (no JSON, no file), each from a warm page cache (its
file read once before), and the CPU per row is printed per scale with its growth (1.0 = linear); the row
counts and a hash of every row must agree. Writes benchmarks/results/clustered_keys.json. Needs free disk
about 0.55× the largest store for its scratch copy (deleted after).

Usage:
  nice python benchmarks/tenx.py --keep /tmp/tenx                   # build and keep x1/ and x10/
  nice python benchmarks/clustered_keys.py --keep /tmp/tenx
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from export_joins import growth_table, kept_stores, read_through, schema_14_only, time_query  # noqa: E402

from dialectbias.store._export import JUDGMENTS_SQL  # noqa: E402
from dialectbias.store._store import CACHE_KIB  # noqa: E402

ORDER = "ORDER BY j.judge_id, j.model_id, j.item_id, j.variant, j.request_id"
#: the copies, built in the scratch file (`main`) from the store (`s`): rowid = position in the export's order
BUILD = (
    f"CREATE TABLE jx AS SELECT j.* FROM s.judgments j {ORDER}",
    "CREATE TABLE rx AS SELECT r.* FROM jx j LEFT JOIN s.requests r ON r.request_id = j.request_id "
    "ORDER BY j.rowid",
    "CREATE TABLE sx AS SELECT s.* FROM jx j LEFT JOIN s.results s ON s.request_id = j.request_id "
    "ORDER BY j.rowid",
    "CREATE TABLE cx (k INTEGER PRIMARY KEY)",
    "INSERT INTO cx SELECT j.rowid FROM jx j WHERE j.request_id IN (SELECT request_id FROM s.current_requests) "
    "ORDER BY j.rowid",
)
CLUSTERED_SQL = """
SELECT j.*, j.rowid IN (SELECT k FROM cx) AS current, r.refs AS generation_ids, r.template AS prompt_template,
       r.prompt_hash, s.tokens_in, s.tokens_out, s.latency_s, s.cache_hit, s.completed_at
FROM jx j JOIN rx r ON r.rowid = j.rowid AND r.request_id IS NOT NULL LEFT JOIN sx s ON s.rowid = j.rowid
ORDER BY j.rowid
"""


def build(store: Path, scratch: Path) -> float:
    conn = sqlite3.connect(scratch)
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("ATTACH ? AS s", (f"file:{store}?mode=ro",))
    started = time.perf_counter()
    for sql in BUILD:
        conn.execute(sql)
    conn.commit()
    conn.close()
    return round(time.perf_counter() - started, 1)


def rows_hash(db: Path, sql: str) -> str:
    """A hash of every row the query gives, in order (read again, untimed)."""
    conn, digest = sqlite3.connect(f"file:{db}?mode=ro", uri=True), hashlib.sha256()
    cur = conn.execute(sql)
    while batch := cur.fetchmany(2000):
        digest.update(repr(batch).encode())
    conn.close()
    return digest.hexdigest()


def main() -> None:
    schema_14_only(Path(__file__).name)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the folder `tenx.py --keep` built")
    parser.add_argument("--scales", nargs="+", default=["1", "10"])
    parser.add_argument("--scratch", type=Path, help="folder for the scratch copy (default: beside the stores)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "clustered_keys.json")
    args = parser.parse_args()
    stores = kept_stores(args.keep, args.scales)
    results: dict[str, Any] = {}
    for scale, store in stores.items():
        with tempfile.TemporaryDirectory(dir=args.scratch or args.keep) as tmp:
            scratch = Path(tmp) / "clustered.sqlite"
            built_s = build(store, scratch)
            read_through(store)
            export = time_query(store, JUDGMENTS_SQL, 0)
            read_through(scratch)
            clustered = time_query(scratch, CLUSTERED_SQL, 0)
            scratch_mb = round(scratch.stat().st_size / 1e6, 1)
            export["sha256"], clustered["sha256"] = rows_hash(store, JUDGMENTS_SQL), rows_hash(scratch, CLUSTERED_SQL)
        if (export["rows"], export["sha256"]) != (clustered["rows"], clustered["sha256"]):
            raise SystemExit(f"x{scale}: the clustered copy does not read the export's rows "
                             f"({export['rows']:,} vs {clustered['rows']:,} rows, or other values)")
        results[scale] = {"export": export, "clustered": clustered, "build_s": built_s, "scratch_mb": scratch_mb}
        print(f"x{scale:3} {export['rows']:>10,} rows  export {export['us_per_row']:5.1f} µs/row  "
              f"clustered {clustered['us_per_row']:5.1f} µs/row  (copy built in {built_s} s)", flush=True)
    summary = growth_table({name: [results[s][name]["us_per_row"] for s in args.scales]
                            for name in ("export", "clustered")}, args.scales, "row")
    args.out.write_text(json.dumps({"stores": {s: str(p) for s, p in stores.items()}, "cache_kib": CACHE_KIB,
                                    "build": BUILD, "clustered_sql": CLUSTERED_SQL, "results": results,
                                    "grew_per_row": summary}, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
