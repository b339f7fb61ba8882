"""The batching worker of local transformers models: one thread owns the model, takes queued jobs, and runs
one left-padded `generate` per batch of jobs with identical decoding parameters (see `_hf`).

A vision-language model folder (`_hf_vision.is_vision_model`) is loaded with `AutoProcessor` and
`AutoModelForImageTextToText`; its prompts go through the processor's chat template and the processor turns
a batch's texts and images into the model's inputs (left-padded), for requests with and without images."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import gc
import logging
import queue
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import (
    AutoModelForCausalLM,
    AutoModelForImageTextToText,
    AutoProcessor,
    AutoTokenizer,
    LogitsProcessorList,
    StoppingCriteria,
    StoppingCriteriaList,
)

from dialectbias.errors import ProviderError
from dialectbias.providers._base import ChatResponse
from dialectbias.providers._hf_config import (
    THREAD_RECHECK_S,
    HFModelConfig,
    ThreadChoice,
    busy_cores,
    choose_threads,
)
from dialectbias.providers._hf_constrained import GrammarMask, JsonConstraints
from dialectbias.providers._hf_messages import fallback_prompt
from dialectbias.providers._hf_params import GenParams, batch_seed, finish_text
from dialectbias.providers._hf_vision import decode_image, is_vision_model

log = logging.getLogger("dialectbias.providers._hf")

_DTYPES: dict[str, Any] = {
    "auto": "auto",
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


@dataclass(eq=False)
class _Job:
    #: text models: `{role, content: str}`; vision models: content may be a list of text / `{"type": "image"}`
    messages: list[dict[str, Any]]
    params: GenParams
    schema: dict[str, Any] | None
    #: a ChatResponse, or a PromptLogprobs for a scoring job (`prompt` set)
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    #: batching key: jobs with equal keys share one batched `generate` (constrained jobs batch together)
    key: Any = field(default=None)
    #: the images of the `{"type": "image"}` parts, in order (vision-language models only)
    images: tuple[bytes, ...] = ()
    #: a prompt-scoring job: the text whose token logprobs are wanted (`_hf_logprobs`), no generation
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

        silent._dialectbias_silenced = True  # type: ignore[attr-defined]  # a marker on the function object
        gguf_utils.tqdm = silent


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
        # transformers declares the legacy torch.BoolTensor class; torch.tensor(dtype=bool) is typed Tensor
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]


def raw_prompt(messages: list[dict[str, str]]) -> str:
    """The prompt of `prompt_format: raw`: the messages' contents verbatim, joined by newlines (one message:
    its text exactly), with no role label and no template."""
    return "\n".join(m["content"] for m in messages)


class _Worker:
    """The thread that owns the model and serves the job queue."""

    def __init__(self, config: HFModelConfig) -> None:
        self.config = config
        self.queue: queue.Queue[Any] = queue.Queue()
        self.loaded = threading.Event()
        self.load_error: ProviderError | None = None
        self.load_s: float | None = None
        self.threads: ThreadChoice | None = None
        self._threads_checked = 0.0
        self.model: Any = None
        self.tokenizer: Any = None
        #: the processor of a vision-language model (None for a text model)
        self.processor: Any = None
        self.eos_ids: set[int] = set()
        self.pad_id: int = 0
        self._constraints: JsonConstraints | None = None
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
        vision = gguf_file is None and is_vision_model(path)
        processor = None
        try:
            if vision:
                processor = AutoProcessor.from_pretrained(str(path))
                tokenizer = getattr(processor, "tokenizer", None)
                if tokenizer is None or not hasattr(processor, "image_processor"):
                    raise ValueError(f"AutoProcessor gave {type(processor).__name__}, not a processor with a "
                                     "tokenizer and an image processor (is preprocessor_config.json missing?)")
                tokenizer.padding_side = "left"
                model = AutoModelForImageTextToText.from_pretrained(str(path), dtype=_DTYPES[cfg.dtype])
            else:
                tokenizer = AutoTokenizer.from_pretrained(str(path), **extra)
                model = AutoModelForCausalLM.from_pretrained(str(path), dtype=_DTYPES[cfg.dtype], **extra)
            if cfg.adapter is not None:
                model = self._with_adapter(model, vision)
            # transformers decorates PreTrainedModel.to with @wraps(Module.to): its type keeps the unbound `self`
            model.to(cfg.device)  # type: ignore[arg-type]
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
        self.processor = processor
        self.load_s = time.perf_counter() - started
        log.info("loaded %s%s from %s in %.1f s", cfg.id, " (vision-language)" if vision else "", path, self.load_s)

    def _with_adapter(self, model: Any, vision: bool) -> Any:
        """The base model with the config's peft LoRA adapter (merged into the weights with `adapter_merge`)."""
        cfg = self.config
        if vision:
            raise ProviderError(f"model {cfg.id!r}: `adapter:` is supported on text models only")
        from peft import PeftModel

        try:
            with warnings.catch_warnings():  # peft asks transformers 5 a deprecated question (FutureWarning)
                warnings.simplefilter("ignore", FutureWarning)
                model = PeftModel.from_pretrained(model, str(Path(cfg.adapter or "").expanduser()))
        except Exception as exc:
            raise ProviderError(f"model {cfg.id!r}: cannot load adapter {cfg.adapter} on {cfg.model} (was it "
                                f"trained on this base model?): {type(exc).__name__}: {exc}") from exc
        return model.merge_and_unload() if cfg.adapter_merge else model

    # ---- the loop ------------------------------------------------------------------
    def _run(self) -> None:
        self.threads = choose_threads(self.config.num_threads)
        torch.set_num_threads(self.threads.threads)
        self._threads_checked = time.monotonic()
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
                job.fail(ProviderError(f"model {self.config.id!r} was closed", retryable=True))
                continue
            if self.load_error is not None:
                job.fail(self.load_error)
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
            self._recheck_threads()
            try:
                self._serve_batch(batch)
            except Exception as exc:  # never let the worker die with futures pending
                error = ProviderError(f"model {self.config.id!r}: {type(exc).__name__}: {exc}")
                for waiting in batch:
                    waiting.fail(error)
        self._release()

    def _recheck_threads(self, now: float | None = None) -> None:
        """Between batches, every THREAD_RECHECK_S, follow the free cores when `num_threads` is not set:
        fewer threads when another program starts using the CPU, more when it stops (the choice made at
        load time may have seen a load that was ending, e.g. the install that preceded the quickstart)."""
        now = time.monotonic() if now is None else now
        if self.config.num_threads is not None or now - self._threads_checked < THREAD_RECHECK_S:
            return
        self._threads_checked = now
        choice = choose_threads(busy=busy_cores(samples=2, load_average=False))
        if self.threads is None or choice.threads != self.threads.threads:
            torch.set_num_threads(choice.threads)
            log.info("model %s: now %d torch thread(s) (%s)", self.config.id, choice.threads, choice.reason)
            self.threads = choice

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
        self.processor = None
        self._constraints = None
        gc.collect()

    # ---- prompts -------------------------------------------------------------------
    def _prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        tok = self.tokenizer
        if self.config.prompt_format == "raw":  # a completion: the text verbatim, the tokenizer's own BOS
            return list(tok(raw_prompt(messages), add_special_tokens=True)["input_ids"])
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

    def _vision_prompt(self, messages: list[dict[str, Any]]) -> str:
        """The processor's chat template over multimodal messages (a string content becomes a text part)."""
        parts = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]
                  if isinstance(m["content"], str) else m["content"]} for m in messages]
        if self.config.prompt_format == "raw":
            raise ProviderError(f"model {self.config.id!r}: prompt_format: raw is for text models only")
        template = getattr(self.processor, "chat_template", None) or getattr(self.tokenizer, "chat_template", None)
        if not template:
            raise ProviderError(f"model {self.config.id!r}: the vision-language model's processor has no chat "
                                "template (chat_template.jinja or chat_template in processor_config.json)")
        try:
            return str(self.processor.apply_chat_template(parts, chat_template=template, add_generation_prompt=True,
                                                          tokenize=False))
        except Exception as exc:
            raise ProviderError(
                f"model {self.config.id!r}: chat template failed: {type(exc).__name__}: {exc}") from exc

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
    def _text_inputs(self, batch: list[_Job]) -> tuple[list[_Job], dict[str, Any], list[int]]:
        """Left-padded input ids of a text model's batch; a job whose prompt fails is failed with its error."""
        jobs: list[_Job] = []
        prompts: list[list[int]] = []
        for job in batch:
            try:
                prompts.append(self._prompt_ids(job.messages))
                jobs.append(job)
            except ProviderError as exc:
                job.fail(exc)
        if not jobs:
            return [], {}, []
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):  # left padding
            if ids:
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention[row, width - len(ids) :] = 1
        return jobs, {"input_ids": input_ids, "attention_mask": attention}, [len(p) for p in prompts]

    def _vision_inputs(self, batch: list[_Job]) -> tuple[list[_Job], dict[str, Any], list[int]]:
        """The processor's inputs for a vision-language model's batch (texts and their images, left-padded);
        a job whose prompt or image fails is failed with its error."""
        jobs: list[_Job] = []
        texts: list[str] = []
        images: list[list[Any]] = []
        for job in batch:
            try:
                texts.append(self._vision_prompt(job.messages))
                images.append([decode_image(data, self.config.id) for data in job.images])
                jobs.append(job)
            except ProviderError as exc:
                if len(texts) > len(jobs):
                    texts.pop()
                job.fail(exc)
        if not jobs:
            return [], {}, []
        try:
            inputs = self.processor(text=texts, images=images if any(images) else None, padding=True,
                                    return_tensors="pt")
        except Exception as exc:
            error = ProviderError(f"model {self.config.id!r}: the processor rejected the prompt or its images: "
                                  f"{type(exc).__name__}: {exc}")
            for job in jobs:
                job.fail(error)
            return [], {}, []
        inputs = dict(inputs)
        if "attention_mask" not in inputs:
            inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
        return jobs, inputs, [int(n) for n in inputs["attention_mask"].sum(dim=1).tolist()]

    def _serve_batch(self, batch: list[_Job]) -> None:
        if batch[0].prompt is not None:  # scoring jobs batch among themselves (their own key)
            from dialectbias.providers._hf_logprobs import score_texts

            tokenizer = self.tokenizer if self.processor is None else getattr(self.processor, "tokenizer", None)
            scored = score_texts(self.model, tokenizer, [job.prompt or "" for job in batch], self.config.device)
            for job, result in zip(batch, scored, strict=True):
                job.resolve(result)
            return
        started = time.perf_counter()
        jobs, inputs, tokens_in = (self._vision_inputs if self.processor is not None else self._text_inputs)(batch)
        if not jobs:
            return
        params = dataclasses.replace(jobs[0].params, seed=batch_seed([job.params.seed for job in jobs]))
        constrained = self.config.constrained_decoding == "llguidance"
        schemas = [job.schema if constrained else None for job in jobs]
        try:
            results = self._generate(inputs, params, schemas)
        except ProviderError as exc:
            for job in jobs:
                job.fail(exc)
            return
        except Exception as exc:
            error = ProviderError(f"model {self.config.id!r}: generation failed: {type(exc).__name__}: {exc}")
            for job in jobs:
                job.fail(error)
            return
        latency = time.perf_counter() - started
        for job, n_in, (text, finish, n_out) in zip(jobs, tokens_in, results, strict=True):
            job.resolve(
                ChatResponse(output=text, finish_reason=finish, tokens_in=n_in, tokens_out=n_out, latency_s=latency)
            )

    def _to_device(self, value: Any) -> Any:
        """A tensor on the model's device; floating ones (pixel values) in the model's dtype."""
        if not isinstance(value, torch.Tensor):
            return value
        if value.is_floating_point():
            return value.to(self.config.device, dtype=self.model.dtype)
        return value.to(self.config.device)

    def _generate(self, inputs: dict[str, Any], params: GenParams,
                  schemas: list[dict[str, Any] | None]) -> list[tuple[str, str, int]]:
        """One batched `generate` over left-padded `inputs` (input_ids, attention_mask and, for a
        vision-language model, its image tensors); rows with a schema are masked by llguidance."""
        width = int(inputs["input_ids"].shape[1])
        criteria = StoppingCriteriaList()
        processors = LogitsProcessorList()
        if any(schemas):
            constraints = self._json_constraints()
            processors.append(GrammarMask(constraints, [constraints.matcher(x) if x else None for x in schemas],
                                          width))
        elif params.stop:
            criteria.append(_StopOnStrings(self.tokenizer, params.stop, width))
        if params.seed is not None:
            torch.manual_seed(params.seed)
        with torch.inference_mode():
            out = self.model.generate(
                **{name: self._to_device(value) for name, value in inputs.items()},
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
            finish, text = finish_text(text, params, hit_eos, len(tokens))
            results.append((text, finish, len(tokens) + hit_eos))
        return results

    def _json_constraints(self) -> JsonConstraints:
        if self._constraints is None:
            self._constraints = JsonConstraints(self.config.id, self.model, self.tokenizer, self.eos_ids)
        return self._constraints
