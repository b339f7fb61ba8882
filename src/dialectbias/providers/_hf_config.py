"""Settings for the local Hugging Face transformers provider (`provider: hf`)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from dialectbias.errors import ConfigError
from dialectbias.providers._base import ModelAPI
from dialectbias.providers._config import ModelConfig


class HFModelConfig(ModelConfig):
    """`model` is a local directory (or a directory holding `gguf_file`)."""

    #: Execution settings, not the model: batching, threads and device change only floating-point
    #: round-off (and the cache freezes one such sample anyway), so retuning them keeps cached outputs.
    #: `gguf_file`, `dtype` (the weights actually used) and `constrained_decoding` are in the identity.
    NOT_IN_IDENTITY: ClassVar[frozenset[str]] = ModelConfig.NOT_IN_IDENTITY | {
        "batch_size", "batch_wait_s", "num_threads", "device"}

    provider: Literal["hf"] = "hf"
    gguf_file: str | None = Field(default=None, description="GGUF file name inside `model`")
    batch_size: int = Field(default=8, ge=1, le=512)
    device: str = "cpu"
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "float32"
    constrained_decoding: Literal["llguidance", "none"] = "llguidance"
    num_threads: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="torch intra-op threads for the worker (None: torch default); 1 is much faster "
        "when other processes compete for the CPU",
    )
    batch_wait_s: float = Field(
        default=0.01, ge=0, le=5, description="how long an idle worker waits to fill a batch"
    )
    max_concurrency: int = Field(default=64, ge=1, le=4096)


def create(config: HFModelConfig, **kwargs: Any) -> ModelAPI:
    """Import the torch-based client only when an `hf` model is used."""
    try:
        from dialectbias.providers._hf import HFModel
    except ImportError as exc:
        raise ConfigError(
            f"model {config.id!r} uses provider 'hf', which needs the optional extra: "
            f"pip install 'torch==2.13.0' 'dialectbias[hf]' ({exc})"
        ) from exc
    return HFModel(config, **kwargs)
