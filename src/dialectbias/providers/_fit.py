"""Requests that fit the model's context (issue 24 item 2, "Judges that fit"): before a request is sent, its
estimated input tokens plus its `max_tokens` are checked against the context window the model's server
reports (`ModelAPI.server_profile`); a request that cannot fit is not sent. A server's own 400 saying the
prompt is longer than its context is the same fault. Both are `ProviderError(context=True)`: never retried
within a run (no wait makes a prompt shorter), no sign of the server's health, counted apart in the run
summary and `status` (their stored error starts with `CONTEXT_FAULT`), and sent again by the next run
(`run --retry failed`) once something changed: a smaller `max_tokens`, a shorter template, a server serving
a longer context, or a `tokenizer:` counting the prompt exactly."""

from __future__ import annotations

import re

from dialectbias.errors import CONTEXT_FAULT, ProviderError

#: what to change, said once per message
_ADVICE = ("lower `max_tokens`, shorten the prompt or serve the model with a longer context, then "
           "`run --retry failed`")

#: a server's error saying the prompt (plus `max_tokens`) is longer than its context: vLLM, OpenAI and
#: llama-cpp-python ("This model's maximum context length is 2048 tokens …", `context_length_exceeded`),
#: llama.cpp ("request (2310 tokens) exceeds the available context size (2048 tokens)",
#: `exceed_context_size_error`), llama-cpp-python's plain form ("Requested tokens (2310) exceed context
#: window of 2048") and Ollama's ("input length exceeds the context length")
_TOO_LONG = re.compile(r"maximum context length|context_length_exceeded|exceeds? the available context size|"
                       r"exceed_context_size|exceed context window|exceeds the context length|"
                       r"context length exceeded|prompt is too long", re.IGNORECASE)


def too_long(model_id: str, prompt_tokens: int, max_tokens: int, window: int, counted: str) -> ProviderError:
    """The fault of a request that was not sent: `counted` says how its tokens were counted."""
    return ProviderError(f"model {model_id!r}: {CONTEXT_FAULT}: prompt {prompt_tokens:,} tokens ({counted}) + "
                         f"max_tokens {max_tokens:,} > context {window:,}; nothing was sent; {_ADVICE}",
                         retryable=False, context=True)


def refuses_context(status: int, body_text: str) -> bool:
    """Whether an HTTP error says the request is longer than the server's context (`_TOO_LONG`): a 4xx,
    or a 5xx some servers answer with the same message."""
    return status >= 400 and status != 429 and bool(_TOO_LONG.search(body_text))


def server_too_long(model_id: str, status: int, detail: str) -> ProviderError:
    """The fault of a request the server refused as longer than its context."""
    return ProviderError(f"model {model_id!r}: {CONTEXT_FAULT}: the server refused the prompt (HTTP {status}"
                         f"{detail}); {_ADVICE}", retryable=False, status=status, context=True)


__all__ = ["CONTEXT_FAULT", "refuses_context", "server_too_long", "too_long"]
