"""Request specs: one row of the request table, with its stable `request_id` and cache key (SPEC §5)."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.providers import ChatRequest, ModelConfig
from dialectbias.store import dumps, dumps_ordered


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def content_hash(value: Any) -> str:
    """Hash of the canonical JSON of a value."""
    return _sha(dumps(value))


def call_hash(identity: str, params: str, messages: str, schema: str | None) -> str:
    """The cache key: hash of (model identity, parameters, messages, schema), each canonical JSON.

    `identity` is `dumps(config.identity())`: provider, model and every other output-affecting setting."""
    return _sha("\n".join((identity, params, messages, schema or "null")))


class RequestSpec(BaseModel):
    """What a task asks the run machinery to send: one call for one (model, item, variant)."""

    model_config = ConfigDict(extra="forbid")

    stage: str
    model: ModelConfig
    item_id: str
    variant: str
    template: str = Field(description="stable template name, e.g. qa_bias/answer")
    messages: list[dict[str, Any]]
    params: dict[str, Any] = Field(default_factory=dict)
    json_schema: dict[str, Any] | None = None
    schema_name: str = "response"
    refs: list[str] = Field(default_factory=list, description="request ids this call judges or extends")
    meta: dict[str, Any] = Field(default_factory=dict)

    def cache_key(self) -> str:
        """Content hash of (model identity, parameters, messages, schema): identical calls share it."""
        return self.to_row()["cache_key"]

    def request_id(self) -> str:
        """Cache key plus where the call belongs (model id, item, variant, stage, refs)."""
        return self.to_row()["request_id"]

    def to_row(self) -> dict[str, Any]:
        """The request-table row; each part is serialised once and the hashes are built from those."""
        messages, params = dumps(self.messages), dumps(self.params)
        schema = None if self.json_schema is None else dumps_ordered(self.json_schema)
        cache_key = call_hash(dumps(self.model.identity()), params, messages, schema)
        where = dumps([self.model.id, self.stage, self.item_id, self.variant, self.refs])
        return {"request_id": _sha(f"{cache_key}\n{where}"), "stage": self.stage, "model_id": self.model.id,
                "item_id": self.item_id, "variant": self.variant, "refs": dumps(self.refs),
                "template": self.template, "prompt_hash": _sha(messages), "messages": messages,
                "params": params, "json_schema": schema, "cache_key": cache_key, "meta": dumps(self.meta),
                "created_at": time.time()}

    def chat_request(self) -> ChatRequest:
        return ChatRequest(messages=self.messages, params=self.params, json_schema=self.json_schema,
                           schema_name=self.schema_name)
