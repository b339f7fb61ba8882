"""The test server's stand-in for prompt logprobs (`/v1/completions` with `echo: true` and `logprobs`, as
vLLM's server answers it): a deterministic tokeniser and a deterministic logprob per token, so a perplexity run
through the CLI can be checked number by number (`prompt_logprobs` recomputes what the server sends).

Tokens: a run of word characters or one other non-space character, each with the whitespace before it
(`TOKEN`). Logprob of a token: −(1 + len(token.strip()) / 10 + h / 100), h = the first byte of the sha256 of
"<model>\n<token>" (UTF-8) modulo 100: between −1.1 and about −3, longer tokens less likely, each model its
own. The first token's logprob is null (no prefix), as vLLM's."""

from __future__ import annotations

import hashlib
import re

TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])|\s+$")


def prompt_tokens(text: str) -> list[str]:
    """The stand-in tokenisation (concatenated, the tokens are the text)."""
    return TOKEN.findall(text)


def token_logprob(token: str, model: str = "") -> float:
    """The stand-in logprob of one token (not its first) for `model`."""
    h = hashlib.sha256(f"{model}\n{token}".encode()).digest()[0] % 100
    return -(1.0 + len(token.strip()) / 10 + h / 100)


def prompt_logprobs(text: str, model: str = "") -> tuple[list[str], list[float | None]]:
    """(tokens, logprobs) of a prompt as the server echoes them for `model`: the first logprob None."""
    toks = prompt_tokens(text)
    return toks, [None if i == 0 else token_logprob(t, model) for i, t in enumerate(toks)]


def echo_logprobs(model: str, prompt: str, generated: str) -> tuple[dict[str, object], int]:
    """The `logprobs` object of an echo completion (prompt tokens, then the generated text's) and the prompt's
    token count (its `usage.prompt_tokens`)."""
    toks, values = prompt_logprobs(prompt, model)
    gen = prompt_tokens(generated)
    toks_all = [*toks, *gen]
    values_all = [*values, *(token_logprob(t, model) for t in gen)]
    offsets, at = [], 0
    for t in toks_all:
        offsets.append(at)
        at += len(t)
    tops = [None if v is None else {t: v} for t, v in zip(toks_all, values_all, strict=True)]
    return {"tokens": toks_all, "token_logprobs": values_all, "top_logprobs": tops, "text_offset": offsets}, len(toks)


__all__ = ["TOKEN", "echo_logprobs", "prompt_logprobs", "prompt_tokens", "token_logprob"]
