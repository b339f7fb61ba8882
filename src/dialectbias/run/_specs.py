"""Request specs: one row of the request table, with its stable `request_id` and cache key (SPEC §5)."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialectbias.data import ChatMessage, load_image
from dialectbias.providers import ChatRequest, ModelConfig
from dialectbias.store import PARTS_KEY, TEXT_REF_MIN_CHARS, dumps, dumps_ordered, pack_messages, pack_schema


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def retry_cache_key(cache_key: str, attempt: int) -> str:
    """The cache key of retry `attempt` (≥ 1) of a call (`run --retry`): never the first ask's, so a retried
    request (and its re-ask) gets a fresh answer instead of the stored one."""
    return _sha(f"{cache_key}\nretry {attempt}")


def retry_row(row: dict[str, Any], attempt: int) -> dict[str, Any]:
    """Retry `attempt` (≥ 1) of a request row (`run --retry`, `store/_retries.py`): the same call as a new row,
    its id and cache key folding the attempt in, `meta.retry_of` = the row's own (base) id and `meta.attempt`,
    so the old row and what derives from it stay in the store, superseded, and a later compile builds the same
    attempt."""
    base = row["request_id"]
    meta = {**json.loads(row["meta"]), "retry_of": base, "attempt": attempt}
    return {**row, "request_id": _sha(f"{base}\nretry {attempt}"),
            "cache_key": retry_cache_key(row["cache_key"], attempt), "meta": dumps(meta)}


def content_hash(value: Any) -> str:
    """Hash of the canonical JSON of a value."""
    return _sha(dumps(value))


def call_hash(identity: str, params: str, messages: str, schema: str | None, draw: int | None = None) -> str:
    """The cache key: hash of (model identity, parameters, messages, schema), each canonical JSON, and the
    draw of a task that samples (`RequestSpec.draw`), so repeated samples of one prompt never share an answer.

    `identity` is `dumps(config.identity())`: provider, model and every other output-affecting setting."""
    parts = (identity, params, messages, schema or "null", *(() if draw is None else (f"draw {draw}",)))
    return _sha("\n".join(parts))


#: The rules by which specs become request rows (ids, cache keys, draws): part of every compile fingerprint,
#: so a store compiled under older rules rebuilds its request sets. 2: a task that samples gives each draw its
#: own seed and cache entry (issue 19); an unchanged request keeps its id and its result.
REQUEST_RULES = 2

#: draw seeds are below 2**31: every OpenAI-compatible server takes them (llama.cpp reads a 32-bit seed)
DRAW_SEEDS = 2**31


def draw_seed(base: int, *coordinates: str) -> int:
    """The seed of one draw of a task that samples: a hash of (the base seed, the draw's coordinates: item,
    variant, condition, sample index), so draws never share a seed and a rerun gets the same ones."""
    return int(_sha(dumps([base, *coordinates])), 16) % DRAW_SEEDS


def engine_seed_note(model: ModelConfig) -> str:
    """What the run says once when a model's provider takes no per-request seed for a task's draws."""
    why = (f"provider {model.provider} takes no per-request seed" if not model.CAPABILITIES.per_request_seed
           else "per_request_seed is false")
    return f"samples drawn from {model.engine_seed_text()}: {why}"


class RequestSpec(BaseModel):
    """What a task asks the run machinery to send: one call for one (model, item, variant)."""

    model_config = ConfigDict(extra="forbid")

    stage: str
    model: ModelConfig
    item_id: str
    variant: str
    template: str = Field(description="stable template name, e.g. qa_bias/answer")
    messages: list[ChatMessage] = Field(description="chat messages; content a string or text and image parts "
                                        "(an image given by path or URL is loaded into bytes here)")
    params: dict[str, Any] = Field(default_factory=dict)
    json_schema: dict[str, Any] | None = None
    schema_name: str = "response"
    refs: list[str] = Field(default_factory=list, description="request ids this call judges or extends")
    meta: dict[str, Any] = Field(default_factory=dict)
    draw: int | None = Field(
        default=None, description="a task that samples (repeated samples of one prompt, e.g. the probes): this "
        "request's draw seed (`draw_seed`). It is in the cache key and the request id, so two samples never "
        "share an answer, and it is sent as `params.seed` where the provider takes per-request seeds "
        "(`ModelConfig.takes_seed`); elsewhere no seed is added and the engine's seed draws")
    answer_rule: str | None = Field(
        default=None, description="how the answer is handled after the call when that is not the default, e.g. a "
        "judge rubric's `out_of_range: clip` (`Rubric.answer_rule`): in the request id, not the cache key, so a "
        "change builds new requests whose answers come from the cache and are handled the new way")

    @field_validator("messages")
    @classmethod
    def _load_images(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        for message in messages:
            for part in message["content"] if isinstance(message["content"], list) else ():
                if part["type"] == "image" and not isinstance(part["image"], bytes):
                    part["image"], info = load_image(part["image"])
                    part["mime"] = info.mime
        return messages

    def sent_params(self) -> dict[str, Any]:
        """The parameters sent: `params`, and a draw's seed as `seed` where the provider takes one per request."""
        if self.draw is None or not self.model.takes_seed():
            return self.params
        return {**self.params, "seed": self.draw}

    def cache_key(self) -> str:
        """Content hash of (model identity, parameters, messages, schema): identical calls share it."""
        return self.to_row()["cache_key"]

    def request_id(self) -> str:
        """Cache key (which holds the draw) plus where the call belongs (model id, item, variant, stage, refs) and
        its `answer_rule` when it has one."""
        return self.to_row()["request_id"]

    def to_row(self, *, min_ref_chars: float = TEXT_REF_MIN_CHARS) -> dict[str, Any]:
        """The request-table row; each part is serialised once and the hashes are built from those.

        Hashes cover the canonical messages (text inline, images by sha256: `store/_content.py`); the row
        holds the stored form, whose images and long texts are references, and `parts` (the `PARTS_KEY`
        entry, not a column) the content rows they refer to, stored with the row."""
        packed = pack_messages(self.messages, min_ref_chars=min_ref_chars)
        canonical, params = dumps(packed.canonical), dumps(self.sent_params())
        messages = dumps(packed.stored) if packed.parts else canonical
        schema = None if self.json_schema is None else dumps_ordered(self.json_schema)
        stored_schema, schema_part = pack_schema(schema, min_ref_chars=min_ref_chars)
        cache_key = call_hash(dumps(self.model.identity()), params, canonical, schema, self.draw)
        where = dumps([self.model.id, self.stage, self.item_id, self.variant, self.refs,
                       *(() if self.answer_rule is None else (self.answer_rule,))])
        return {"request_id": _sha(f"{cache_key}\n{where}"), "stage": self.stage, "model_id": self.model.id,
                "item_id": self.item_id, "variant": self.variant, "refs": dumps(self.refs),
                "template": self.template, "prompt_hash": _sha(canonical), "messages": messages,
                "params": params, "json_schema": stored_schema, "cache_key": cache_key, "meta": dumps(self.meta),
                "created_at": time.time(), PARTS_KEY: [*packed.parts, *([schema_part] if schema_part else [])]}

    def chat_request(self) -> ChatRequest:
        return ChatRequest(messages=self.messages, params=self.sent_params(), json_schema=self.json_schema,
                           schema_name=self.schema_name)
