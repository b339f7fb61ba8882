"""Per-model request/token rate limits and bounded exponential backoff with jitter."""

from __future__ import annotations

import asyncio
import random
import time

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0
RETRY_AFTER_CAP_S = 120.0


def backoff_delay(attempt: int, retry_after: float | None, rng: random.Random) -> float:
    """Seconds to wait before retry `attempt` (1-based): the server's Retry-After when given
    (capped), else full-jitter exponential backoff bounded by BACKOFF_CAP_S."""
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, RETRY_AFTER_CAP_S)
    return rng.uniform(0.5, 1.0) * min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1))


class RateLimiter:
    """Token buckets for requests per minute and tokens per minute (either may be None = unlimited)."""

    def __init__(self, rpm: int | None, tpm: int | None) -> None:
        self._buckets = [(float(limit or 0), [float(limit or 0), time.monotonic()]) for limit in (rpm, tpm)]
        self._enabled = [rpm is not None, tpm is not None]
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: int = 0) -> None:
        if not any(self._enabled):
            return
        async with self._lock:
            for enabled, (capacity, state), need in zip(self._enabled, self._buckets, (1.0, float(tokens)),
                                                        strict=True):
                if not enabled:
                    continue
                need = min(need, capacity)
                while True:
                    now = time.monotonic()
                    state[0] = min(capacity, state[0] + (now - state[1]) * capacity / 60.0)
                    state[1] = now
                    if state[0] >= need:
                        state[0] -= need
                        break
                    await asyncio.sleep((need - state[0]) * 60.0 / capacity)
