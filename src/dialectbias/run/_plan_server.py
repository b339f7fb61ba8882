"""What `plan` asks a served model's server before any call: its context window and parallel slots.

Only cheap GETs, never a model call: `GET {base_url}/models` (vLLM's `max_model_len`) and, for llama.cpp,
`GET /props` (`n_ctx`, `total_slots`), through the provider's own client (`ModelAPI.server_profile`).
Local engines (hf, vllm: `CAPABILITIES.local`) are not asked: their client would load the model. A server
that is down, slow (more than `ASK_TIMEOUT_S`) or silent gives empty facts: the plan then says the slots
are assumed and the context window unknown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from dialectbias.providers import ModelConfig

#: seconds the plan waits for a server's answer to its GETs
ASK_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ServerFacts:
    """What the server said (None: it did not say, or was not asked)."""

    context_window: int | None = None
    slots: int | None = None


def ask_server(config: ModelConfig) -> ServerFacts:
    """The served model's context window and slots, or empty facts (a local engine, a server down)."""
    if config.CAPABILITIES.local:
        return ServerFacts()
    try:
        return asyncio.run(asyncio.wait_for(_ask(config), ASK_TIMEOUT_S))
    except Exception:  # a server down, slow or odd: the plan says what it assumed instead
        return ServerFacts()


async def _ask(config: ModelConfig) -> ServerFacts:
    client = config.client()
    try:
        profile = await client.server_profile()
        if profile is None:
            return ServerFacts()
        return ServerFacts(context_window=profile.context_window, slots=profile.slots)
    finally:
        await client.aclose()
