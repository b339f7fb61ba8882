"""Model clients: one base class, one module per provider, selected by name in experiment files."""

from dialectbias.providers._base import ChatRequest, ChatResponse, ModelAPI, StructuredOutput, image_tokens
from dialectbias.providers._config import ModelConfig, ProviderCapabilities
from dialectbias.providers._logprobs import PROMPT_LOGPROBS, PromptLogprobs, parse_prompt_logprobs
from dialectbias.providers._registry import config_class, create_model, provider_names, register_provider
from dialectbias.providers._server import ServerKind, ServerProfile

__all__ = ["PROMPT_LOGPROBS", "ChatRequest", "ChatResponse", "ModelAPI", "ModelConfig", "PromptLogprobs",
           "ProviderCapabilities", "ServerKind", "ServerProfile", "StructuredOutput", "config_class", "create_model",
           "image_tokens", "parse_prompt_logprobs", "provider_names", "register_provider"]
