"""Provider lookup by the name used in experiment files."""

from __future__ import annotations

import importlib
from typing import Any

from dialectbias.errors import ConfigError
from dialectbias.providers._base import ModelAPI
from dialectbias.providers._config import ModelConfig

# name -> (module, config class name, api class name); modules import lazily so
# that optional extras (torch for `hf`) are only needed when used.
_PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("dialectbias.providers._openai", "OpenAIModelConfig", "OpenAIModel"),
    "hf": ("dialectbias.providers._hf_config", "HFModelConfig", ""),
    "vllm": ("dialectbias.providers._vllm_config", "VLLMModelConfig", ""),
}


def register_provider(name: str, module: str, config_cls: str, api_cls: str) -> None:
    """Make a provider available under `name` (for plug-ins outside the package)."""
    _PROVIDERS[name] = (module, config_cls, api_cls)


def provider_names() -> list[str]:
    return sorted(_PROVIDERS)


def config_class(name: str) -> type[ModelConfig]:
    if name not in _PROVIDERS:
        raise ConfigError(f"unknown provider {name!r}; expected one of {provider_names()}")
    module, cls, _ = _PROVIDERS[name]
    return getattr(importlib.import_module(module), cls)


def create_model(config: ModelConfig, **kwargs: Any) -> ModelAPI:
    """Instantiate the client for a validated model config."""
    module, _, api = _PROVIDERS[config.provider]
    if not api:  # provider whose client lives in an optional extra
        return importlib.import_module(module).create(config, **kwargs)
    return getattr(importlib.import_module(module), api)(config, **kwargs)
