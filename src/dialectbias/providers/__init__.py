"""Model clients: one base class, one module per provider, selected by name in experiment files."""

from dialectbias.providers._base import ChatRequest, ChatResponse, ModelAPI, StructuredOutput, image_tokens
from dialectbias.providers._config import ModelConfig, ProviderCapabilities
from dialectbias.providers._registry import config_class, create_model, provider_names, register_provider

__all__ = ["ChatRequest", "ChatResponse", "ModelAPI", "ModelConfig", "ProviderCapabilities", "StructuredOutput",
           "config_class", "create_model", "image_tokens", "provider_names", "register_provider"]
