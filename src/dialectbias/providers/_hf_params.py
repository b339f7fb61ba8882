"""Decoding parameters of local models (`provider: hf`; reusable by other in-process engines): parsed and
checked from a request's params, and the stop/length rule applied to a decoded text. No torch needed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dialectbias.errors import ProviderError

DEFAULT_MAX_TOKENS = 256


@dataclass(frozen=True)
class GenParams:
    """The decoding parameters that must be identical within one batch."""

    max_new_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()

    @property
    def sample(self) -> bool:
        return self.temperature > 0

    @classmethod
    def from_params(cls, params: dict[str, Any], model_id: str) -> GenParams:
        def bad(key: str, expected: str) -> ProviderError:
            return ProviderError(f"model {model_id!r}: param {key}={params[key]!r} must be {expected}")

        def number(key: str, kind: type, lo: float, hi: float | None) -> Any:
            value = params.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad(key, "a number")
            if kind is int and value != int(value):
                raise bad(key, "an integer")
            if value < lo or (hi is not None and value > hi):
                raise bad(key, f"in [{lo}, {hi if hi is not None else 'inf'}]")
            return kind(value)

        max_tokens = number("max_tokens", int, 1, None)
        if max_tokens is None:
            max_tokens = number("max_new_tokens", int, 1, None)
        stop = params.get("stop")
        if stop is None:
            stops: tuple[str, ...] = ()
        elif isinstance(stop, str):
            stops = (stop,) if stop else ()
        elif isinstance(stop, list | tuple) and all(isinstance(s, str) for s in stop):
            stops = tuple(s for s in stop if s)
        else:
            raise bad("stop", "a string or a list of strings")
        return cls(
            max_new_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            temperature=number("temperature", float, 0, None) or 0.0,
            top_p=number("top_p", float, 0, 1),
            top_k=number("top_k", int, 0, None),
            seed=number("seed", int, -(2**63), 2**64 - 1),
            stop=stops,
        )


def batch_seed(seeds: Sequence[int | None]) -> int | None:
    """The seed of one batched `generate` over requests with these seeds, in batch order: their seed when they
    all have the same one (a batch of one; a `seed` set in a model's params), else a hash of them all (None
    when no request has one), so batches of different draws never start from the same random state."""
    if all(seed is None for seed in seeds):
        return None
    if len(set(seeds)) == 1:
        return seeds[0]
    return int(hashlib.sha256(json.dumps(list(seeds)).encode()).hexdigest()[:15], 16)


def finish_text(text: str, params: GenParams, hit_eos: bool, n_tokens: int) -> tuple[str, str]:
    """Cut `text` at the first stop string; return (finish_reason, text)."""
    cuts = [i for i in (text.find(s) for s in params.stop) if i >= 0]
    if cuts:
        return "stop", text[: min(cuts)]
    if not hit_eos and n_tokens >= params.max_new_tokens:
        return "length", text
    return "stop", text
