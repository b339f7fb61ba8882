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


def test_the_total_adds_stages_and_models_sharing_a_server_but_not_measured_ones() -> None:
    from dialectbias.run._plan import PlanRow, total_seconds

    def row(stage: str, model: str, seconds: float, basis: str, server: str) -> PlanRow:
        return PlanRow(stage, model, 1, 0, 1, 1, None, seconds, basis={"seconds": basis}, server=server)

    rows = [row("generate", "a", 10.0, "measured", "s1"), row("generate", "b", 30.0, "measured", "s1"),
            row("judge", "j1", 20.0, "assumed", "s1"), row("judge", "j2", 15.0, "server", "s1"),
            row("judge", "j3", 25.0, "assumed", "s2")]
    # generate: the models ran at once and their latencies hold the contention: the longest, 30
    # judge: j1 and j2 share server s1 (20 + 15), j3 on s2 runs beside them: 35
    assert total_seconds(rows) == pytest.approx(30.0 + 35.0)
    assert total_seconds([]) == 0.0
