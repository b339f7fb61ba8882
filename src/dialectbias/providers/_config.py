"""Per-model settings in experiment files; each provider extends `ModelConfig`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.errors import ConfigError
from dialectbias.providers._base import ModelAPI, StructuredOutput


@dataclass(frozen=True)
class ProviderCapabilities:
    """What the runner and the planner need to know of a provider, declared on its config class
    (`ModelConfig.CAPABILITIES`): they read these, never the provider's name. The defaults describe a model
    served over the network (an HTTP API)."""

    #: The model runs in this process from a local Hugging Face model folder (`model`, with its `gguf_file`
    #: where the provider has one): the planner counts a request's input tokens with that folder's tokenizer,
    #: and the association report's token-length parity table adds a row for it. False: a served model,
    #: whose tokens the planner estimates from characters.
    local: bool = False
    #: The config's `batch_size` is how many requests the model answers at once (an in-process engine that
    #: batches): the planner's concurrent slots. False: `max_concurrency` requests in flight are the slots.
    batched: bool = False
    #: How `executor: ray` runs the model: "client" (Ray actors, each holding this provider's client, sending
    #: `ray.batch_size` requests per call) or "vllm_engine" (Ray Data LLM's vLLM engine processors: the config
    #: must be a `VLLMModelConfig`).
    ray_pass: Literal["client", "vllm_engine"] = "client"
    #: The seed policy. True: the provider takes a `seed` per request, so each draw of a task that samples (the
    #: probes' repeated samples) is sent with its own seed (`run.draw_seed`). False (vllm, where a per-request
    #: seed kills the CPU engine): the run sends no seed of its own and the draws come from the engine's seed
    #: (`ModelConfig.seeded_by`), which the run says once.
    per_request_seed: bool = True
    #: The client returns the log-probability of each prompt token given its prefix (`ModelAPI.prompt_logprobs`;
    #: task `perplexity`): hf (a forward pass), vllm (`prompt_logprobs`), openai (a server that echoes prompt
    #: logprobs on `/v1/completions`, e.g. vLLM's). False: the task refuses the model before any call.
    prompt_logprobs: bool = False


class ModelConfig(BaseModel):
    """Settings shared by every provider (a model under test or a judge)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    #: Fields left out of `identity()`: names and report metadata (id, role, family, params_b), pacing and
    #: transport (concurrency, rate limits, timeout, retries) and prices. None of them changes what the
    #: model answers. Providers add their own (e.g. `base_url`, `api_key_env`). Everything else is in the
    #: identity, so a field a provider adds later (a revision, an adapter …) changes the cache key by default.
    NOT_IN_IDENTITY: ClassVar[frozenset[str]] = frozenset({
        "id", "role", "family", "params_b", "max_concurrency", "rpm", "tpm", "timeout_s", "max_retries",
        "price_in_per_mtok", "price_out_per_mtok", "rubric", "template", "replicas"})
    #: keys only a judge entry takes (under `judges:`); what they change is in the requests themselves
    JUDGE_ONLY: ClassVar[tuple[str, ...]] = ("rubric", "template")
    #: what the runner and the planner need to know of this provider (each provider's config class sets its own)
    CAPABILITIES: ClassVar[ProviderCapabilities] = ProviderCapabilities()

    id: str = Field(min_length=1, description="name used in tables and the store")
    provider: str
    model: str = Field(min_length=1, description="model name (HTTP) or path (local)")
    role: Literal["primary", "secondary"] | None = Field(
        default=None, description="judges only: the primary judge's scores are final"
    )
    rubric: str | None = Field(
        default=None, description="judges only: a packaged rubric's name (rlaif, caption, translation_fidelity) "
        "or a rubric YAML file relative to the experiment; default: the task's (qa_bias: rlaif)")
    template: str | None = Field(
        default=None, description="judges only: a Jinja2 file (relative to the experiment) rendering the "
        "judge's user prompt; default: the task's template for the rubric")
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
    replicas: int = Field(default=1, ge=1, le=4096, description="executor: ray: this model's replica group size "
                          "(vLLM engines, or client actors for an HTTP model)")

    def identity(self) -> dict[str, Any]:
        """Every setting that can change this model's outputs (provider, model, decoding params, structured
        output mode, and each provider's own: GGUF file, dtype …), never a secret. It is part of the
        request cache key and of every request id: two configs share cached outputs only when it is equal.

        Unset (None) fields are left out, so adding an optional field keeps existing keys valid."""
        dumped = self.model_dump(mode="json", exclude=set(self.NOT_IN_IDENTITY))
        return {name: value for name, value in dumped.items() if value is not None}

    def takes_seed(self) -> bool:
        """Whether a task's draws are sent with their own `seed`: the provider's policy
        (`CAPABILITIES.per_request_seed`), or a model's own setting where the provider has one (`openai`:
        `per_request_seed`)."""
        return self.CAPABILITIES.per_request_seed

    def seeded_by(self, seed: int) -> ModelConfig:
        """This config in an experiment whose `seed` is `seed`: a provider without per-request seeds
        (`CAPABILITIES.per_request_seed` false) seeds its engine from it; the others are unchanged."""
        return self

    def engine_seed_text(self) -> str:
        """What seeds this model's sampled outputs when the run sends no per-request seed."""
        return "the engine's own seed"

    def client(self) -> ModelAPI:
        """The provider's client for this model (`create_model`). Each provider's config class returns its own
        `ModelAPI`, importing it here when it needs an optional extra (torch, vllm)."""
        raise ConfigError(f"model {self.id!r}: provider {self.provider!r} has no client (its config class "
                          f"{type(self).__name__} does not define `client()`)")

    def cost(self, tokens_in: int, tokens_out: int) -> float | None:
        """Cost of the tokens at this model's prices; None when no price is set."""
        if self.price_in_per_mtok is None and self.price_out_per_mtok is None:
            return None
        return (tokens_in * (self.price_in_per_mtok or 0) + tokens_out * (self.price_out_per_mtok or 0)) / 1e6
