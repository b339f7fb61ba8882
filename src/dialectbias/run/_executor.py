"""The local executor: asyncio over provider clients, with cache, retries, limits and atomic writes."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from dialectbias.errors import ProviderError
from dialectbias.judges._structured import StructuredParse, parse_structured, reask_messages
from dialectbias.providers import ChatRequest, ChatResponse, ModelAPI, ModelConfig
from dialectbias.run._limits import RateLimiter, backoff_delay
from dialectbias.run._specs import RequestSpec
from dialectbias.run._stage import Outcome, Stage, Write
from dialectbias.run._summary import StageStats
from dialectbias.store import Store

FLUSH_ROWS = 256
#: a model that fails this many requests in a row before any success is stopped (server down, wrong URL)
STOP_AFTER_CONSECUTIVE = 8
#: HTTP statuses that no retry or later request can fix: wrong key, no access, wrong URL or model
FATAL_STATUS = {401, 403, 404}
#: a model whose server cannot be reached (connection refused, unknown host) before any success is probed
#: this many times per request, PROBE_PAUSE_S apart, then stopped as down: no long backoff against nothing
PROBE_ATTEMPTS = 2
PROBE_PAUSE_S = 0.2
FLUSH_SECONDS = 0.2
PAGE = 2000

ProgressHook = Callable[[str, int, int], None]  # (model_id, advance, errors)


class _Writer:
    """Buffers rows and commits them in small transactions; each request's rows stay together."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.buffer: list[Write] = []
        self.last = time.monotonic()

    def add(self, rows: list[Write]) -> None:
        self.buffer.extend(rows)
        if len(self.buffer) >= FLUSH_ROWS or time.monotonic() - self.last > FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.buffer:  # request rows first: a re-ask's result refers to its request row
            self.store.write(sorted(self.buffer, key=lambda write: write[0] != "requests"))
            self.buffer = []
        self.last = time.monotonic()


class _ModelRunner:
    """Sends one model's pending requests of one stage."""

    def __init__(self, stage: Stage, config: ModelConfig, client: ModelAPI, store: Store, writer: _Writer,
                 stats: StageStats, progress: ProgressHook, seed: int) -> None:
        self.stage, self.config, self.client = stage, config, client
        self.store, self.writer, self.stats, self.progress = store, writer, stats, progress
        self.limiter = RateLimiter(config.rpm, config.tpm)
        self.rng = random.Random(seed)
        self.after = ""
        self.queue: list[sqlite3.Row] = []
        self.successes = 0
        self.consecutive_failures = 0

    def _next(self) -> sqlite3.Row | None:
        if self.stats.stopped:
            return None
        if not self.queue:
            self.queue = self.store.pending_requests(self.stage.name, self.config.id, after=self.after,
                                                     limit=PAGE)[::-1]
            if self.queue:
                self.after = self.queue[0]["request_id"]
        return self.queue.pop() if self.queue else None

    async def run(self) -> None:
        workers = [asyncio.create_task(self._worker()) for _ in range(self.config.max_concurrency)]
        await asyncio.gather(*workers)

    async def _worker(self) -> None:
        while (row := self._next()) is not None:
            rows = await self._process(row)
            self.writer.add(rows)

    async def _call(self, request: ChatRequest) -> tuple[ChatResponse, int]:
        """Send with bounded retries; returns the response and the number of retries it took."""
        estimate = sum(len(str(m.get("content", ""))) for m in request.messages) // 4
        estimate += int(request.params.get("max_tokens") or 0)
        attempt = 0
        while True:
            await self.limiter.acquire(estimate)
            try:
                response = await self.client.complete(request)
                if not response.output.strip():
                    raise ProviderError(f"model {self.config.id!r}: empty output", retryable=True)
                return response, attempt
            except ProviderError as exc:
                probing = exc.unreachable and self.successes == 0  # down from the start: a short probe only
                limit = min(self.config.max_retries, PROBE_ATTEMPTS - 1) if probing else self.config.max_retries
                exc.attempts = attempt  # type: ignore[attr-defined]
                if not exc.retryable or attempt >= limit or self.stats.stopped:
                    raise
                await asyncio.sleep(PROBE_PAUSE_S if probing else backoff_delay(attempt + 1, exc.retry_after,
                                                                                self.rng))
                if self.stats.stopped:  # another request found the model down meanwhile: do not send again
                    raise
                attempt += 1
                self.stats.retries += 1

    async def _cached_call(self, row_key: str, request: ChatRequest, cached: sqlite3.Row | None
                           ) -> tuple[ChatResponse, bool, int, list[Write]]:
        if cached is not None:
            self.stats.cached += 1
            return (ChatResponse(output=cached["output"], finish_reason=cached["finish_reason"],
                                 tokens_in=cached["tokens_in"], tokens_out=cached["tokens_out"]), True, 0, [])
        response, retries = await self._call(request)
        self.stats.calls += 1
        self.stats.tokens_in += response.tokens_in
        self.stats.tokens_out += response.tokens_out
        cache_row = {"cache_key": row_key, "output": response.output, "finish_reason": response.finish_reason,
                     "tokens_in": response.tokens_in, "tokens_out": response.tokens_out,
                     "latency_s": response.latency_s, "created_at": time.time()}
        return response, False, retries, [("cache", cache_row)]

    async def _process(self, row: sqlite3.Row) -> list[Write]:
        schema = json.loads(row["json_schema"]) if row["json_schema"] else None
        messages = json.loads(row["messages"])
        params = json.loads(row["params"])
        # built from a stored, already validated request row: skip re-validation on the hot path
        request = ChatRequest.model_construct(messages=messages, params=params, json_schema=schema)
        cached = None
        if row["cached_output"] is not None:
            cached = {"output": row["cached_output"], "finish_reason": row["cached_finish"],
                      "tokens_in": row["cached_in"], "tokens_out": row["cached_out"]}
        try:
            response, hit, retries, writes = await self._cached_call(row["cache_key"], request, cached)
            outcome = Outcome(output=response.output, source_request_id=row["request_id"])
            validator = self.stage.validator(self.config.id)
            if validator is not None:
                outcome.parsed = parse_structured(response.output, validator)
                if outcome.parsed.status == "failed":
                    writes += await self._reask(row, request, outcome)
                self.stats.repaired += outcome.parsed.status == "repaired"
                self.stats.parse_failed += outcome.parsed.status == "failed"
        except ProviderError as exc:
            self.stats.failed += 1
            self.stats.note(str(exc))
            self.consecutive_failures += 1
            if self.successes == 0 and exc.unreachable:
                self.stats.stopped = self.stats.stopped or (
                    f"{exc}: the server is down or the URL is wrong (no request got through; remaining requests "
                    "not sent; start it or fix the URL and run again)")
            elif exc.status in FATAL_STATUS or (
                    self.successes == 0 and self.consecutive_failures >= STOP_AFTER_CONSECUTIVE):
                self.stats.stopped = self.stats.stopped or f"{exc} (remaining requests not sent; fix and run again)"
            self.progress(self.config.id, 1, 1)
            return [("results", _result(row["request_id"], "failed", None, error=str(exc),
                                        retries=getattr(exc, "attempts", 0)))]
        self.successes += 1
        self.consecutive_failures = 0
        self.progress(self.config.id, 1, 0)
        writes.append(("results", _result(row["request_id"], "ok", response, cache_hit=hit, retries=retries)))
        if self.stage.finalize is not None:
            writes += self.stage.finalize(self.store, row, outcome)
        return writes

    async def _reask(self, row: sqlite3.Row, request: ChatRequest, outcome: Outcome) -> list[Write]:
        """One re-ask with the parse error, stored as a request of its own: stage "<stage>:reask", refs =
        [the first request], meta = the first's plus `reask_of`, with its own result row. Its rows land in
        the first request's transaction; it is in no compiled request set, so it is never pending, and
        its output is cached, so it is never sent twice. `outcome` then holds the re-ask's answer and id."""
        self.stats.reasked += 1
        first_id, error = row["request_id"], outcome.parsed.error if outcome.parsed else None
        spec = RequestSpec(
            stage=f"{self.stage.name}:reask", model=self.config, item_id=row["item_id"], variant=row["variant"],
            template=row["template"], messages=reask_messages(request.messages, outcome.output, error or "invalid"),
            params=request.params, json_schema=request.json_schema, refs=[first_id],
            meta={**json.loads(row["meta"]), "reask_of": first_id})
        reask = spec.to_row()
        writes: list[Write] = [("requests", reask)]
        try:
            response, hit, retries, more = await self._cached_call(reask["cache_key"], spec.chat_request(),
                                                                   self.store.cached(reask["cache_key"]))
        except ProviderError as exc:
            outcome.parsed = StructuredParse(status="failed", error=f"{error}; re-ask failed: {exc}")
            return [*writes, ("results", _result(reask["request_id"], "failed", None, error=str(exc),
                                                 retries=getattr(exc, "attempts", 0)))]
        parsed = parse_structured(response.output, self.stage.validator(self.config.id))  # type: ignore[arg-type]
        if parsed.status != "failed":
            parsed.status = "reasked"
        else:
            parsed.error = f"{error}; after re-ask: {parsed.error}"
        outcome.output, outcome.parsed, outcome.source_request_id = response.output, parsed, reask["request_id"]
        return [*writes, *more, ("results", _result(reask["request_id"], "ok", response, cache_hit=hit,
                                                    retries=retries))]


def _result(request_id: str, status: str, response: ChatResponse | None, *, cache_hit: bool = False,
            retries: int = 0, error: str | None = None) -> dict[str, Any]:
    return {"request_id": request_id, "status": status,
            "output": response.output if response else None,
            "finish_reason": response.finish_reason if response else None,
            "tokens_in": response.tokens_in if response else 0,
            "tokens_out": response.tokens_out if response else 0,
            "latency_s": response.latency_s if response else 0.0,
            "cache_hit": int(cache_hit), "retries": retries, "error": error, "completed_at": time.time()}


async def execute_stage(stage: Stage, store: Store, clients: dict[str, ModelAPI],
                        stats: dict[str, StageStats], progress: ProgressHook, seed: int = 0) -> None:
    """Send every pending request of the stage, all models concurrently; results are committed as they come."""
    writer = _Writer(store)
    runners = [_ModelRunner(stage, m, clients[m.id], store, writer, stats[m.id], progress, seed)
               for m in stage.models if store.count_pending(stage.name, m.id)]

    async def flush_periodically() -> None:  # a slow model's last result is not left in the buffer
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            writer.flush()

    flusher = asyncio.create_task(flush_periodically())
    try:
        await asyncio.gather(*(r.run() for r in runners))
    finally:
        flusher.cancel()
        writer.flush()

