"""Named reads of items, requests and results for tasks, reports and the runner (beyond `Store`'s own
methods), each a question a caller asks, so none of them writes SQL of its own."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dialectbias.store._records import CallTotals, ItemFacets, StageRequest
from dialectbias.store._schema import RESULT_STATUS_INDEX
from dialectbias.store._store import Store, is_current


def has_items(store: Store) -> bool:
    """True when the store holds items (a run or an import stored the experiment's)."""
    return bool(store.query("SELECT 1 FROM items LIMIT 1"))


def item_facets(store: Store) -> list[ItemFacets]:
    """Every stored item's question type and domain (in storage order)."""
    return [ItemFacets(*r) for r in store.query("SELECT item_id, question_type, domain FROM items")]


def result_output(store: Store, request_id: str) -> str | None:
    """The stored output of a request (None: no result yet, or the call failed without one)."""
    rows = store.query("SELECT output FROM results WHERE rid = (SELECT rid FROM requests WHERE request_id = ?)",
                       (request_id,))
    return rows[0][0] if rows else None


def ok_request_ids(store: Store, stage: str, model_id: str) -> set[str]:
    """Ids of the stage's requests for the model with a successful result, current or superseded."""
    rows = store.query(f"SELECT r.request_id FROM requests r JOIN results s INDEXED BY {RESULT_STATUS_INDEX} "
                       "ON s.rid = r.rid WHERE r.stage = ? AND r.model_id = ? AND s.status = 'ok'", (stage, model_id))
    return {r[0] for r in rows}


def stage_requests(store: Store, stage: str, model_id: str) -> Iterator[StageRequest]:
    """Every current request of the stage for the model, with its prompt and result (if any), in (item,
    variant, request id) order. Streamed."""
    rows = store.iter_query(
        "SELECT r.request_id, r.item_id, r.variant, r.template, r.meta, r.messages, s.status, s.output, s.error "
        "FROM current_requests cr JOIN requests r ON r.rid = cr.rid "
        "LEFT JOIN results s ON s.rid = r.rid "
        "WHERE cr.stage = ? AND cr.model_id = ? ORDER BY r.item_id, r.variant, r.request_id", (stage, model_id))
    for row in rows:
        yield StageRequest(*row)


def ok_results_mark(store: Store, stages: Sequence[str]) -> tuple[int, int]:
    """(how many there are, a count that grows with every one written) of the successful results of these stages'
    requests: it changes whenever one is added, replaced or removed, so a later stage built from them knows to
    rebuild. The writes are counted per stage by trigger, from the stage's latest result rowid when the store
    was migrated (schema v15: a replaced result keeps its rowid, its request's key)."""
    marks = ",".join("?" * len(stages))
    row = store.query(f"SELECT count(*) FROM results s INDEXED BY {RESULT_STATUS_INDEX} "
                       "JOIN requests r ON r.rid = s.rid "
                       f"WHERE s.status='ok' AND r.stage IN ({marks})", tuple(stages))[0]
    written = store.query(f"SELECT coalesce(sum(CAST(value AS INTEGER)), 0) FROM meta WHERE key IN ({marks})",
                          tuple(f"ok_results_written:{s}" for s in stages))[0]
    return row[0], written[0]


def measured_means(store: Store, stage: str, model_id: str) -> tuple[float | None, float | None]:
    """(mean output tokens, mean latency in seconds) of the model's answers in the stage that were actually
    called (cache entries with a latency); (None, None) when there is none."""
    row = store.query(
        "SELECT avg(c.tokens_out), avg(c.latency_s), count(*) FROM requests r JOIN cache c USING (cache_key) "
        "WHERE r.stage = ? AND r.model_id = ? AND c.latency_s > 0", (stage, model_id))[0]
    return (row[0], row[1]) if row[2] else (None, None)


def measured_parallelism(store: Store, stage: str, model_id: str) -> float | None:
    """How many of the model's calls in the stage were in flight at once, on average while any was: the sum
    of the calls' latencies over the length of the union of their intervals. A call's interval is
    [answered - latency_s, answered] from its cache row (`created_at` is written as the answer arrives, the
    latency is the last attempt's wall time), so this is measured, not configured: a server with fewer slots
    than `max_concurrency` queues the calls and shows as longer latencies at the same parallelism. Each cached
    answer counts once (requests sharing one answer were one call). None without a measured call."""
    rows = store.query(
        "SELECT created_at - latency_s, created_at FROM cache WHERE latency_s > 0 AND cache_key IN "
        "(SELECT cache_key FROM requests WHERE stage = ? AND model_id = ?) ORDER BY 1", (stage, model_id))
    if not rows:
        return None
    busy = total = 0.0
    start, end = rows[0]
    for begin, finish in rows:
        total += finish - begin
        if begin > end:
            busy += end - start
            start, end = begin, finish
        else:
            end = max(end, finish)
    busy += end - start
    return max(1.0, total / busy) if busy > 0 else 1.0


def call_totals(store: Store) -> CallTotals:
    """The results of current requests: how many, how many failed, tokens in and out."""
    row = store.query("SELECT count(*), sum(status='failed'), sum(tokens_in), sum(tokens_out) FROM results "
                       f"WHERE {is_current('results')}")[0]
    return CallTotals(row[0], row[1] or 0, row[2] or 0, row[3] or 0)
