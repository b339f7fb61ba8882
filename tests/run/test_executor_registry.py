"""Executors are pluggable: a toy executor registered from a test (requests one at a time, through the same
post-call state machine) runs a qa_bias experiment end to end, re-asks included, and stores what the local
executor stores."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from dialectbias.api import run_experiment
from dialectbias.errors import ProviderError
from dialectbias.plugins import unregister
from dialectbias.providers import ChatRequest, ModelAPI, create_model
from dialectbias.run import (
    Call,
    Executor,
    NeedsReask,
    PostCall,
    Stage,
    StageStats,
    cached_call,
    chat_request,
    register_executor,
)
from dialectbias.store import Store

REASK_TEXT = "Your answer could not be used"
PASS_REASKS = {"kind": "slow", "delay_s": 0, "match": REASK_TEXT}


class Sequential(Executor):
    """One request at a time, no retries: the smallest executor there is."""

    name = "sequential"
    sent: ClassVar[list[str]] = []

    async def run_stage(self, stage: Stage, store: Store, stats: dict[str, StageStats], progress: Any) -> None:
        for config in stage.models:
            post = PostCall(stage, config, store, stats[config.id], progress)
            client = create_model(config)
            try:
                for row in store.pending_requests(stage.name, config.id, limit=100_000):
                    step = post.handle(row, cached_call(row) or await self._send(client, chat_request(row, store)))
                    if isinstance(step, NeedsReask):
                        step = post.handle_reask(step, step.cached or await self._send(client, step.request))
                    store.write(step.writes)
            finally:
                await client.aclose()

    async def _send(self, client: ModelAPI, request: ChatRequest) -> Call:
        self.sent.append(client.config.id)
        try:
            return Call(await client.send(request))
        except ProviderError as exc:
            return Call.failed(exc)


@pytest.fixture
def sequential() -> Iterator[type[Sequential]]:
    register_executor("sequential", Sequential)
    Sequential.sent = []
    yield Sequential
    unregister("executors", "sequential")


def judgments(path: Path) -> dict[str, tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return {r[0]: tuple(r[1:]) for r in conn.execute(
            "SELECT request_id, score, parse_status, source_request_id, raw_output FROM judgments")}


def test_a_registered_executor_runs_an_experiment_like_the_local_one(
        qa: Any, qa_server: Any, tmp_path: Path, sequential: type[Sequential]) -> None:
    faults = [PASS_REASKS, {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])}]
    local = qa.make_project(tmp_path / "local", qa_server.base_url, n_items=2)
    toy = qa.make_project(tmp_path / "toy", qa_server.base_url, n_items=2)
    toy.rewrite(executor="sequential")
    qa_server.set_faults(faults)
    run_experiment(local.yaml_path, progress=False)
    qa_server.set_faults(faults)
    qa_server.reset_stats()
    summary = run_experiment(toy.yaml_path, progress=False)
    # 2 models × 2 items × 3 variants, 2 × 2 × 2 judgments, 4 of them re-asked once (q01)
    assert len(sequential.sent) == 12 + 8 + 4 == qa_server.stats()["chat_requests"]
    assert summary.failed == 0 and sum(s.reasked for s in summary.stages) == 4
    assert judgments(toy.store_path) == judgments(local.store_path)
    assert sum(status == "reasked" for _, status, _, _ in judgments(toy.store_path).values()) == 4
    again = run_experiment(toy.yaml_path, progress=False)
    assert again.calls_made == 0 and len(sequential.sent) == 24
