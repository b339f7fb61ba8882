"""The post-call state machine on its own (no server, no executor): what each answer becomes in the store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dialectbias.errors import ProviderError
from dialectbias.providers import ChatResponse
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import Call, Done, NeedsReask, Outcome, PostCall, RequestSpec, Stage, StageStats, Write
from dialectbias.store import Store

JUDGE = OpenAIModelConfig(id="judge-a", model="j", base_url="http://127.0.0.1:1/v1")
OTHER = OpenAIModelConfig(id="judge-b", model="j2", base_url="http://127.0.0.1:1/v1")


class Verdict(BaseModel):
    score: int


def finalize(store: Store, row: sqlite3.Row, outcome: Outcome) -> list[Write]:
    """A derived row: what was parsed, from which request."""
    parsed = outcome.parsed
    return [("annotations", {"target_id": row["request_id"], "annotator": "test", "kind": "derived",
                             "value": json.dumps({"status": parsed.status if parsed else None,
                                                  "source": outcome.source_request_id}),
                             "comment": None, "created_at": 0.0})]


@dataclass
class Setup:
    store: Store
    stage: Stage
    stats: StageStats
    post: PostCall
    ticks: list[tuple[str, int, int]]

    def row(self, model_id: str = "judge-a") -> sqlite3.Row:
        return self.store.pending_requests("judge", model_id)[0]


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    with Store.open(tmp_path / "run.sqlite") as store:
        store.add_requests(RequestSpec(stage="judge", model=m, item_id="q1", variant="sylhet", template="t",
                                       messages=[{"role": "user", "content": "মূল্যায়ন করুন"}],
                                       json_schema=Verdict.model_json_schema(), meta={"model_id": "model-a"}
                                       ).to_row() for m in (JUDGE, OTHER))
        stage = Stage("judge", [JUDGE, OTHER], lambda *_: iter(()), rubric=Verdict, finalize=finalize)
        stats = StageStats(stage="judge", model_id="judge-a")
        ticks: list[tuple[str, int, int]] = []
        yield Setup(store, stage, stats, PostCall(stage, JUDGE, store, stats, lambda *a: ticks.append(a)), ticks)


def answer(text: str, tokens_in: int = 10, tokens_out: int = 4) -> Call:
    return Call(ChatResponse(output=text, tokens_in=tokens_in, tokens_out=tokens_out))


def rows(writes: list[Write], table: str) -> list[dict[str, Any]]:
    return [row for name, row in writes if name == table]


def test_a_valid_fresh_answer_is_cached_recorded_and_finalized(setup: Setup) -> None:
    row = setup.row()
    step = setup.post.handle(row, answer('{"score": 4}'))
    assert isinstance(step, Done)
    assert [name for name, _ in step.writes] == ["cache", "results", "annotations"]
    (result,) = rows(step.writes, "results")
    assert (result["request_id"], result["status"], result["cache_hit"]) == (row["request_id"], "ok", 0)
    assert rows(step.writes, "cache")[0]["cache_key"] == row["cache_key"]
    assert json.loads(rows(step.writes, "annotations")[0]["value"]) == {"status": "ok", "source": row["request_id"]}
    s = setup.stats
    assert (s.calls, s.cached, s.tokens_in, s.tokens_out, s.reasked, s.parse_failed) == (1, 0, 10, 4, 0, 0)
    assert setup.ticks == [("judge-a", 1, 0)]


def test_a_cached_answer_writes_no_cache_row_and_counts_as_cached(setup: Setup) -> None:
    step = setup.post.handle(setup.row(), Call.from_cache({"output": '{"score": 1}', "finish_reason": "stop",
                                                           "tokens_in": 3, "tokens_out": 2}))
    assert isinstance(step, Done) and not rows(step.writes, "cache")
    assert rows(step.writes, "results")[0]["cache_hit"] == 1
    assert (setup.stats.calls, setup.stats.cached, setup.stats.tokens_in) == (0, 1, 0)


def test_a_repairable_answer_is_repaired_without_a_reask(setup: Setup) -> None:
    step = setup.post.handle(setup.row(), answer('Here: ```json\n{"score": 2}\n```'))
    assert isinstance(step, Done) and setup.stats.repaired == 1 and setup.stats.reasked == 0


def test_an_invalid_answer_asks_for_a_reask_stored_as_its_own_request(setup: Setup) -> None:
    row = setup.row()
    step = setup.post.handle(row, answer("I think it is good."))
    assert isinstance(step, NeedsReask) and setup.stats.reasked == 1
    assert step.row["stage"] == "judge:reask" and json.loads(step.row["refs"]) == [row["request_id"]]
    assert json.loads(step.row["meta"]) == {"model_id": "model-a", "reask_of": row["request_id"]}
    assert step.request.messages[-2] == {"role": "assistant", "content": "I think it is good."}
    assert step.cached is None and ("requests", step.row) in step.writes


def test_a_valid_reask_answer_is_what_the_record_is_built_from(setup: Setup) -> None:
    row = setup.row()
    pending = setup.post.handle(row, answer("no JSON"))
    assert isinstance(pending, NeedsReask)
    done = setup.post.handle_reask(pending, answer('{"score": 5}', tokens_in=20, tokens_out=5))
    reask_id = pending.row["request_id"]
    results = {r["request_id"]: r for r in rows(done.writes, "results")}
    assert results[reask_id]["output"] == '{"score": 5}' and results[row["request_id"]]["output"] == "no JSON"
    assert json.loads(rows(done.writes, "annotations")[0]["value"]) == {"status": "reasked", "source": reask_id}
    assert len(rows(done.writes, "cache")) == 2  # the first answer and the re-ask's, both fresh
    s = setup.stats
    assert (s.calls, s.tokens_in, s.parse_failed, s.reasked) == (2, 30, 0, 1)
    assert setup.ticks == [("judge-a", 1, 0)]


def test_a_failed_reask_leaves_the_first_answer_ok_and_the_parse_failed(setup: Setup) -> None:
    row = setup.row()
    pending = setup.post.handle(row, answer("no JSON"))
    assert isinstance(pending, NeedsReask)
    error = ProviderError("model 'judge-a': HTTP 500", retryable=True, status=500)
    error.attempts = 2  # type: ignore[attr-defined]
    done = setup.post.handle_reask(pending, Call.failed(error))
    results = {r["request_id"]: r for r in rows(done.writes, "results")}
    assert results[pending.row["request_id"]]["status"] == "failed"
    assert results[pending.row["request_id"]]["retries"] == 2
    assert results[row["request_id"]]["status"] == "ok"
    assert json.loads(rows(done.writes, "annotations")[0]["value"])["status"] == "failed"
    assert (setup.stats.parse_failed, setup.stats.failed, setup.stats.retries) == (1, 0, 2)


def test_a_reask_already_sent_by_an_earlier_run_comes_from_the_cache(setup: Setup) -> None:
    row = setup.row()
    first = setup.post.handle(row, answer("no JSON"))
    assert isinstance(first, NeedsReask)
    setup.store.write([("cache", {"cache_key": first.row["cache_key"], "output": '{"score": 3}',
                                  "finish_reason": "stop", "tokens_in": 1, "tokens_out": 1, "latency_s": 0.0,
                                  "created_at": 0.0})])
    again = setup.post.handle(row, answer("no JSON"))
    assert isinstance(again, NeedsReask) and again.cached is not None and again.cached.cached
    done = setup.post.handle_reask(again, again.cached)
    assert setup.stats.cached == 1 and len(rows(done.writes, "cache")) == 1


def test_the_validator_is_asked_per_model(setup: Setup) -> None:
    class PerJudge(Stage):
        def validator(self, model_id: str) -> type[BaseModel] | None:
            return None if model_id == "judge-b" else Verdict

    stage = PerJudge("judge", [JUDGE, OTHER], lambda *_: iter(()), finalize=finalize)
    post = PostCall(stage, OTHER, setup.store, StageStats(stage="judge", model_id="judge-b"))
    step = post.handle(setup.row("judge-b"), answer("free text, not JSON"))
    assert isinstance(step, Done)
    assert json.loads(rows(step.writes, "annotations")[0]["value"])["status"] is None


def test_a_failure_is_recorded_and_a_server_down_from_the_start_stops_the_model(setup: Setup) -> None:
    down = ProviderError("cannot connect", retryable=True, unreachable=True)
    step = setup.post.handle(setup.row(), Call.failed(down))
    assert isinstance(step, Done) and [name for name, _ in step.writes] == ["results"]
    assert rows(step.writes, "results")[0]["status"] == "failed" and setup.stats.failed == 1
    assert setup.stats.stopped is not None and "server is down" in setup.stats.stopped
    assert setup.ticks == [("judge-a", 1, 1)]


def test_after_a_success_an_unreachable_server_does_not_stop_the_model(setup: Setup) -> None:
    setup.post.handle(setup.row(), answer('{"score": 1}'))
    setup.post.handle(setup.row(), Call.failed(ProviderError("cannot connect", retryable=True, unreachable=True)))
    assert setup.stats.stopped is None and setup.stats.failed == 1


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_fatal_status_stops_the_model_even_after_successes(setup: Setup, status: int) -> None:
    setup.post.handle(setup.row(), answer('{"score": 1}'))
    setup.post.handle(setup.row(), Call.failed(ProviderError(f"HTTP {status}", status=status)))
    assert setup.stats.stopped is not None


def test_eight_failures_in_a_row_before_any_success_stop_the_model(setup: Setup) -> None:
    for i in range(8):
        assert setup.stats.stopped is None, i
        setup.post.handle(setup.row(), Call.failed(ProviderError("HTTP 500", retryable=True, status=500)))
    assert setup.stats.stopped is not None and setup.stats.failed == 8
