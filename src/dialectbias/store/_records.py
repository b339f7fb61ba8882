"""Typed rows tasks read from the store (instead of SQL of their own)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StageResult:
    """One current request of a stage with its result (`status` None: not done yet). `meta` and `refs`
    are decoded on access: most readers need only the output."""

    request_id: str
    model_id: str
    item_id: str
    variant: str
    template: str
    status: str | None
    output: str | None
    meta_json: str
    refs_json: str

    @property
    def meta(self) -> dict[str, Any]:
        return json.loads(self.meta_json)

    @property
    def refs(self) -> list[str]:
        return json.loads(self.refs_json)


@dataclass(frozen=True)
class ResultCounts:
    """A stage × model's current requests: how many, how many succeeded, how many failed."""

    requests: int
    ok: int
    failed: int


@dataclass(frozen=True)
class StageRequest:
    """One current request of a stage with its stored prompt (`messages`: the stored form, see
    `Store.resolve_messages`) and its result, if any (`status` None: not done yet; `error`: why it failed)."""

    request_id: str
    item_id: str
    variant: str
    template: str
    meta_json: str
    messages: str
    status: str | None
    output: str | None
    error: str | None

    @property
    def meta(self) -> dict[str, Any]:
        return json.loads(self.meta_json)


@dataclass(frozen=True)
class ItemFacets:
    """What an item is about, for breakdowns: its question type and domain."""

    item_id: str
    question_type: str | None
    domain: str | None


@dataclass(frozen=True)
class CallTotals:
    """The stored results of current requests: how many, how many failed, and their tokens."""

    results: int
    failed: int
    tokens_in: int
    tokens_out: int
