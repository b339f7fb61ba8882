"""Retry backoff (Retry-After honoured, capped) and the RPM/TPM token buckets, on a simulated clock."""

from __future__ import annotations

import asyncio
import random
import types

import pytest

from dialectbias.run import _limits
from dialectbias.run._limits import (
    BACKOFF_BASE_S,
    BACKOFF_CAP_S,
    RETRY_AFTER_CAP_S,
    RateLimiter,
    backoff_delay,
)


def test_retry_after_is_honoured() -> None:
    assert backoff_delay(1, 2.5, random.Random(0)) == 2.5
    assert backoff_delay(7, 0.0, random.Random(0)) == 0.0


def test_retry_after_is_capped() -> None:
    assert backoff_delay(1, 10_000.0, random.Random(0)) == RETRY_AFTER_CAP_S


@pytest.mark.parametrize("attempt", [1, 2, 3, 4])
def test_backoff_grows_exponentially_with_jitter(attempt: int) -> None:
    rng = random.Random(attempt)
    delays = [backoff_delay(attempt, None, rng) for _ in range(200)]
    full = BACKOFF_BASE_S * 2 ** (attempt - 1)
    assert all(0.5 * full <= d <= full for d in delays)
    assert len(set(delays)) > 1  # jittered


def test_backoff_is_capped() -> None:
    rng = random.Random(0)
    delays = [backoff_delay(40, None, rng) for _ in range(100)]
    assert all(0.5 * BACKOFF_CAP_S <= d <= BACKOFF_CAP_S for d in delays)


def test_negative_retry_after_is_ignored() -> None:
    assert backoff_delay(1, -1.0, random.Random(0)) <= BACKOFF_BASE_S


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(_limits, "time", types.SimpleNamespace(monotonic=fake.monotonic))
    monkeypatch.setattr(_limits, "asyncio", types.SimpleNamespace(Lock=asyncio.Lock, sleep=fake.sleep))
    return fake


def acquire_many(limiter: RateLimiter, n: int, tokens: int = 0) -> None:
    async def go() -> None:
        for _ in range(n):
            await limiter.acquire(tokens)

    asyncio.run(go())


def test_no_limits_never_wait(clock: FakeClock) -> None:
    acquire_many(RateLimiter(None, None), 1000, tokens=10_000)
    assert clock.slept == []


def test_rpm_allows_a_burst_of_one_minute(clock: FakeClock) -> None:
    acquire_many(RateLimiter(120, None), 120)
    assert clock.slept == []


def test_rpm_waits_for_the_next_request(clock: FakeClock) -> None:
    acquire_many(RateLimiter(120, None), 121)
    assert sum(clock.slept) == pytest.approx(0.5)  # one request refills every 60/120 s


def test_rpm_bounds_the_sustained_rate(clock: FakeClock) -> None:
    start = clock.now
    acquire_many(RateLimiter(60, None), 300)
    assert clock.now - start == pytest.approx(240.0)  # 60 at once, then one per second


def test_tpm_waits_for_tokens(clock: FakeClock) -> None:
    acquire_many(RateLimiter(None, 600), 3, tokens=300)
    assert sum(clock.slept) == pytest.approx(30.0)  # 300 tokens at 10 per second


def test_a_request_larger_than_tpm_does_not_block_forever(clock: FakeClock) -> None:
    acquire_many(RateLimiter(None, 100), 2, tokens=1000)
    assert sum(clock.slept) == pytest.approx(60.0)  # waits for one full bucket, then goes
