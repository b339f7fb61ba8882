"""The one interface every model provider implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

StructuredOutput = Literal["json_schema", "json_object", "none"]


class ChatRequest(BaseModel):
    """Everything needed to make one chat-completion call.

    `messages` are OpenAI-style chat messages (content may be a list of text /
    image_url parts). `json_schema`, when set, asks for output matching it
    (through `response_format` or constrained decoding, per provider).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: list[dict[str, Any]]
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

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections, threads or models."""

    def identity(self) -> dict[str, Any]:
        """What identifies this model's outputs for caching (never secrets): the config's `identity()`,
        the very dict that goes into every request's cache key and request id."""
        identity = getattr(self.config, "identity", None)
        if callable(identity):
            return identity()
        return {"provider": self.name, "model": getattr(self.config, "model", "")}
