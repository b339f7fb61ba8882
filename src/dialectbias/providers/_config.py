"""Per-model settings in experiment files; each provider extends `ModelConfig`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.providers._base import StructuredOutput


class ModelConfig(BaseModel):
    """Settings shared by every provider (a model under test or a judge)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    id: str = Field(min_length=1, description="name used in tables and the store")
    provider: str
    model: str = Field(min_length=1, description="model name (HTTP) or path (local)")
    role: Literal["primary", "secondary"] | None = Field(
        default=None, description="judges only: the primary judge's scores are final"
    )
    family: str | None = None
    params_b: float | None = Field(default=None, description="size in billions of parameters")
    params: dict[str, Any] = Field(default_factory=dict, description="decoding overrides")
    structured_output: StructuredOutput = "json_schema"
    max_concurrency: int = Field(default=16, ge=1, le=4096)
    rpm: int | None = Field(default=None, ge=1, description="requests per minute limit")
    tpm: int | None = Field(default=None, ge=1, description="tokens per minute limit")
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=5, ge=0, le=50)
    price_in_per_mtok: float | None = Field(default=None, ge=0, description="price per million input tokens")
    price_out_per_mtok: float | None = Field(default=None, ge=0, description="price per million output tokens")

    def cost(self, tokens_in: int, tokens_out: int) -> float | None:
        """Cost of the tokens at this model's prices; None when no price is set."""
        if self.price_in_per_mtok is None and self.price_out_per_mtok is None:
            return None
        return (tokens_in * (self.price_in_per_mtok or 0) + tokens_out * (self.price_out_per_mtok or 0)) / 1e6
