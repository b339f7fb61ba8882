"""Deterministic fault-injection rules for the test server.

A spec is a JSON object ``{"rules": [rule, ...]}``. Rules are checked in order for every
generation request (``/v1/chat/completions``, ``/v1/completions``); the first rule that fires
decides the fault, later rules are not consulted (their counters do not advance).

Rule fields:

- ``kind``: one of :data:`FAULT_KINDS`.
- ``match``: substring that must occur in the request's model name or message text (prompt
  text for ``/v1/completions``); omitted = every generation request matches.
- ``per_prompt_first_n``: for each distinct ``(model, messages)`` fingerprint, the first N
  matching attempts fault and later attempts succeed. Reproducible whatever the concurrency
  order, so it is the recommended mode.
- ``every``: every k-th matching request faults (the k-th, 2k-th, ...).
- ``times``: at most this many faults from this rule in total. Alone, it means "the first N
  matching requests fault"; with ``every`` or ``per_prompt_first_n`` it caps them.
- With none of ``per_prompt_first_n``/``every``/``times``, every matching request faults.
- ``retry_after`` (429/503): seconds sent in the ``Retry-After`` header (default 0 for 429;
  no header for 503 unless set).
- ``llamacpp_json_schema`` / ``vllm_json_schema``: a request whose ``response_format`` the imitated server
  cannot take is refused as it refuses it (llama-cpp-python: HTTP 500 for ``json_schema``; vLLM: HTTP 400
  for ``json_schema``); other requests are answered normally. ``llamacpp_json_schema`` also answers 500
  to a schema with a ``maxLength`` over 1000 (the real server dies building its grammar).
- ``delay_s``: sleep before answering (``timeout`` default 5.0 then a normal answer,
  ``slow`` default 0.05 then a normal answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal[
    "429",
    "500",
    "503",
    "timeout",
    "slow",
    "truncated_json",
    "invalid_json",
    "out_of_range",
    "empty_content",
    "bad_body",
    "length",
    "llamacpp_json_schema",
    "vllm_json_schema",
]
FAULT_KINDS: tuple[str, ...] = (
    "429",
    "500",
    "503",
    "timeout",
    "slow",
    "truncated_json",
    "invalid_json",
    "out_of_range",
    "empty_content",
    "bad_body",
    "length",
    "llamacpp_json_schema",
    "vllm_json_schema",
)


class FaultRule(BaseModel):
    """One fault-injection rule (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    kind: FaultKind
    match: str | None = None
    per_prompt_first_n: int | None = Field(default=None, ge=1)
    every: int | None = Field(default=None, ge=1)
    times: int | None = Field(default=None, ge=0)
    retry_after: float | None = Field(default=None, ge=0)
    delay_s: float | None = Field(default=None, ge=0)

    def effective_delay(self) -> float:
        if self.delay_s is not None:
            return self.delay_s
        return 5.0 if self.kind == "timeout" else 0.05


class FaultSpec(BaseModel):
    """An ordered list of rules."""

    model_config = ConfigDict(extra="forbid")

    rules: list[FaultRule] = Field(default_factory=list)

    @classmethod
    def load(cls, spec: FaultSpec | dict[str, Any] | list[Any] | str | Path | None) -> FaultSpec:
        """Accept a FaultSpec, a dict, a bare list of rules, a JSON string, or a path to a JSON file."""
        if spec is None:
            return cls()
        if isinstance(spec, FaultSpec):
            return spec
        if isinstance(spec, Path):
            spec = json.loads(spec.read_text(encoding="utf-8"))
        elif isinstance(spec, str):
            text = spec.strip()
            if text[:1] not in "{[":
                text = Path(text).read_text(encoding="utf-8")
            spec = json.loads(text)
        if isinstance(spec, list):
            spec = {"rules": spec}
        return cls.model_validate(spec)


class _RuleState:
    __slots__ = ("fired", "per_prompt", "rule", "seen")

    def __init__(self, rule: FaultRule) -> None:
        self.rule = rule
        self.seen = 0
        self.fired = 0
        self.per_prompt: dict[str, int] = {}


class FaultInjector:
    """Holds the rules' counters; `decide` is called once per generation request."""

    def __init__(self, spec: FaultSpec) -> None:
        self.spec = spec
        self._states = [_RuleState(r) for r in spec.rules]
        self.needs_text = any(r.match is not None for r in spec.rules)

    def __bool__(self) -> bool:
        return bool(self._states)

    def decide(self, fingerprint: str, text: str) -> FaultRule | None:
        for st in self._states:
            rule = st.rule
            if rule.match is not None and rule.match not in text:
                continue
            st.seen += 1
            if rule.times is not None and st.fired >= rule.times:
                continue
            fire = True
            if rule.per_prompt_first_n is not None:
                n = st.per_prompt.get(fingerprint, 0)
                st.per_prompt[fingerprint] = n + 1
                fire = n < rule.per_prompt_first_n
            if fire and rule.every is not None:
                fire = st.seen % rule.every == 0
            if fire:
                st.fired += 1
                return rule
        return None
