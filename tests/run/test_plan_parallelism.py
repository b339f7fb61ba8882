"""`measured_parallelism`: how many of a model's calls were in flight at once, from the stored calls' start and
end times (the cache rows' answer time and latency), checked against hand-computed intervals in a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectbias.store import Store, measured_parallelism


def request(n: int, stage: str, model_id: str, cache_key: str) -> dict[str, object]:
    return {"request_id": f"r{n}", "stage": stage, "model_id": model_id, "item_id": f"q{n}", "variant": "standard",
            "template": "t", "prompt_hash": f"h{n}", "messages": "[]", "params": "{}", "cache_key": cache_key,
            "created_at": 0.0}


def cache(key: str, start: float, end: float) -> dict[str, object]:
    return {"cache_key": key, "output": "x", "latency_s": end - start, "created_at": 1000.0 + end}


def test_the_calls_in_flight_are_their_latencies_over_the_busy_time(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.sqlite")
    try:
        assert measured_parallelism(store, "generate", "m") is None  # nothing measured
        # [0, 1] and [0.5, 1.5] overlap, [3, 4] alone, and a gap between: 3 s of calls in 2.5 s busy
        calls = [(0.0, 1.0), (0.5, 1.5), (3.0, 4.0)]
        rows = [("cache", cache(f"k{i}", *c)) for i, c in enumerate(calls)]
        rows += [("requests", request(i, "generate", "m", f"k{i}")) for i in range(3)]
        rows.append(("requests", request(3, "generate", "m", "k0")))  # one answer shared: still one call
        rows += [("cache", cache("other", 0.0, 4.0)), ("requests", request(4, "judge", "m", "other")),
                 ("cache", cache("zero", 0.0, 0.0)), ("requests", request(5, "generate", "m", "zero"))]
        store.write(rows)
        assert measured_parallelism(store, "generate", "m") == pytest.approx(3.0 / 2.5)
        assert measured_parallelism(store, "judge", "m") == pytest.approx(1.0)
        assert measured_parallelism(store, "generate", "other-model") is None
        # four calls of 2 s, all at once (a batch): 4 in flight
        store.write([("cache", cache(f"b{i}", 10.0, 12.0)) for i in range(4)]
                    + [("requests", request(10 + i, "batch", "m", f"b{i}")) for i in range(4)])
        assert measured_parallelism(store, "batch", "m") == pytest.approx(4.0)
    finally:
        store.close()
