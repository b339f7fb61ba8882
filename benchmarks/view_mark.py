"""The explorer's per-page check "did the store change?", before and after `StoreWatch` (issue 23 item 4).

`dialectbias view` keeps each experiment's report tables and rebuilds them when the store changed. Up to
stop 35 it decided that from a mark counted from rows (`max(rowid)` and `count(*)` of results, judgments and
current requests), read on every page load: `count(*)` walks a whole index, so the check grew with the store,
and it missed in-place updates (re-scoring). `StoreWatch` keeps a read-only connection open and reads
`PRAGMA data_version`. This times both side by side on the stores `tenx.py --keep DIR` kept, warm (best of
--rounds) and, as root, cold (the page cache emptied first), and then one whole page (`GET /exp/KEY`, tables
already built) through the app with each check. Writes benchmarks/results/view_mark.json.

Usage:
  nice python benchmarks/tenx.py --scales 1 10 --keep /tmp/tenx
  nice python benchmarks/view_mark.py --keep /tmp/tenx --rounds 3
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from export_joins import kept_stores, probe_args  # noqa: E402
from tenx import drop_page_cache  # noqa: E402

from dialectbias.store import StoreWatch, open_read_only  # noqa: E402
from dialectbias.view import create_app, load_experiment_read_only  # noqa: E402
from dialectbias.view._experiments import LoadedExperiment  # noqa: E402
from dialectbias.view._tables import ExperimentTables, TableCache, build_tables  # noqa: E402

#: the mark up to stop 35 (`store_mark`, store/_evidence_reads.py), verbatim
MARK_BEFORE = ("SELECT (SELECT coalesce(max(rowid), 0) FROM results), (SELECT count(*) FROM results), "
               "(SELECT coalesce(max(rowid), 0) FROM judgments), (SELECT count(*) FROM judgments), "
               "(SELECT coalesce(max(annotation_id), 0) FROM annotations), (SELECT count(*) FROM current_requests), "
               "(SELECT coalesce(max(compiled_at), 0) FROM current_stages)")


class CountedCache(TableCache):
    """`TableCache.get` up to stop 35: the mark counted from rows on a new connection for every page."""

    def get(self, loaded: LoadedExperiment) -> ExperimentTables:
        with loaded.open() as store:
            mark = tuple(int(v) for v in store.query(MARK_BEFORE)[0])
        with self._build_lock:
            cached = self._built.get(loaded.key)
            if cached is None or cached.mark != mark:
                cached = self._built[loaded.key] = build_tables(loaded, mark)
            return cached


def timed(fn: Callable[[], Any], empty: bool) -> float | None:
    """Seconds of wall time of `fn()`; with `empty`, from an emptied page cache (None without root)."""
    if empty and not drop_page_cache():
        return None
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def best(fn: Callable[[], Any], rounds: int, empty: bool) -> float | None:
    runs = [timed(fn, empty) for _ in range(rounds)]
    return None if None in runs else round(min(r for r in runs if r is not None), 4)


def marks(path: Path, rounds: int) -> dict[str, Any]:
    """The two checks alone, warm and cold."""
    store = open_read_only(path)
    watch = StoreWatch(path)
    watch.mark()  # the connection it keeps is opened once, when the explorer first shows the experiment
    try:
        before, now = partial(store.query, MARK_BEFORE), watch.mark
        out = {"rows": dict(zip(("results", "judgments", "current_requests"), store.query(
            "SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM judgments), "
            "(SELECT count(*) FROM current_requests)")[0], strict=True))}
        for name, fn in (("before", before), ("now", now)):
            out[name] = {"warm_s": best(fn, rounds, False), "cold_s": best(fn, 1, True)}
        return out
    finally:
        watch.close()
        store.close()


def page(yaml: Path, rounds: int) -> dict[str, Any]:
    """One page of the explorer, its tables built, with each check (TestClient: in process, no socket)."""
    from fastapi.testclient import TestClient

    loaded = load_experiment_read_only(yaml)
    out: dict[str, Any] = {}
    for name, cache in (("before", CountedCache()), ("now", TableCache())):
        app = create_app([loaded])
        app.state.view.tables = cache
        client = TestClient(app, base_url="http://localhost")
        started = time.perf_counter()
        first = client.get(f"/exp/{loaded.key}")
        assert first.status_code == 200, first.text[:300]
        built = time.perf_counter() - started

        def get(client: Any = client) -> None:
            assert client.get(f"/exp/{loaded.key}").status_code == 200

        out[name] = {"first_s": round(built, 2), "warm_s": best(get, rounds, False), "cold_s": best(get, 1, True)}
        cache.close()
    return out


def main() -> None:
    args = probe_args(__doc__, "view_mark.json")
    stores = kept_stores(args.keep, args.scales)
    results: dict[str, Any] = {}
    for scale, path in stores.items():
        results[scale] = marks(path, args.rounds)
        yaml = next(path.parent.glob("*.yaml"), None)
        if yaml is not None:
            results[scale]["page"] = page(yaml, args.rounds)

    def ms(v: float | None) -> str:
        return "  n/a" if v is None else f"{v * 1000:9.1f}"

    print("\nms; before = counted mark (up to stop 35), now = StoreWatch")
    print(f"{'scale':<6}{'what':<14}{'before warm':>12}{'now warm':>10}{'before cold':>12}{'now cold':>10}")
    for scale, r in results.items():
        for what, block in (("mark", r), ("page", r.get("page"))):
            if block:
                b, n = block["before"], block["now"]
                print(f"{'x' + scale:<6}{what:<14}{ms(b['warm_s']):>12}{ms(n['warm_s']):>10}{ms(b['cold_s']):>12}"
                      f"{ms(n['cold_s']):>10}")
    args.out.write_text(json.dumps({"rounds": args.rounds, "results": results}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
