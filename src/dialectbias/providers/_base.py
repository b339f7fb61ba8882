"""The one interface every model provider implements."""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.data import ChatMessage, image_info, message_text
from dialectbias.providers._fit import too_long
from dialectbias.providers._logprobs import PromptLogprobs, is_scoring, prompt_text, unsupported
from dialectbias.providers._server import ServerProfile
from dialectbias.providers._tokens import MAX_CHARS_PER_TOKEN, fewest_tokens, text_tokens

StructuredOutput = Literal["json_schema", "json_object", "none"]
#: tokens a chat template adds around each message (role markers) and once per request (the generation prompt,
#: and a default system prompt some templates add: SmolLM2's makes a 1-token message 31 tokens), added to the
#: per-script estimate by the context-fit check
CHAT_TOKENS_PER_MESSAGE = 6
CHAT_TOKENS_PER_REQUEST = 24


class ChatRequest(BaseModel):
    """Everything needed to make one chat-completion call.

    `messages` are chat messages whose content is a string or a list of text and image parts
    (`dialectbias.data.ChatMessage`; images as bytes, each provider encodes them for its API).
    `json_schema`, when set, asks for output matching it (through `response_format` or constrained
    decoding, per provider).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: list[ChatMessage]
    params: dict[str, Any] = Field(default_factory=dict)  # temperature, max_tokens, seed, top_p …
    json_schema: dict[str, Any] | None = None
    schema_name: str = "response"


class ChatResponse(BaseModel):
    """The result of one successful call."""

    model_config = ConfigDict(extra="forbid")

    output: str
    finish_reason: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0


class ModelAPI(ABC):
    """A model client. Adding a provider = one module with one subclass, registered by name.

    Implementations raise `ProviderError` (retryable or not) on failure; retries,
    rate limits, caching and storage are handled by the run machinery, not here.
    """

    #: the provider name used in experiment files
    name: str = ""

    def __init__(self, config: Any) -> None:
        self.config = config

    @abstractmethod
    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Make one call and return its output."""

    async def prompt_logprobs(self, text: str) -> PromptLogprobs:
        """The log-probability of each token of `text` given its prefix (`providers._logprobs`; the first
        token's is None). Providers that can declare `ProviderCapabilities.prompt_logprobs` and override this;
        the default is the one clear error naming the model and the capability."""
        raise unsupported(str(getattr(self.config, "id", "?")), self.name or type(self).__name__)

    async def server_profile(self) -> ServerProfile | None:
        """What the model's server says of itself (kind, context window, parallel slots), asked once per client
        (`openai`: `GET /v1/models`, and llama.cpp's `GET /props`); None for a provider without a server or a
        server that cannot be asked."""
        return None

    async def context_window(self) -> int | None:
        """The model's context window in tokens, as its server or engine reports it (`server_profile`); None
        when unknown. For the check that a prompt plus its `max_tokens` fits."""
        profile = await self.server_profile()
        return None if profile is None else profile.context_window

    async def input_tokens(self, request: ChatRequest) -> tuple[int, str]:
        """The request's input tokens for the context-fit check, and how they were counted: the per-script
        estimate (`estimate_tokens`) plus the chat template's tokens (`CHAT_TOKENS_PER_MESSAGE`,
        `CHAT_TOKENS_PER_REQUEST`). A provider that knows the model's tokenizer counts exactly."""
        overhead = CHAT_TOKENS_PER_REQUEST + CHAT_TOKENS_PER_MESSAGE * len(request.messages)
        return self.estimate_tokens(request) + overhead, "estimated from its characters"

    def counts_exactly(self) -> bool:
        """Whether `input_tokens` counts with the model's tokenizer (then it alone may refuse a request)."""
        return False

    async def server_tokens(self, request: ChatRequest) -> tuple[int, str] | None:
        """The request's input tokens as the model's server counts them, and how (exactly, or its text alone: a
        lower bound); None when the server cannot count them. One call, made only for a request the estimate
        says may not fit."""
        return None

    async def check_fit(self, request: ChatRequest) -> None:
        """Raise `ProviderError(context=True)` (`providers._fit`) when the request's input tokens plus its
        `max_tokens` exceed the model's context window; nothing to check when the window is unknown.

        A request that would fit is never refused: the per-script estimate (`input_tokens` without a tokenizer)
        is an upper bound, so when it says "may not fit" the request is refused only on a count that cannot
        over-count: the model's tokenizer (`counts_exactly`), else the server's own count (`server_tokens`),
        else the lower bound `fewest_tokens` (characters ÷ `MAX_CHARS_PER_TOKEN`). Otherwise it is sent and
        the server decides (its refusal is the same context fault, `_fit.refuses_context`)."""
        window = await self.context_window()
        if window is None:
            return
        max_tokens = int(request.params.get("max_tokens") or 0)
        model = str(getattr(self.config, "id", "?"))
        prompt, counted = await self.input_tokens(request)
        if prompt + max_tokens <= window:
            return
        if self.counts_exactly():
            raise too_long(model, prompt, max_tokens, window, counted)
        served = await self.server_tokens(request)
        if served is not None:
            prompt, counted = served
        else:
            prompt = sum(fewest_tokens(message_text(m["content"])) for m in request.messages)
            counted = f"at least: {MAX_CHARS_PER_TOKEN:g} characters per token at most"
        if prompt + max_tokens > window:
            raise too_long(model, prompt, max_tokens, window, counted)

    async def send(self, request: ChatRequest) -> ChatResponse:
        """What the executors call: `check_fit` (a request that cannot fit the context is not sent), then
        `complete`, or for a prompt-scoring request (`params.prompt_logprobs`) `prompt_logprobs`, its result
        stored as JSON in `output`."""
        await self.check_fit(request)
        if not is_scoring(request.params):
            return await self.complete(request)
        started = time.perf_counter()
        result = await self.prompt_logprobs(prompt_text(request.messages, str(getattr(self.config, "id", "?"))))
        return ChatResponse(output=result.model_dump_json(), finish_reason="prompt_logprobs",
                            tokens_in=len(result.tokens), tokens_out=0, latency_s=time.perf_counter() - started)

    def estimate_tokens(self, request: ChatRequest) -> int:
        """Input tokens of a request, for the rate limiter (before the call; the server's count comes
        after): `estimate_tokens` at the image size this provider sends."""
        return estimate_tokens(request, self.sent_size)

    def sent_size(self, width: int, height: int) -> tuple[int, int]:
        """The size an image of this size is sent at (providers that resize say so)."""
        return width, height

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections, threads or models."""

    def identity(self) -> dict[str, Any]:
        """What identifies this model's outputs for caching (never secrets): the config's `identity()`,
        the very dict that goes into every request's cache key and request id."""
        identity = getattr(self.config, "identity", None)
        if callable(identity):
            return identity()
        return {"provider": self.name, "model": getattr(self.config, "model", "")}


def image_tokens(width: int, height: int) -> int:
    """Tokens of one image under OpenAI's high-detail rule: fit in 2048 × 2048, scale the shortest side
    down to 768, then 170 per 512-px tile plus 85 (a 1024 × 1024 image: 4 tiles, 765 tokens)."""
    scale = min(1.0, 2048 / max(width, height, 1))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / max(min(w, h), 1))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def estimate_tokens(request: ChatRequest, sent_size: Callable[[int, int], tuple[int, int]] = lambda w, h: (w, h)
                    ) -> int:
    """Input tokens of a request without its model's tokenizer: each message's text at the characters per token
    of its scripts (`providers._tokens`, measured by `benchmarks/token_ratios.py`: conservative, e.g. 2 per
    token for Latin, 0.45 for Bengali), plus `image_tokens` per image at the size it is sent (`sent_size`; a
    URL's image counts as the largest)."""
    tokens = 0
    for message in request.messages:
        content = message["content"]
        tokens += text_tokens(message_text(content))
        for part in content if isinstance(content, list) else ():
            if part["type"] == "image" and isinstance(part["image"], bytes):
                info = image_info(part["image"])
                tokens += image_tokens(*sent_size(info.width, info.height))
            elif part["type"] == "image":
                tokens += image_tokens(2048, 2048)  # a URL: its size is unknown here, count the largest
    return tokens
