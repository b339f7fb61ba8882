"""`executor: ray` for OpenAI-compatible endpoints (clusters that already serve models): Ray actors around
the package's own client (`providers/_openai.py`), `replicas` per model. Each actor sends the requests of
a batch (`ray.batch_size` per Ray call) concurrently, at most `max_concurrency` at once, with the client's
retries and backoff, and returns answers and errors as plain dicts; the driver turns them into `Call`s for
`PostCall`. Requests reach the server from the actors' nodes, not from the driver."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

from dialectbias.errors import ProviderError
from dialectbias.providers import ChatRequest, ChatResponse, ModelConfig
from dialectbias.run._limits import backoff_delay
from dialectbias.run._postcall import Call
from dialectbias.run._ray import Pass, import_ray
from dialectbias.run._summary import StageStats

#: a server refusing connections before any answer: this many attempts, then the request fails (the
#: driver's PostCall then stops the model, as on executor: local)
PROBE_ATTEMPTS = 2
#: Ray calls in flight per actor: one being answered while the next one waits
IN_FLIGHT_PER_ACTOR = 2


class ClientWorker:
    """The body of one Ray actor: a model client and a semaphore of `max_concurrency`. The client lives as
    long as the actor (the whole run): a `vllm` client's engine starts once and takes the re-asks and every
    later stage of its model (`_ray_vllm_actor.py`)."""

    def __init__(self, config: ModelConfig, seed: int) -> None:
        from dialectbias.providers import create_model

        self.config = config
        self.client = create_model(config)
        self.semaphore: asyncio.Semaphore | None = None
        self.rng = random.Random(seed)
        self.successes = 0
        self.answered = 0

    async def run(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.semaphore is None:  # made on the actor's event loop
            self.semaphore = asyncio.Semaphore(self.config.max_concurrency)
        return list(await asyncio.gather(*(self._one(p) for p in batch)))

    async def _one(self, payload: dict[str, Any]) -> dict[str, Any]:
        assert self.semaphore is not None
        async with self.semaphore:
            attempt = 0
            while True:
                try:
                    response = await self.client.send(payload["request"])
                    if not response.output.strip():
                        raise ProviderError(f"model {self.config.id!r}: empty output", retryable=True)
                    self.successes += 1
                    self.answered += 1
                    return {"db_id": payload["db_id"], "response": response.model_dump(), "retries": attempt}
                except ProviderError as exc:
                    probing = exc.unreachable and self.successes == 0
                    limit = min(self.config.max_retries, PROBE_ATTEMPTS - 1) if probing else self.config.max_retries
                    if not exc.retryable or attempt >= limit:
                        return {"db_id": payload["db_id"], "retries": attempt, "error": {
                            "message": str(exc), "retryable": exc.retryable, "status": exc.status,
                            "unreachable": exc.unreachable, "fatal": exc.fatal, "context": exc.context}}
                    await asyncio.sleep(0.2 if probing else backoff_delay(attempt + 1, exc.retry_after, self.rng))
                    attempt += 1

    async def counts(self) -> dict[str, int]:
        """Requests answered by this actor, and engines started in its process (`provider: vllm`)."""
        import sys

        vllm_module = sys.modules.get("dialectbias.providers._vllm")
        return {"answered": self.answered, "engine_starts": getattr(vllm_module, "ENGINE_STARTS", 0)}

    async def close(self) -> None:
        await self.client.aclose()


def to_call(result: dict[str, Any]) -> Call:
    """The driver's `Call` from an actor's answer dict."""
    if "error" in result:
        e = result["error"]
        error = ProviderError(e["message"], retryable=e["retryable"], status=e["status"],
                              unreachable=e["unreachable"], fatal=e["fatal"], context=e.get("context", False))
        error.attempts = result["retries"]  # type: ignore[attr-defined]
        return Call.failed(error)
    return Call(ChatResponse.model_validate(result["response"]), retries=result["retries"])


class HTTPPass(Pass):
    """`replicas` client actors for one model, kept for the whole run (across stages). An HTTP client
    reserves no CPU (`actor_options`); subclasses that hold an engine reserve its resources."""

    def __init__(self, config: ModelConfig, batch_size: int) -> None:
        super().__init__(config)
        self.batch_size = batch_size
        self.actors: list[Any] = []

    def request_payload(self, db_id: str, request: ChatRequest) -> dict[str, Any]:
        return {"db_id": db_id, "request": request}

    def _actors(self) -> list[Any]:
        if not self.actors:
            ray = import_ray()
            actor = ray.remote(max_concurrency=1000, **self.actor_options())(ClientWorker)
            self.actors = [actor.remote(self.config, i) for i in range(self.config.replicas)]
        return self.actors

    def actor_options(self) -> dict[str, Any]:
        """Resources of one actor (`ray.remote` options)."""
        return {"num_cpus": 0}

    async def results(self, payloads: list[dict[str, Any]], stats: StageStats) -> AsyncIterator[tuple[str, Call]]:
        actors = self._actors()
        batches = [payloads[i:i + self.batch_size] for i in range(0, len(payloads), self.batch_size)]
        running: dict[asyncio.Future[Any], int] = {}
        load = [0] * len(actors)

        def submit() -> None:
            while batches and not stats.stopped:
                actor = min(range(len(actors)), key=load.__getitem__)
                if load[actor] >= IN_FLIGHT_PER_ACTOR:
                    return
                ref = actors[actor].run.remote(batches.pop(0))
                running[asyncio.wrap_future(ref.future())] = actor
                load[actor] += 1

        submit()
        while running:
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                load[running.pop(future)] -= 1
                try:
                    answers = future.result()
                except Exception as exc:  # the actor died (its node was lost …): the batch comes back failed
                    raise ProviderError(f"model {self.config.id!r}: a Ray worker failed: "
                                        f"{type(exc).__name__}: {exc}", fatal=True) from None
                for answer in answers:
                    yield answer["db_id"], to_call(answer)
            submit()

    def close(self) -> None:
        if not self.actors:
            return
        ray = import_ray()
        if ray.is_initialized():
            for actor in self.actors:
                with contextlib.suppress(Exception):
                    ray.get(actor.close.remote(), timeout=10)
                ray.kill(actor)
        self.actors = []
