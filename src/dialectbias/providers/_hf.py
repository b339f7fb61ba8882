"""Local Hugging Face transformers models (`provider: hf`), with micro-batching.

One background thread owns the model. `complete()` puts a job on a queue and awaits
a future; the worker takes up to `batch_size` queued plain-text jobs with identical
decoding parameters and runs one left-padded `generate` for all of them, then resolves
the futures on their event loops. JSON-schema jobs run one at a time through a short
manual decoding loop constrained by llguidance (`constrained_decoding: llguidance`),
or as plain generation (`constrained_decoding: none`); the caller validates the output.

Prompt format: the tokenizer's chat template (`add_generation_prompt=True`). A
tokenizer without a chat template gets a plain fallback: one `role: content` line
per message followed by `assistant:` (e.g. `"user: Hi\\nassistant:"`).

Decoding parameters (`config.params` overridden by `request.params`):

- `temperature`: 0 or missing means greedy; > 0 samples (`top_p`, `top_k` when given,
  else the model's generation config).
- `max_tokens` (alias `max_new_tokens`): default 256; `finish_reason` is `length` when hit.
- `seed`: `torch.manual_seed(seed)` before each batch. Sampled outputs then depend on the
  batch composition (which requests were batched together and in which order), so they
  are reproducible only for identical batches; greedy outputs do not depend on it.
- `stop`: a string or list of strings; output is cut at the first occurrence
  (`finish_reason` `stop`). Ignored for constrained JSON decoding.

Other parameters are ignored. `tokens_out` counts generated tokens including a final
end-of-sequence token; `latency_s` is the wall time of the batch the request ran in.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import gc
import json
import logging
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LogitsProcessor,
    LogitsProcessorList,
    StoppingCriteria,
    StoppingCriteriaList,
)

from dialectbias.errors import ProviderError
from dialectbias.providers._base import ChatRequest, ChatResponse, ModelAPI
from dialectbias.providers._hf_config import HFModelConfig, ThreadChoice, choose_threads

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 256
_IMAGE_PART_TYPES = {"image_url", "image", "input_image"}
_TEXT_PART_TYPES = {"text", "input_text"}
_DTYPES: dict[str, Any] = {
    "auto": "auto",
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}
#: JSON compiled compactly (no free whitespace): small models otherwise wander in whitespace
_JSON_OPTIONS: dict[str, Any] = {"whitespace_flexible": False, "lenient": True}


@dataclass(frozen=True)
class GenParams:
    """The decoding parameters that must be identical within one batch."""

    max_new_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()

    @property
    def sample(self) -> bool:
        return self.temperature > 0

    @classmethod
    def from_params(cls, params: dict[str, Any], model_id: str) -> GenParams:
        def bad(key: str, expected: str) -> ProviderError:
            return ProviderError(f"model {model_id!r}: param {key}={params[key]!r} must be {expected}")

        def number(key: str, kind: type, lo: float, hi: float | None) -> Any:
            value = params.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad(key, "a number")
            if kind is int and value != int(value):
                raise bad(key, "an integer")
            if value < lo or (hi is not None and value > hi):
                raise bad(key, f"in [{lo}, {hi if hi is not None else 'inf'}]")
            return kind(value)

        max_tokens = number("max_tokens", int, 1, None)
        if max_tokens is None:
            max_tokens = number("max_new_tokens", int, 1, None)
        stop = params.get("stop")
        if stop is None:
            stops: tuple[str, ...] = ()
        elif isinstance(stop, str):
            stops = (stop,) if stop else ()
        elif isinstance(stop, list | tuple) and all(isinstance(s, str) for s in stop):
            stops = tuple(s for s in stop if s)
        else:
            raise bad("stop", "a string or a list of strings")
        return cls(
            max_new_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            temperature=number("temperature", float, 0, None) or 0.0,
            top_p=number("top_p", float, 0, 1),
            top_k=number("top_k", int, 0, None),
            seed=number("seed", int, -(2**63), 2**64 - 1),
            stop=stops,
        )


@dataclass(eq=False)
class _Job:
    messages: list[dict[str, str]]
    params: GenParams
    schema: dict[str, Any] | None
    future: asyncio.Future[ChatResponse]
    loop: asyncio.AbstractEventLoop
    #: batching key: jobs with equal keys share one batched `generate` (constrained jobs batch together)
    key: Any = field(default=None)

    def resolve(self, result: ChatResponse | None = None, error: BaseException | None = None) -> None:
        def _set() -> None:
            if self.future.done():  # cancelled by the caller
                return
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(result)

        with contextlib.suppress(RuntimeError):  # event loop already closed
            self.loop.call_soon_threadsafe(_set)


_STOP = object()


def silence_third_party_progress() -> None:
    """Turn off the progress bars transformers and huggingface_hub print while loading a model: the run's
    own progress view is the one to watch (a GGUF file's tqdm bar printed ~14 lines into a log).

    The GGUF conversion calls `tqdm` directly (not transformers' switchable bar), so its module's `tqdm`
    is replaced by a disabled one. Warnings and errors still reach the logs.
    """
    transformers.utils.logging.disable_progress_bar()
    with contextlib.suppress(ImportError, AttributeError):
        import huggingface_hub.utils

        huggingface_hub.utils.disable_progress_bars()
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # pragma: no cover - older or newer transformers without GGUF loading
        return
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None and not getattr(bar, "_dialectbias_silenced", False):
        def silent(*args: Any, **kwargs: Any) -> Any:
            return bar(*args, **{**kwargs, "disable": True})

        silent._dialectbias_silenced = True  # type: ignore[attr-defined]
        gguf_utils.tqdm = silent


def text_messages(messages: list[dict[str, Any]], model_id: str) -> list[dict[str, str]]:
    """Flatten OpenAI-style messages to `{"role", "content": str}`; reject images."""
    out: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise ProviderError(f"model {model_id!r}: message {i} has no role")
        content = message.get("content")
        if content is None:
            text = ""
        elif isinstance(content, str):
            text = content
        elif isinstance(content, list):
            texts = []
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in _TEXT_PART_TYPES:
                    texts.append(str(part.get("text", "")))
                elif kind in _IMAGE_PART_TYPES:
                    raise ProviderError(
                        f"model {model_id!r} is text-only: message {i} contains an image part"
                    )
                else:
                    raise ProviderError(f"model {model_id!r}: message {i} has an unsupported part {kind!r}")
            text = "\n".join(texts)
        else:
            raise ProviderError(
                f"model {model_id!r}: message {i} content must be a string or a list of parts"
            )
        out.append({"role": str(message["role"]), "content": text})
    return out


def fallback_prompt(messages: list[dict[str, str]]) -> str:
    """The prompt for tokenizers without a chat template: `role: content` lines + `assistant:`."""
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"


class _StopOnStrings(StoppingCriteria):
    """Stop each sequence once its generated text contains one of `stops`."""

    def __init__(self, tokenizer: Any, stops: tuple[str, ...], prompt_len: int) -> None:
        self.tokenizer = tokenizer
        self.stops = stops
        self.prompt_len = prompt_len
        # a stop string spans at most a few more tokens than it has characters
        self.window = max(len(s) for s in stops) + 8

    def __call__(
        self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any
    ) -> torch.BoolTensor:
        start = max(self.prompt_len, input_ids.shape[1] - self.window)
        tails = self.tokenizer.batch_decode(input_ids[:, start:], skip_special_tokens=True)
        done = [any(s in tail for s in self.stops) for tail in tails]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]


class _GrammarMask(LogitsProcessor):
    """Per-row llguidance matchers inside a batched `generate`: each step feeds a row's last token to
    its matcher and masks the tokens its schema forbids; a finished row may only emit EOS."""

    def __init__(self, worker: _Worker, matchers: list[Any], prompt_width: int) -> None:
        import llguidance.torch as llt

        self.worker, self.matchers, self.width = worker, matchers, prompt_width
        self.fill = llt.fill_next_token_bitmask
        self.bitmask = llt.allocate_token_bitmask(len(matchers), worker._lltokenizer.vocab_size)
        self.eos = worker._lltokenizer.eos_token

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        started = input_ids.shape[1] > self.width
        for row, matcher in enumerate(self.matchers):
            if matcher is None:
                continue
            if started and not matcher.is_stopped() and not matcher.is_error():
                matcher.consume_token(int(input_ids[row, -1]))
            if matcher.is_stopped() or matcher.is_error():
                scores[row].fill_(float("-inf"))
                scores[row, self.eos] = 0.0
            else:
                self.fill(matcher, self.bitmask, row)
                self.worker._mask(scores[row], self.bitmask[row])
        return scores


class _Worker:
    """The thread that owns the model and serves the job queue."""

    def __init__(self, config: HFModelConfig) -> None:
        self.config = config
        self.queue: queue.Queue[Any] = queue.Queue()
        self.loaded = threading.Event()
        self.load_error: ProviderError | None = None
        self.load_s: float | None = None
        self.threads: ThreadChoice | None = None
        self.model: Any = None
        self.tokenizer: Any = None
        self.eos_ids: set[int] = set()
        self.pad_id: int = 0
        self._lltokenizer: Any = None
        self._grammars: dict[str, str] = {}
        self._shifts = torch.arange(32, dtype=torch.int32)
        self.thread = threading.Thread(target=self._run, name=f"hf-{config.id}", daemon=True)
        self.thread.start()

    # ---- loading -------------------------------------------------------------------
    def _load(self) -> None:
        cfg = self.config
        path = Path(cfg.model).expanduser()
        gguf_file = cfg.gguf_file
        if gguf_file is None and path.is_file() and path.suffix == ".gguf":
            path, gguf_file = path.parent, path.name
        if not path.exists():
            raise ProviderError(f"model {cfg.id!r}: local model path {path} does not exist")
        if gguf_file is not None and not (path / gguf_file).is_file():
            raise ProviderError(f"model {cfg.id!r}: GGUF file {path / gguf_file} does not exist")
        extra: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
        started = time.perf_counter()
        silence_third_party_progress()
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path), **extra)
            model = AutoModelForCausalLM.from_pretrained(str(path), dtype=_DTYPES[cfg.dtype], **extra)
            model.to(cfg.device)
            model.eval()
        except Exception as exc:
            where = f"{path}" + (f" (gguf_file={gguf_file})" if gguf_file else "")
            raise ProviderError(
                f"model {cfg.id!r}: cannot load {where}: {type(exc).__name__}: {exc}"
            ) from exc
        eos: set[int] = set()
        for source in (model.generation_config.eos_token_id, tokenizer.eos_token_id):
            if isinstance(source, int):
                eos.add(source)
            elif isinstance(source, list | tuple):
                eos.update(int(t) for t in source)
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = model.generation_config.pad_token_id
        if pad is None:
            pad = min(eos) if eos else 0
        self.model, self.tokenizer, self.eos_ids, self.pad_id = model, tokenizer, eos, int(pad)
        self.load_s = time.perf_counter() - started
        log.info("loaded %s from %s in %.1f s", cfg.id, path, self.load_s)

    # ---- the loop ------------------------------------------------------------------
    def _run(self) -> None:
        self.threads = choose_threads(self.config.num_threads)
        torch.set_num_threads(self.threads.threads)
        log.info("model %s: %d torch thread(s) (%s)", self.config.id, self.threads.threads, self.threads.reason)
        try:
            self._load()
        except ProviderError as exc:
            self.load_error = exc
        except BaseException as exc:  # pragma: no cover - defensive
            self.load_error = ProviderError(f"model {self.config.id!r}: cannot load: {exc!r}")
        finally:
            self.loaded.set()

        pending: deque[_Job] = deque()
        stopping = False
        while True:
            idle = not pending
            if idle:
                if stopping:
                    break
                item = self.queue.get()
                if item is _STOP:
                    break
                pending.append(item)
            stopping = self._drain(pending, wait=idle and not stopping) or stopping
            job = pending.popleft()
            if job.future.done():
                continue
            if stopping:
                job.resolve(error=ProviderError(f"model {self.config.id!r} was closed", retryable=True))
                continue
            if self.load_error is not None:
                job.resolve(error=self.load_error)
                continue
            batch = [job]
            if job.key is not None:
                for other in list(pending):
                    if len(batch) >= self.config.batch_size:
                        break
                    if other.key == job.key:
                        pending.remove(other)
                        if not other.future.done():
                            batch.append(other)
            try:
                self._serve_batch(batch)
            except Exception as exc:  # never let the worker die with futures pending
                error = ProviderError(f"model {self.config.id!r}: {type(exc).__name__}: {exc}")
                for waiting in batch:
                    waiting.resolve(error=error)
        self._release()

    def _drain(self, pending: deque[_Job], wait: bool) -> bool:
        """Move queued jobs to `pending`; an idle worker waits briefly to fill a batch."""
        stop = False
        with contextlib.suppress(queue.Empty):
            while True:
                item = self.queue.get_nowait()
                if item is _STOP:
                    stop = True
                else:
                    pending.append(item)
        head = pending[0] if pending else None
        if stop or not wait or head is None or self.config.batch_wait_s <= 0:
            return stop
        deadline = time.monotonic() + self.config.batch_wait_s
        while sum(1 for j in pending if j.key == head.key) < self.config.batch_size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                item = self.queue.get(timeout=remaining)
            except queue.Empty:
                break
            if item is _STOP:
                return True
            pending.append(item)
        return stop

    def _release(self) -> None:
        self.model = None
        self.tokenizer = None
        self._lltokenizer = None
        gc.collect()

    # ---- prompts -------------------------------------------------------------------
    def _prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            try:
                text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            except Exception as exc:
                raise ProviderError(
                    f"model {self.config.id!r}: chat template failed: {type(exc).__name__}: {exc}"
                ) from exc
            return list(tok(text, add_special_tokens=False)["input_ids"])
        # no chat template: a plain transcript, with the tokenizer's own BOS handling
        return list(tok(fallback_prompt(messages), add_special_tokens=True)["input_ids"])

    def _generation_config(self, params: GenParams) -> Any:
        gc_ = copy.deepcopy(self.model.generation_config)
        gc_.max_new_tokens = params.max_new_tokens
        gc_.max_length = None
        gc_.pad_token_id = self.pad_id
        gc_.eos_token_id = sorted(self.eos_ids) or None
        gc_.do_sample = params.sample
        gc_.num_beams = 1
        if params.sample:
            gc_.temperature = params.temperature
            if params.top_p is not None:
                gc_.top_p = params.top_p
            if params.top_k is not None:
                gc_.top_k = params.top_k
        else:
            gc_.temperature = None
            gc_.top_p = None
            gc_.top_k = None
        return gc_

    # ---- plain batched generation --------------------------------------------------
    def _serve_batch(self, batch: list[_Job]) -> None:
        started = time.perf_counter()
        jobs: list[_Job] = []
        prompts: list[list[int]] = []
        for job in batch:
            try:
                prompts.append(self._prompt_ids(job.messages))
                jobs.append(job)
            except ProviderError as exc:
                job.resolve(error=exc)
        if not jobs:
            return
        params = jobs[0].params
        constrained = self.config.constrained_decoding == "llguidance"
        schemas = [job.schema if constrained else None for job in jobs]
        try:
            results = self._generate(prompts, params, schemas)
        except ProviderError as exc:
            for job in jobs:
                job.resolve(error=exc)
            return
        except Exception as exc:
            error = ProviderError(f"model {self.config.id!r}: generation failed: {type(exc).__name__}: {exc}")
            for job in jobs:
                job.resolve(error=error)
            return
        latency = time.perf_counter() - started
        for job, ids, (text, finish, n_out) in zip(jobs, prompts, results, strict=True):
            job.resolve(
                ChatResponse(
                    output=text, finish_reason=finish, tokens_in=len(ids), tokens_out=n_out, latency_s=latency
                )
            )

    def _generate(self, prompts: list[list[int]], params: GenParams,
                  schemas: list[dict[str, Any] | None]) -> list[tuple[str, str, int]]:
        """One batched, left-padded `generate`; rows with a schema are masked by llguidance."""
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):  # left padding
            if ids:
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention[row, width - len(ids) :] = 1
        device = self.config.device
        criteria = StoppingCriteriaList()
        processors = LogitsProcessorList()
        if any(schemas):
            processors.append(_GrammarMask(self, [self._matcher(x) if x else None for x in schemas], width))
        elif params.stop:
            criteria.append(_StopOnStrings(self.tokenizer, params.stop, width))
        if params.seed is not None:
            torch.manual_seed(params.seed)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=input_ids.to(device),
                attention_mask=attention.to(device),
                generation_config=self._generation_config(params),
                stopping_criteria=criteria,
                logits_processor=processors,
            )
        results = []
        for row in out[:, width:].tolist():
            tokens: list[int] = []
            hit_eos = False
            for t in row:
                if t in self.eos_ids:
                    hit_eos = True
                    break
                tokens.append(t)
            if not hit_eos and params.stop:  # rows stopped by a stop string are padded after it
                while tokens and tokens[-1] == self.pad_id:
                    tokens.pop()
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
            finish, text = _finish(text, params, hit_eos, len(tokens))
            results.append((text, finish, len(tokens) + hit_eos))
        return results

    # ---- constrained JSON ----------------------------------------------------------
    def _matcher(self, schema: dict[str, Any]) -> Any:
        import llguidance
        import llguidance.hf

        if self._lltokenizer is None:
            vocab = self.model.get_output_embeddings().weight.shape[0]
            n_vocab = vocab if vocab >= len(self.tokenizer) else None
            eos = self.tokenizer.eos_token_id
            if eos is None and self.eos_ids:
                eos = min(self.eos_ids)
            self._lltokenizer = llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=n_vocab, eos_token=eos)
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            try:
                grammar = llguidance.LLMatcher.grammar_from_json_schema(schema, defaults=_JSON_OPTIONS)
            except ValueError as exc:
                raise ProviderError(f"model {self.config.id!r}: invalid JSON schema: {exc}") from exc
            self._grammars[key] = grammar
        matcher = llguidance.LLMatcher(self._lltokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ProviderError(f"model {self.config.id!r}: JSON schema not supported: {matcher.get_error()}")
        for warning in matcher.get_grammar_warnings():
            log.warning("model %s: JSON schema: %s", self.config.id, warning)
        return matcher

    def _mask(self, logits: torch.Tensor, mask: torch.Tensor) -> None:
        """Set logits of tokens whose bit is 0 in the llguidance bitmask to -inf (in place)."""
        allowed = ((mask.unsqueeze(1) >> self._shifts) & 1).reshape(-1).bool()
        vocab = logits.shape[0]
        if allowed.numel() < vocab:
            allowed = torch.cat([allowed, torch.zeros(vocab - allowed.numel(), dtype=torch.bool)])
        logits.masked_fill_(~allowed[:vocab], float("-inf"))


def _finish(text: str, params: GenParams, hit_eos: bool, n_tokens: int) -> tuple[str, str]:
    """Cut `text` at the first stop string; return (finish_reason, text)."""
    cuts = [i for i in (text.find(s) for s in params.stop) if i >= 0]
    if cuts:
        return "stop", text[: min(cuts)]
    if not hit_eos and n_tokens >= params.max_new_tokens:
        return "length", text
    return "stop", text


class HFModel(ModelAPI):
    """A local transformers causal LM served by one micro-batching worker thread."""

    name = "hf"

    def __init__(self, config: HFModelConfig) -> None:
        super().__init__(config)
        self.config: HFModelConfig = config
        self._worker: _Worker | None = None
        self._lock = threading.Lock()

    def _ensure_worker(self) -> _Worker:
        with self._lock:
            if self._worker is None:
                self._worker = _Worker(self.config)
            return self._worker

    async def load(self) -> None:
        """Load the model now (otherwise the first `complete` does); raise ProviderError on failure."""
        worker = self._ensure_worker()
        if not worker.loaded.is_set():
            await asyncio.to_thread(worker.loaded.wait)
        if worker.load_error is not None:
            raise worker.load_error

    @property
    def model(self) -> Any:
        """The loaded transformers model (None before loading)."""
        return self._worker.model if self._worker else None

    @property
    def tokenizer(self) -> Any:
        return self._worker.tokenizer if self._worker else None

    @property
    def threads(self) -> ThreadChoice | None:
        """The torch thread count the worker chose (None before it started)."""
        return self._worker.threads if self._worker else None

    @property
    def load_seconds(self) -> float | None:
        return self._worker.load_s if self._worker else None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        messages = text_messages(request.messages, self.config.id)
        params = GenParams.from_params({**self.config.params, **request.params}, self.config.id)
        constrained = request.json_schema is not None and self.config.constrained_decoding == "llguidance"
        loop = asyncio.get_running_loop()
        job = _Job(
            messages=messages,
            params=params,
            schema=request.json_schema,
            future=loop.create_future(),
            loop=loop,
            key=("json", params) if constrained else params,
        )
        self._ensure_worker().queue.put(job)
        return await job.future

    async def aclose(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is None:
            return
        worker.queue.put(_STOP)
        await asyncio.to_thread(worker.thread.join)
