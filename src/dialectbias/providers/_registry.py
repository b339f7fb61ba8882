"""Providers by the name used in experiment files: the `providers` kind of `dialectbias.plugins`, whose
targets are config classes (entry-point group `dialectbias.providers`; docs/extending.md)."""

from __future__ import annotations

from dialectbias import plugins
from dialectbias.providers._base import ModelAPI
from dialectbias.providers._config import ModelConfig


def register_provider(name: str, config_cls: str | type[ModelConfig]) -> None:
    """Make `provider: NAME` select this config class (or "module:Class", imported when used); the same as
    `dialectbias.plugins.register("providers", name, config_cls)`."""
    plugins.register("providers", name, config_cls)


def provider_names() -> list[str]:
    return sorted(plugins.names("providers"))


def config_class(name: str) -> type[ModelConfig]:
    """The config class of provider `name`; its `provider` field must take that name."""
    cls = plugins.resolve_class("providers", name, ModelConfig)
    field = cls.model_fields.get("provider")
    if field is None or field.default != name:
        raise plugins.PluginLoadError(
            f"provider {name!r} {plugins.entry('providers', name).where}: its config class must declare "
            f"`provider: Literal[{name!r}] = {name!r}` (it has {field.default if field else None!r})")
    return cls


def create_model(config: ModelConfig) -> ModelAPI:
    """The client for a validated model config (`config.client()`)."""
    return config.client()
