"""What the test server counts and keeps: request counters, recorded requests, the fault rules' counters
and the responder (`GET /stats`, `GET /requests`, `POST /stats/reset`, `POST /faults`)."""

from __future__ import annotations

import time
from collections import Counter, deque
from typing import Any

from dialectbias.testing._faults import FaultInjector, FaultSpec
from dialectbias.testing._responders import load_responder


class ServerState:
    """One server's counters and settings; the handlers in `_app.py` update it."""

    def __init__(self, faults: FaultSpec, api_key: str | None, responder: str, record: int,
                 imitate: str | None = None, context: int | None = None, slots: int | None = None,
                 tokenize: bool = True) -> None:
        self.faults = FaultInjector(faults)
        self.api_key = api_key
        self.auth_header = f"Bearer {api_key}" if api_key else None
        self.responder_spec = responder
        self.responder = load_responder(responder)
        self.record_max = record
        #: the real server imitated on `/v1/models`, `/props` and context refusals (`_imitation`), if any
        self.imitate = imitate
        self.context = context
        self.slots = slots
        #: whether the imitated server answers its tokenize route (an older vLLM has none)
        self.tokenize = tokenize
        self.reset()

    def reset(self) -> None:
        """Zero the counters and drop the recorded requests (the fault rules keep their counters)."""
        self.requests_total = 0
        self.by_path: Counter[str] = Counter()
        self.faults_served: Counter[str] = Counter()
        self.by_model: Counter[str] = Counter()
        self.chat_by_model: Counter[str] = Counter()
        self.status_counts: Counter[int] = Counter()
        self.unauthorized = 0
        self.responses_ok = 0
        self.prompts: set[str] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.started = time.time()
        self.recorded: deque[dict[str, Any]] = deque(maxlen=self.record_max or None)

    def record(self, path: str, body: dict[str, Any], authorization: str | None) -> None:
        """Keep a generation request for `GET /requests` (when recording is on)."""
        if self.record_max:
            self.recorded.append({"path": path, "body": body, "authorization": authorization})

    def stats(self) -> dict[str, Any]:
        return {
            "requests_total": self.requests_total,
            "by_path": dict(self.by_path),
            "status_counts": {str(k): v for k, v in sorted(self.status_counts.items())},
            "faults": dict(self.faults_served),
            "faults_total": sum(self.faults_served.values()),
            "chat_requests": self.by_path.get("/v1/chat/completions", 0),
            "chat_by_model": dict(self.chat_by_model),
            "generation_by_model": dict(self.by_model),
            "distinct_prompts": len(self.prompts),
            "responses_ok": self.responses_ok,
            "unauthorized": self.unauthorized,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "uptime_s": round(time.time() - self.started, 3),
        }


__all__ = ["ServerState"]
