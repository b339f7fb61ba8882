"""The local executor: asyncio over provider clients, with cache, retries, limits and atomic writes."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time

from dialectbias.config import Experiment
from dialectbias.errors import ProviderError
from dialectbias.providers import ChatRequest, ChatResponse, ModelAPI, ModelConfig, create_model
from dialectbias.run._executors import Executor
from dialectbias.run._limits import RateLimiter, backoff_delay
from dialectbias.run._postcall import Call, NeedsReask, PostCall, ProgressHook, cached_call, chat_request
from dialectbias.run._stage import Stage, Write
from dialectbias.run._summary import StageStats
from dialectbias.store import Store

FLUSH_ROWS = 256
#: a model whose server cannot be reached (connection refused, unknown host) before any success is probed
#: this many times per request, PROBE_PAUSE_S apart, then stopped as down: no long backoff against nothing
PROBE_ATTEMPTS = 2
PROBE_PAUSE_S = 0.2
FLUSH_SECONDS = 0.2
PAGE = 2000


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
    """Sends one model's pending requests of one stage; `PostCall` makes the records."""

    def __init__(self, stage: Stage, config: ModelConfig, client: ModelAPI, store: Store, writer: _Writer,
                 stats: StageStats, progress: ProgressHook, seed: int) -> None:
        self.stage, self.config, self.client = stage, config, client
        self.store, self.writer, self.stats = store, writer, stats
        self.post = PostCall(stage, config, store, stats, progress)
        self.limiter = RateLimiter(config.rpm, config.tpm)
        self.rng = random.Random(seed)
        self.after = 0
        self.queue: list[sqlite3.Row] = []

    def _next(self) -> sqlite3.Row | None:
        if self.stats.stopped:
            return None
        if not self.queue:
            self.queue = self.store.pending_requests(self.stage.name, self.config.id, after=self.after,
                                                     limit=PAGE)[::-1]
            if self.queue:
                self.after = self.queue[0]["rid"]
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
        estimate = self.client.estimate_tokens(request)
        estimate += int(request.params.get("max_tokens") or 0)
        attempt = 0
        while True:
            await self.limiter.acquire(estimate)
            try:
                response = await self.client.send(request)
                if not response.output.strip():
                    raise ProviderError(f"model {self.config.id!r}: empty output", retryable=True)
                return response, attempt
            except ProviderError as exc:
                probing = exc.unreachable and self.post.successes == 0  # down from the start: a short probe
                limit = min(self.config.max_retries, PROBE_ATTEMPTS - 1) if probing else self.config.max_retries
                exc.attempts = attempt  # type: ignore[attr-defined]
                if not exc.retryable or attempt >= limit or self.stats.stopped:
                    raise
                await asyncio.sleep(PROBE_PAUSE_S if probing else backoff_delay(attempt + 1, exc.retry_after,
                                                                                self.rng))
                if self.stats.stopped:  # another request found the model down meanwhile: do not send again
                    raise
                attempt += 1

    async def _send(self, request: ChatRequest) -> Call:
        try:
            response, retries = await self._call(request)
        except ProviderError as exc:
            return Call.failed(exc)
        return Call(response, retries=retries)

    async def _process(self, row: sqlite3.Row) -> list[Write]:
        step = self.post.handle(row, cached_call(row) or await self._send(chat_request(row, self.store)))
        if isinstance(step, NeedsReask):
            step = self.post.handle_reask(step, step.cached or await self._send(step.request))
        return step.writes


async def execute_stage(stage: Stage, store: Store, clients: dict[str, ModelAPI],
                        stats: dict[str, StageStats], progress: ProgressHook, seed: int = 0) -> None:
    """Send every pending request of the stage, all models concurrently; results are committed as they come."""
    writer = _Writer(store)
    pending = store.pending_counts(stage.name)
    runners = [_ModelRunner(stage, m, clients[m.id], store, writer, stats[m.id], progress, seed)
               for m in stage.models if pending.get(m.id)]

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


class LocalExecutor(Executor):
    """`executor: local` (the default): asyncio over HTTP (or an in-process model), all models of a stage
    concurrently, one client per model id kept across stages."""

    name = "local"

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        self.clients: dict[str, ModelAPI] = {}

    async def prepare(self, stage: Stage, store: Store) -> None:
        pending = store.pending_counts(stage.name)
        for m in stage.models:
            if m.id not in self.clients and pending.get(m.id):
                self.clients[m.id] = create_model(m)

    async def run_stage(self, stage: Stage, store: Store, stats: dict[str, StageStats],
                        progress: ProgressHook) -> None:
        await execute_stage(stage, store, self.clients, stats, progress, seed=self.exp.seed)

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.aclose()
