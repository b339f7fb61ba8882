"""Local Hugging Face transformers models (`provider: hf`), with micro-batching.

One background thread owns the model. `complete()` puts a job on a queue and awaits
a future; the worker takes up to `batch_size` queued plain-text jobs with identical
decoding parameters and runs one left-padded `generate` for all of them, then resolves
the futures on their event loops. JSON-schema jobs are batched among themselves, each row
of the `generate` masked by llguidance to its schema (`constrained_decoding: llguidance`),
or run as plain generation (`constrained_decoding: none`); the caller validates the output.

Prompt format: the tokenizer's chat template (`add_generation_prompt=True`). A
tokenizer without a chat template gets a plain fallback: one `role: content` line
per message followed by `assistant:` (e.g. `"user: Hi\\nassistant:"`).

Decoding parameters (`config.params` overridden by `request.params`):

- `temperature`: 0 or missing means greedy; > 0 samples (`top_p`, `top_k` when given,
  else the model's generation config).
- `max_tokens` (alias `max_new_tokens`): default 256; `finish_reason` is `length` when hit.
- `seed`: taken per request (`ModelConfig.takes_seed`), yet requests with different
  seeds still share a batch: `torch.manual_seed` before each batch with the requests' seed
  (when they share one) or a hash of the batch's seeds (`batch_seed`), so no two batches of
  draws replay one random stream. Sampled outputs then depend on the batch composition (which
  requests were batched together and in which order), so they are reproducible only for
  identical batches; greedy outputs do not depend on it.
- `stop`: a string or list of strings; output is cut at the first occurrence
  (`finish_reason` `stop`). Ignored for constrained JSON decoding.

Images: a model folder whose config.json has a `vision_config` (LLaVA, Idefics3/SmolVLM, Qwen2-VL,
Gemma 3, …) is loaded as a vision-language model (`AutoProcessor` + `AutoModelForImageTextToText`): image
parts (the store's image bytes, or `image_url` data/http URLs) go through the processor's chat template
and image processor, batched like text (requests with images batch among themselves), with the same
parameters. An image sent to a text-only model is a ProviderError saying so (the model is loaded first to
tell).

Prompt logprobs (`prompt_logprobs`, task `perplexity`): a forward pass over the raw text, no chat template
(`_hf_logprobs`); scoring requests batch among themselves.

Other parameters are ignored. `tokens_out` counts generated tokens including a final
end-of-sequence token; `latency_s` is the wall time of the batch the request ran in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any

from dialectbias.providers._base import ChatRequest, ChatResponse, ModelAPI
from dialectbias.providers._hf_config import HFModelConfig, ThreadChoice
from dialectbias.providers._hf_messages import text_messages
from dialectbias.providers._hf_params import GenParams
from dialectbias.providers._hf_vision import has_images, vision_messages
from dialectbias.providers._hf_worker import _STOP, _Job, _Worker
from dialectbias.providers._logprobs import PromptLogprobs


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

    @property
    def processor(self) -> Any:
        """The processor of a loaded vision-language model (None for a text model or before loading)."""
        return self._worker.processor if self._worker else None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        params = GenParams.from_params({**self.config.params, **request.params}, self.config.id)
        images: list[bytes] = []
        messages: list[dict[str, Any]]
        if has_images(request.messages):
            await self.load()  # whether the model sees images is known once it is loaded
            if self.processor is None:
                text_messages(request.messages, self.config.id)  # raises: the model is text-only
            messages, images = vision_messages(request.messages, self.config.id)
        else:
            messages = list(text_messages(request.messages, self.config.id))
        constrained = request.json_schema is not None and self.config.constrained_decoding == "llguidance"
        batch_key = dataclasses.replace(params, seed=None)  # seeds differ per draw: they do not split batches
        loop = asyncio.get_running_loop()
        job = _Job(
            messages=messages,
            params=params,
            schema=request.json_schema,
            future=loop.create_future(),
            loop=loop,
            key=(("json", batch_key) if constrained else batch_key, bool(images)),
            images=tuple(images),
        )
        self._ensure_worker().queue.put(job)
        return await job.future

    async def prompt_logprobs(self, text: str) -> PromptLogprobs:
        """Each token's logprob given its prefix, by a forward pass in the worker thread (`_hf_logprobs`);
        scoring jobs batch among themselves, up to `batch_size`."""
        loop = asyncio.get_running_loop()
        job = _Job(messages=[], params=GenParams.from_params({}, self.config.id), schema=None,
                   future=loop.create_future(), loop=loop, key=("prompt_logprobs",), prompt=text)
        self._ensure_worker().queue.put(job)
        result: PromptLogprobs = await job.future
        return result

    async def aclose(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is None:
            return
        worker.queue.put(_STOP)
        await asyncio.to_thread(worker.thread.join)

