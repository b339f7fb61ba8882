"""Prompt token log-probabilities: what a provider returns when asked to score a text instead of answering it
(the perplexity control of the German dialect-bias paper, App. C.2; task `perplexity`).

A scoring request is an ordinary request (so the run machinery caches, retries and stores it like any other)
whose `params` hold `PROMPT_LOGPROBS: true` and whose one user message is the text to score, verbatim (no chat
template: the text as the model's tokenizer reads it, with the special tokens it adds by itself, e.g. a BOS).
`ModelAPI.send` routes it to the provider's `prompt_logprobs`; the answer is stored as the JSON of a
`PromptLogprobs` in the result's `output`.

The first token: a causal model gives no conditional probability for the first token of its input (it has no
prefix). Every provider reports it as `null` (vLLM's `prompt_logprobs` and the echo of `/v1/completions` do the
same), and `PromptLogprobs.scored` leaves it out. With a tokenizer that adds a BOS token (Llama, Mistral, Gemma)
the first token is the BOS and every token of the text is scored; without one (GPT-2, Qwen, SmolLM2) the text's
first token is not scored.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from dialectbias.errors import ProviderError

#: the request parameter that makes a request a prompt-scoring request
PROMPT_LOGPROBS = "prompt_logprobs"
#: the capability's name, as errors and docs say it (`ProviderCapabilities.prompt_logprobs`)
CAPABILITY = "prompt_logprobs"


class PromptLogprobs(BaseModel):
    """The log-probability (natural log) of each token of a text given the tokens before it, in the model's own
    tokenisation; `logprobs[0]` is None (the first token has no prefix)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: list[str]
    logprobs: list[float | None]

    def scored(self) -> list[float]:
        """The conditional log-probabilities: every position but the first. A None anywhere else is an error
        (the provider did not score that token)."""
        if len(self.tokens) != len(self.logprobs):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.logprobs)} logprobs")
        rest = self.logprobs[1:]
        missing = [i + 1 for i, v in enumerate(rest) if v is None]
        if missing:
            raise ValueError(f"no logprob for token(s) at position(s) {missing[:5]}")
        return [float(v) for v in rest if v is not None]


def is_scoring(params: dict[str, Any]) -> bool:
    """Whether a request's params ask for prompt logprobs instead of an answer."""
    return bool(params.get(PROMPT_LOGPROBS))


def prompt_text(messages: list[Any], model_id: str) -> str:
    """The text a scoring request scores: its one message's text content."""
    if len(messages) != 1 or not isinstance(messages[0].get("content"), str):
        raise ProviderError(f"model {model_id!r}: a prompt-logprob request must hold exactly one message with "
                            "plain text content (the text to score)", retryable=False)
    return str(messages[0]["content"])


def unsupported(model_id: str, provider: str) -> ProviderError:
    """The one error of a provider that cannot score prompts."""
    return ProviderError(f"model {model_id!r}: provider {provider!r} cannot return prompt token logprobs "
                         f"(capability {CAPABILITY!r}); use provider hf, vllm or an OpenAI-compatible server "
                         "that echoes prompt logprobs (openai, e.g. vLLM's)", retryable=False)


def parse_prompt_logprobs(output: str) -> PromptLogprobs:
    """A stored scoring result; ValueError naming the problem when it is not one."""
    try:
        return PromptLogprobs.model_validate(json.loads(output))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a prompt-logprob result: {str(exc).splitlines()[0]}") from None


__all__ = ["CAPABILITY", "PROMPT_LOGPROBS", "PromptLogprobs", "is_scoring", "parse_prompt_logprobs",
           "prompt_text", "unsupported"]
