"""A login throttle with exponential backoff, per client address and overall (the review app's `/login`).

A client may fail `free_per_client` log-ins freely; after that each further try must wait
`base_seconds × 2^(failures − free)` (at most `max_seconds`) after its last failure. The same rule holds
over all clients together with `free_overall`, so failures spread over many addresses slow down too. While
a client waits, its tries are refused without looking at the token (a good guess is not revealed). A
successful log-in clears the client's count and is never counted. Counts are forgotten after `forget_after`
seconds without a failure; at most `max_clients` addresses are tracked (the longest quiet is dropped
first), so memory stays bounded whatever the number of addresses. Time comes from `clock` (tests inject
it).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Count:
    failures: int
    last: float


class LoginThrottle:
    def __init__(self, *, free_per_client: int = 5, free_overall: int = 100, base_seconds: float = 1.0,
                 max_seconds: float = 900.0, forget_after: float = 3600.0, max_clients: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.free_per_client, self.free_overall = free_per_client, free_overall
        self.base_seconds, self.max_seconds = base_seconds, max_seconds
        self.forget_after, self.max_clients = forget_after, max_clients
        self.clock = clock
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, _Count] = OrderedDict()
        self._overall = _Count(0, -math.inf)

    def _delay(self, count: _Count, free: int, now: float) -> float:
        if count.failures < free:
            return 0.0
        wait = min(self.max_seconds, self.base_seconds * 2 ** (count.failures - free))
        return max(0.0, count.last + wait - now)

    def _forget(self, now: float) -> None:
        while self._clients:
            key, oldest = next(iter(self._clients.items()))
            if now - oldest.last <= self.forget_after and len(self._clients) <= self.max_clients:
                break
            del self._clients[key]
        if now - self._overall.last > self.forget_after:
            self._overall = _Count(0, -math.inf)

    def wait(self, client: str) -> float:
        """Seconds `client` must wait before its next try (0: it may try now)."""
        with self._lock:
            now = self.clock()
            self._forget(now)
            count = self._clients.get(client)
            mine = self._delay(count, self.free_per_client, now) if count else 0.0
            return max(mine, self._delay(self._overall, self.free_overall, now))

    def failed(self, client: str) -> None:
        with self._lock:
            now = self.clock()
            count = self._clients.pop(client, None) or _Count(0, now)
            self._clients[client] = _Count(count.failures + 1, now)  # most recent last
            self._overall = _Count(self._overall.failures + 1, now)
            self._forget(now)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)

    def tracked(self) -> int:
        """How many client addresses are tracked now."""
        with self._lock:
            return len(self._clients)
