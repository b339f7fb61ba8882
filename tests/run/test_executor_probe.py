"""The short probe for an unreachable server: only before any success, and only for connection errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dialectbias.errors import ProviderError
from dialectbias.providers import ChatRequest, ChatResponse, ModelAPI
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec, Stage, StageStats, _executor
from dialectbias.run._executor import execute_stage
from dialectbias.store import Store

CONFIG = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1", max_concurrency=1,
                           max_retries=3)


class Scripted(ModelAPI):
    """Answers each call from a script: an exception to raise, or None for a normal answer."""

    name = "openai"

    def __init__(self, script: list[ProviderError | None]) -> None:
        super().__init__(CONFIG)
        self.script = list(script)
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        step = self.script.pop(0) if self.script else None
        if step is not None:
            raise step
        return ChatResponse(output="উত্তর")


def refused() -> ProviderError:
    return ProviderError("model 'm' at http://127.0.0.1:1/v1: cannot connect (refused)", retryable=True,
                         unreachable=True)


def run(tmp_path: Path, client: Scripted, n: int = 3) -> StageStats:
    stats = StageStats(stage="generate", model_id="m")
    with Store.open(tmp_path / "run.sqlite") as store:
        store.add_requests(RequestSpec(stage="generate", model=CONFIG, item_id=f"q{i}", variant="standard",
                                       template="t", messages=[{"role": "user", "content": f"প্রশ্ন {i}"}]
                                       ).to_row() for i in range(n))
        stage = Stage("generate", [CONFIG], lambda store, model: iter(()))
        asyncio.run(execute_stage(stage, store, {"m": client}, {"m": stats}, lambda *_: None))
    return stats


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_executor, "backoff_delay", lambda *_: 0.0)
    monkeypatch.setattr(_executor, "PROBE_PAUSE_S", 0.0)


def test_a_server_refusing_from_the_start_is_stopped_after_two_attempts(tmp_path: Path) -> None:
    client = Scripted([refused()] * 10)
    stats = run(tmp_path, client)
    assert client.calls == 2 and stats.failed == 1 and stats.retries == 1
    assert stats.stopped is not None and "server is down" in stats.stopped


def test_a_server_that_answers_the_probe_is_not_stopped(tmp_path: Path) -> None:
    client = Scripted([refused()])
    stats = run(tmp_path, client)
    assert (stats.stopped, stats.failed, stats.calls, client.calls) == (None, 0, 3, 4)


def test_after_a_success_a_refused_connection_gets_the_full_retries(tmp_path: Path) -> None:
    client = Scripted([None, refused(), refused(), refused()])  # the 2nd request: 3 refusals, then an answer
    stats = run(tmp_path, client)
    assert (stats.stopped, stats.failed, stats.retries, stats.calls) == (None, 0, 3, 3)


def test_other_failures_at_the_start_keep_their_retries(tmp_path: Path) -> None:
    client = Scripted([ProviderError("HTTP 500", retryable=True, status=500)] * 3)
    stats = run(tmp_path, client)
    assert (stats.stopped, stats.failed, stats.retries) == (None, 0, 3)
