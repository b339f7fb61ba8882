"""Request specs: one row of the request table, with its stable `request_id` and cache key (SPEC §5)."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.providers import ChatRequest, ModelConfig
from dialectbias.store import dumps


def content_hash(value: Any) -> str:
    return hashlib.sha256(dumps(value).encode("utf-8")).hexdigest()[:32]


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
        """Content hash of (provider, model, parameters, messages, schema): identical calls share it."""
        return content_hash({"provider": self.model.provider, "model": self.model.model,
                             "params": self.params, "messages": self.messages, "schema": self.json_schema})

    def request_id(self) -> str:
        """Cache key plus where the call belongs (model id, item, variant, stage, refs)."""
        return content_hash({"cache_key": self.cache_key(), "model_id": self.model.id, "stage": self.stage,
                             "item": self.item_id, "variant": self.variant, "refs": self.refs})

    def to_row(self) -> dict[str, Any]:
        return {"request_id": self.request_id(), "stage": self.stage, "model_id": self.model.id,
                "item_id": self.item_id, "variant": self.variant, "refs": dumps(self.refs),
                "template": self.template, "prompt_hash": content_hash(self.messages),
                "messages": dumps(self.messages), "params": dumps(self.params),
                "json_schema": None if self.json_schema is None else dumps(self.json_schema),
                "cache_key": self.cache_key(), "meta": dumps(self.meta), "created_at": time.time()}

    def chat_request(self) -> ChatRequest:
        return ChatRequest(messages=self.messages, params=self.params, json_schema=self.json_schema,
                           schema_name=self.schema_name)
