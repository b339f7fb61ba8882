"""OpenAI-compatible chat completions over HTTP (vLLM, Ollama, llama.cpp, SGLang, TGI, OpenAI, Gemini…)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from dialectbias.data import image_info, is_url, message_text
from dialectbias.data._media import LRU, scale_image
from dialectbias.errors import ConfigError, ProviderError
from dialectbias.providers._base import (
    ChatRequest,
    ChatResponse,
    ModelAPI,
    estimate_tokens,
)
from dialectbias.providers._config import ModelConfig, ProviderCapabilities
from dialectbias.providers._fit import refuses_context, server_too_long
from dialectbias.providers._logprobs import PromptLogprobs
from dialectbias.providers._server import (
    ServerKind,
    ServerProfile,
    TokenizeRoute,
    context_window,
    detect_kind,
    hint_advice,
    props_context,
    props_slots,
    refusal_advice,
    refuses_response_format,
    schema_limits,
    schema_needs_hint,
    sent_schema,
)

if TYPE_CHECKING:  # aiohttp is imported when the first request is sent: a cached run needs none
    import aiohttp

_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
#: images whose longer side exceeds this are scaled down before sending, unless `max_image_side` says
#: otherwise: OpenAI fits every image into 2048 × 2048 on its side anyway, so this changes no answer there
#: and keeps a 12-megapixel photo from being sent as a 5 MB data URL with every request
DEFAULT_MAX_IMAGE_SIDE = 2048
_ENCODED_CACHE = 64
#: seconds before a server that could not be reached is asked for its profile again
_PROFILE_RETRY_S = 10.0
#: seconds a server has to answer `GET /models`, `GET /props` or its tokenize route
_PROFILE_TIMEOUT_S = 10.0


class OpenAIModelConfig(ModelConfig):
    """`base_url` ends in /v1 (or the server's equivalent); the key is read from `api_key_env`."""

    #: `api_key_env` names a secret; `base_url` says where the model is served, not which model it is (a
    #: local server moved to another port, or a proxy in front of the same API, keeps its cached outputs),
    #: and a URL may carry credentials (user:password@host, ?key=…), which must never reach the store.
    #: To keep two deployments of one model name apart, serve them under different model names.
    #: `per_request_seed` only says whether a draw's seed goes into `params`, which are in the key themselves.
    #: `server` is replaced by what it changes in the request (`schema_limits`, see `identity`). `tokenizer`
    #: only counts tokens before sending (the context-fit check), and `context_window` is what it checks against:
    #: neither changes an answer.
    NOT_IN_IDENTITY: ClassVar[frozenset[str]] = ModelConfig.NOT_IN_IDENTITY | {
        "base_url", "api_key_env", "per_request_seed", "server", "tokenizer", "context_window"}

    #: prompt logprobs through `/v1/completions` with `echo` (a server that has it: vLLM's; see `prompt_logprobs`)
    CAPABILITIES: ClassVar[ProviderCapabilities] = ProviderCapabilities(prompt_logprobs=True)

    provider: Literal["openai"] = "openai"
    base_url: str = Field(pattern=r"^https?://")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    max_image_side: int | None = Field(
        default=None, ge=32, description=f"images whose longer side exceeds this many pixels are scaled down "
        f"(aspect ratio kept) before sending; default {DEFAULT_MAX_IMAGE_SIDE}")
    per_request_seed: bool = Field(
        default=True, description="false for a server that cannot take a `seed` per request (a vLLM server on "
        "the CPU dies of one): a task that samples then sends none, and the server's own seed draws its samples")

    server: ServerKind = Field(
        default="other", description="the server behind base_url: vllm, llamacpp, ollama, openai or other "
        "(nothing assumed). llamacpp: the JSON schema is sent grammar-safe (string lengths capped at 1000, "
        "numeric ranges left to our validation), since llama.cpp builds a grammar from it; see "
        "docs/configuration.md, Servers")

    tokenizer: str | None = Field(
        default=None, description="the served model's tokenizer, a local Hugging Face folder or a .gguf file: "
        "a request's input tokens are counted with it (chat template included) for the check that the prompt "
        "plus max_tokens fits the server's context, instead of the per-script estimate")

    context_window: int | None = Field(
        default=None, gt=0, description="the served context in tokens, for a server that does not report it "
        "(Ollama's num_ctx, OpenAI, llama-cpp-python's --n_ctx); wins over what the server reports. Each request's "
        "input tokens plus max_tokens are checked against it before sending")

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer_exists(cls, value: str | None) -> str | None:
        from dialectbias.providers._tokenizer import tokenizer_problem

        if value is not None and (problem := tokenizer_problem(value)) is not None:
            raise ValueError(f"tokenizer {value}: {problem} (a Hugging Face folder or a .gguf file)")
        return value

    def identity(self) -> dict[str, Any]:
        """The base identity plus, where the server hint changes the schema sent (`server: llamacpp`), what it
        gives up (`schema_limits`): a cached answer follows the schema that was sent. Other hints send the
        same request and keep the same identity."""
        out = super().identity()
        if (limits := schema_limits(self.server)) is not None and self.structured_output != "none":
            out["schema_limits"] = limits
        return out

    def takes_seed(self) -> bool:
        return self.per_request_seed

    def client(self) -> ModelAPI:
        return OpenAIModel(self)

    def engine_seed_text(self) -> str:
        return "the server's own seed"


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") or headers.get("retry-after-ms")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds / 1000 if "retry-after-ms" in headers and "Retry-After" not in headers else seconds


class OpenAIModel(ModelAPI):
    """Async client with one connection pool per model; never logs or stores the API key."""

    name = "openai"
    config: OpenAIModelConfig

    def __init__(self, config: OpenAIModelConfig) -> None:
        super().__init__(config)
        self._api_key: str | None = None
        if config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise ConfigError(f"model {config.id!r}: environment variable {config.api_key_env} "
                                  "(named by api_key_env) is not set")
            self._api_key = key
        self._url = config.base_url.rstrip("/") + "/chat/completions"
        self._session: aiohttp.ClientSession | None = None
        self._max_side = config.max_image_side or DEFAULT_MAX_IMAGE_SIDE
        self._encoded = LRU(_ENCODED_CACHE)  # sha256 -> data URL (after resizing)
        self._profile: tuple[ServerProfile | None] | None = None  # (profile,) once the server answered
        self._profile_failed_at = -_PROFILE_RETRY_S  # when the server last could not be reached
        self._profile_lock: asyncio.Lock | None = None
        self._tokenizer: Any = None  # the config's `tokenizer`, loaded at the first context-fit check
        self._no_tokenize = False  # the server answered 404 on its tokenize route (`server_tokens`)

    def _client(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None or self._session.closed:
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            connector = aiohttp.TCPConnector(limit=self.config.max_concurrency, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector, headers=headers, json_serialize=_dumps,
                timeout=aiohttp.ClientTimeout(total=self.config.timeout_s))
        return self._session

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for a request (structured output per the model's `structured_output`)."""
        messages = [self._wire_message(m) for m in request.messages]
        body: dict[str, Any] = {"model": self.config.model, "messages": messages, **request.params}
        schema, mode = request.json_schema, self.config.structured_output
        if schema is not None:
            schema = sent_schema(schema, self.config.server)
        if schema is not None and mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "schema": schema, "strict": True}}
        elif schema is not None and mode == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def _wire_message(self, message: Any) -> Any:
        """Image parts as OpenAI `image_url` parts: base64 data URLs (an http(s) URL is passed as is)."""
        content = message["content"]
        if isinstance(content, str) or not any(p["type"] == "image" for p in content):
            return message
        parts = [{"type": "image_url", "image_url": {"url": self.data_url(p["image"])}}
                 if p["type"] == "image" else p for p in content]
        return {**message, "content": parts}

    def data_url(self, image: bytes | str) -> str:
        """The image as a data URL, scaled down to `max_image_side` when larger (kept for the next request)."""
        if isinstance(image, str):
            if is_url(image) or image.startswith("data:"):
                return image
            raise ProviderError(f"model {self.config.id!r}: an image part holds a path ({image[:80]!r}), not "
                                "its bytes; build requests with RequestSpec, which loads it")
        info = image_info(image)
        url = self._encoded.get_or(info.sha256)
        if url is None:
            data, mime = image, info.mime
            if max(info.width, info.height) > self._max_side:
                data, mime = scale_image(image, self.sent_size(info.width, info.height))
            url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            self._encoded.put(info.sha256, url)
        return url

    def sent_size(self, width: int, height: int) -> tuple[int, int]:
        scale = min(1.0, self._max_side / max(width, height, 1))
        return max(1, round(width * scale)), max(1, round(height * scale))

    async def _post(self, url: str, body: dict[str, Any]) -> str:
        """POST `body` to `url`; the response text, or a ProviderError (retryable as the status says)."""
        import aiohttp

        where = f"model {self.config.id!r} at {self.config.base_url}"
        try:
            async with self._client().post(url, json=body) as resp:
                text = await resp.text()
                if resp.status != 200 and refuses_context(resp.status, text):  # no retry makes it fit
                    raise server_too_long(self.config.id, resp.status,
                                          self._redact(_error_detail(text, resp.status)))
                if resp.status != 200 and "response_format" in body and refuses_response_format(
                        resp.status, text):
                    raise ProviderError(  # a configuration error: no retry, the model stops at once
                        f"{refusal_advice(self.config.id, self.config.structured_output, self.config.server, text)} "
                        f"(HTTP {resp.status}{self._redact(_error_detail(text, resp.status))})",
                        retryable=False, status=resp.status, fatal=True)
                if resp.status != 200:
                    raise ProviderError(
                        f"{where}: HTTP {resp.status}{self._redact(_error_detail(text, resp.status))}",
                        retryable=resp.status in _RETRYABLE_STATUS, status=resp.status,
                        retry_after=_retry_after(resp.headers))
        except TimeoutError:
            raise ProviderError(f"{where}: no answer within {self.config.timeout_s:g} s",
                                retryable=True) from None
        except aiohttp.ClientConnectorError as exc:
            raise ProviderError(f"{where}: cannot connect ({exc.os_error or exc})", retryable=True,
                                unreachable=True) from None
        except aiohttp.ClientError as exc:
            raise ProviderError(f"{where}: connection error ({type(exc).__name__}: {exc})",
                                retryable=True) from None
        return text

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if (request.json_schema is not None and self.config.structured_output != "none"
                and self.config.server == "other"):
            profile = await self.server_profile()
            if profile is not None and profile.detected is not None and schema_needs_hint(
                    request.json_schema, self.config.server, profile):
                raise ProviderError(hint_advice(self.config.id, self.config.base_url, profile.detected,
                                                self.config.structured_output),
                                    retryable=False, fatal=True)
        started = time.perf_counter()
        where = f"model {self.config.id!r} at {self.config.base_url}"
        text = await self._post(self._url, self.body(request))
        try:
            data = json.loads(text)
            choice = data["choices"][0]
            content = choice["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ProviderError(f"{where}: response is not a chat completion: {text[:200]!r}",
                                retryable=True) from None
        if content is None:
            content = ""
        usage = data.get("usage") or {}
        return ChatResponse(output=content, finish_reason=choice.get("finish_reason"),
                            tokens_in=int(usage.get("prompt_tokens") or 0),
                            tokens_out=int(usage.get("completion_tokens") or 0),
                            latency_s=time.perf_counter() - started)

    async def prompt_logprobs(self, text: str) -> PromptLogprobs:
        """`POST {base_url}/completions` with `echo: true, logprobs: 0, max_tokens: 0`: the prompt echoed with
        each token's logprob (`choices[0].logprobs.token_logprobs`, the first null), as vLLM's server answers
        (with `max_tokens: 0` it generates nothing). The raw text is sent: no chat template. A server that
        answers without prompt logprobs (OpenAI's own API no longer echoes them) is a non-retryable error
        naming the model."""
        where = f"model {self.config.id!r} at {self.config.base_url}"
        body = {"model": self.config.model, "prompt": text, "echo": True, "logprobs": 0, "max_tokens": 0,
                "temperature": 0}
        raw = await self._post(self._completions_url, body)
        return completion_prompt_logprobs(raw, where)

    async def input_tokens(self, request: ChatRequest) -> tuple[int, str]:
        """With a `tokenizer:` in the config, the request's tokens counted with it (chat template included; images
        at their tile estimate); else the per-script estimate (`ModelAPI.input_tokens`)."""
        if self.config.tokenizer is None:
            return await super().input_tokens(request)
        from dialectbias.providers._tokenizer import chat_tokens, load_tokenizer

        if self._tokenizer is None:
            try:
                self._tokenizer = await asyncio.to_thread(load_tokenizer, self.config.tokenizer)
            except ConfigError as exc:
                raise ProviderError(f"model {self.config.id!r}: {exc}", fatal=True) from None
        images = estimate_tokens(request.model_copy(update={"messages": [
            {**m, "content": [p for p in m["content"] if p["type"] == "image"]} for m in request.messages
            if not isinstance(m["content"], str)]}), self.sent_size)
        text = chat_tokens(self._tokenizer, request)
        return text + images, f"counted with {self.config.tokenizer}"

    def counts_exactly(self) -> bool:
        return self.config.tokenizer is not None

    async def context_window(self) -> int | None:
        """The config's `context_window` when set, else what the server reports (`ModelAPI.context_window`)."""
        return self.config.context_window or await super().context_window()

    async def server_tokens(self, request: ChatRequest) -> tuple[int, str] | None:
        """The server's count of the request's input tokens on its tokenize route (`ServerProfile.tokenize`):
        vLLM's `POST /tokenize` with the messages and the generation prompt (exact, chat template included),
        llama.cpp's `POST /tokenize` or llama-cpp-python's `POST /extras/tokenize/count` with the text of the
        messages (without the chat template: a lower bound). None when the server has no such route or it
        fails (a 404 is remembered: not asked again)."""
        profile = await self.server_profile()
        route = None if profile is None or self._no_tokenize else profile.tokenize
        if route is None:
            return None
        root = self.config.base_url.rstrip("/").removesuffix("/v1")
        text = "\n".join(message_text(m["content"]) for m in request.messages)
        body: dict[str, Any]
        if route == "vllm":
            url, body = root + "/tokenize", {"model": self.config.model, "add_generation_prompt": True,
                                             "messages": [self._wire_message(m) for m in request.messages]}
        elif route == "llamacpp":
            url, body = root + "/tokenize", {"content": text}
        else:
            url, body = root + "/extras/tokenize/count", {"input": text}
        answer = await self._post_json(url, body)
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        count = answer.get("count", len(tokens) if isinstance(tokens, list) else None) \
            if isinstance(answer, dict) else None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            return None
        return count, ("counted by the server" if route == "vllm"
                       else "counted by the server, without its chat template")

    async def _post_json(self, url: str, body: dict[str, Any]) -> Any:
        """POST to a server's metadata route within `_PROFILE_TIMEOUT_S`; its JSON answer, or None when it fails
        (a 404, 405 or 501: the route does not exist, remembered in `_no_tokenize`)."""
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=min(self.config.timeout_s, _PROFILE_TIMEOUT_S))
        try:
            async with self._client().post(url, json=body, timeout=timeout) as resp:
                if resp.status in (404, 405, 501):
                    self._no_tokenize = True
                if resp.status != 200:
                    return None
                return json.loads(await resp.text())
        except (aiohttp.ClientError, TimeoutError, ValueError):
            return None

    async def server_profile(self) -> ServerProfile | None:
        """What the server says of itself, asked once per client (once per model per run): its kind from
        `GET {base_url}/models` (`detect_kind`; the config's `server:` hint wins), its context window (vLLM's
        `max_model_len`; llama.cpp's per-slot `n_ctx` from `GET /props`) and its parallel slots (llama.cpp's
        `/props` `total_slots`). None while the server cannot be reached (asked again after
        `_PROFILE_RETRY_S`) or when it has no `/models`."""
        if self._profile is not None:
            return self._profile[0]
        if self._profile_lock is None:
            self._profile_lock = asyncio.Lock()
        async with self._profile_lock:
            if self._profile is None and time.monotonic() - self._profile_failed_at >= _PROFILE_RETRY_S:
                try:
                    self._profile = (await self._ask_profile(),)
                except (OSError, TimeoutError, ValueError, ProviderError):
                    self._profile_failed_at = time.monotonic()
        return None if self._profile is None else self._profile[0]

    async def _ask_profile(self) -> ServerProfile | None:
        import aiohttp

        base = self.config.base_url.rstrip("/")
        try:
            models = await self._get_json(base + "/models")
            if models is None:
                return None
            detected = detect_kind(models, self.config.model)
            kind: ServerKind = self.config.server if self.config.server != "other" else (detected or "other")
            window, slots = context_window(models, self.config.model), None
            tokenize: TokenizeRoute | None = "vllm" if kind == "vllm" else None
            if kind == "llamacpp" or detected == "llamacpp":  # the served context and slots are on /props
                props = await self._get_json(base.removesuffix("/v1") + "/props")
                window, slots = props_context(props) or window, props_slots(props)
                if kind == "llamacpp":  # llama-cpp-python has no /props
                    tokenize = "llamacpp" if props is not None else "llama-cpp-python"
            return ServerProfile(kind=kind, detected=detected, context_window=window, slots=slots,
                                 tokenize=tokenize)
        except aiohttp.ClientError as exc:
            raise OSError(str(exc)) from None

    async def _get_json(self, url: str) -> Any:
        """GET a metadata route within `_PROFILE_TIMEOUT_S` (a silent host delays the first request by that
        much at most, not by the model's `timeout_s`); None unless it answers 200 with JSON."""
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=min(self.config.timeout_s, _PROFILE_TIMEOUT_S))
        async with self._client().get(url, timeout=timeout) as resp:
            if resp.status != 200:
                return None
            try:
                return json.loads(await resp.text())
            except ValueError:  # not JSON (a proxy's HTML page): the server says nothing
                return None

    @property
    def _completions_url(self) -> str:
        return self.config.base_url.rstrip("/") + "/completions"

    def _redact(self, text: str) -> str:
        """Servers sometimes echo the key (or part of it) in errors: never pass it on."""
        key = self._api_key
        if not key:
            return text
        for size in range(len(key), 5, -1):  # the key and any fragment of 6+ characters
            for start in range(0, len(key) - size + 1):
                if key[start:start + size] in text:
                    text = text.replace(key[start:start + size], "***")
        return text

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def completion_prompt_logprobs(raw: str, where: str) -> PromptLogprobs:
    """The prompt's tokens and logprobs from a `/v1/completions` answer to an echo request: the first
    `usage.prompt_tokens` entries of `choices[0].logprobs` (all of them when usage is missing; a server that
    generated tokens after the echo adds theirs after the prompt's)."""
    try:
        data = json.loads(raw)
        logprobs = data["choices"][0].get("logprobs")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ProviderError(f"{where}: response is not a completion: {raw[:200]!r}", retryable=True) from None
    if not isinstance(logprobs, dict) or not logprobs.get("token_logprobs"):
        raise ProviderError(f"{where}: the server returned no prompt logprobs for an `echo: true, logprobs: 0` "
                            "completion; prompt logprobs need a server that echoes them (e.g. vLLM's "
                            "/v1/completions)", retryable=False)
    tokens, values = list(logprobs.get("tokens") or []), list(logprobs["token_logprobs"])
    n = int((data.get("usage") or {}).get("prompt_tokens") or len(values))
    if len(tokens) != len(values) or n > len(values):
        raise ProviderError(f"{where}: malformed prompt logprobs ({len(tokens)} tokens, {len(values)} logprobs, "
                            f"{n} prompt tokens)", retryable=False)
    try:
        return PromptLogprobs(tokens=[str(t) for t in tokens[:n]],
                              logprobs=[None if v is None else float(v) for v in values[:n]])
    except (TypeError, ValueError):
        raise ProviderError(f"{where}: malformed prompt logprobs: {values[:5]!r}", retryable=False) from None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _error_detail(text: str, status: int) -> str:
    hint = {401: " (check the API key named by api_key_env)", 403: " (the key lacks access to this model)",
            404: " (check base_url and the model name)"}.get(status, "")
    try:
        message = json.loads(text)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = text.strip()[:200]
    return f"{hint}: {message}" if message else hint
