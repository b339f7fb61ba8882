"""What happens after a call, whatever executor made it (SPEC §5): validate the answer against the stage's
structured-output model, repair, one re-ask, finalize into records, all written in one transaction.

A synchronous state machine, so an asyncio executor (one coroutine per request) and a batch executor
(results streamed back in bulk) share it: `handle(row, call)` gives `Done(writes)` or `NeedsReask`; the
executor sends the re-ask (a batch executor collects them into a second batch) and passes its result to
`handle_reask(pending, call)`, which gives `Done`. Every stats counter and progress tick is updated here.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dialectbias.errors import ProviderError
from dialectbias.judges._structured import StructuredParse, parse_structured, reask_messages
from dialectbias.providers import ChatRequest, ChatResponse, ModelConfig
from dialectbias.run._specs import RequestSpec, retry_cache_key
from dialectbias.run._stage import Outcome, Stage, Write
from dialectbias.run._summary import StageStats, context_note, cut_note, invalid_values_note
from dialectbias.store import REASK_SUFFIX, Store

#: a model that fails this many requests in a row before any success is stopped (server down, wrong URL)
STOP_AFTER_CONSECUTIVE = 8
#: HTTP statuses that no retry or later request can fix: wrong key, no access, wrong URL or model
FATAL_STATUS = {401, 403, 404}

ProgressHook = Callable[[str, int, int], None]  # (model_id, advance, errors)


@dataclass
class Call:
    """What sending one request gave: a response (fresh, or from the cache) or the error that ended its
    retries; `retries` = the retries it took."""

    response: ChatResponse | None = None
    cached: bool = False
    retries: int = 0
    error: ProviderError | None = None

    @classmethod
    def from_cache(cls, row: Mapping[str, Any] | sqlite3.Row) -> Call:
        """From a `cache` row (`output, finish_reason, tokens_in, tokens_out`)."""
        return cls(ChatResponse(output=row["output"], finish_reason=row["finish_reason"],
                                tokens_in=row["tokens_in"], tokens_out=row["tokens_out"]), cached=True)

    @classmethod
    def failed(cls, exc: ProviderError) -> Call:
        return cls(error=exc, retries=getattr(exc, "attempts", 0))


def cached_call(row: sqlite3.Row) -> Call | None:
    """The cached answer a `Store.pending_requests` row carries, if any."""
    if row["cached_output"] is None:
        return None
    return Call.from_cache({"output": row["cached_output"], "finish_reason": row["cached_finish"],
                            "tokens_in": row["cached_in"], "tokens_out": row["cached_out"]})


def chat_request(row: sqlite3.Row, store: Store) -> ChatRequest:
    """The call a stored request row describes, its content references resolved from the store (built
    from a validated row: no re-validation)."""
    schema = json.loads(row["json_schema"]) if row["json_schema"] else None
    return ChatRequest.model_construct(messages=store.resolve_messages(row["messages"]),
                                       params=json.loads(row["params"]), json_schema=schema)


@dataclass
class Done:
    """The request is finished: its rows (result, cache, re-ask, derived records), to write in one
    transaction (request rows first: a re-ask's result refers to its request row)."""

    writes: list[Write]


@dataclass
class NeedsReask:
    """The answer failed validation: send `request` (its row is `row`, already in the writes), then call
    `PostCall.handle_reask`. `cached` is the re-ask's cached answer, when an earlier run already sent it."""

    first: sqlite3.Row
    row: dict[str, Any]
    request: ChatRequest
    cached: Call | None
    outcome: Outcome
    first_call: Call
    writes: list[Write] = field(default_factory=list)


class PostCall:
    """After-call handling for one stage × model: stats, the model's health (stop when it is down), records."""

    def __init__(self, stage: Stage, config: ModelConfig, store: Store, stats: StageStats,
                 progress: ProgressHook = lambda *_: None) -> None:
        self.stage, self.config, self.store, self.stats, self.progress = stage, config, store, stats, progress
        self.successes = 0
        self.consecutive_failures = 0

    # -- the state machine -------------------------------------------------------------------
    def handle(self, row: sqlite3.Row, call: Call) -> Done | NeedsReask:
        """The first answer (or error) of a pending request."""
        if call.error is not None:
            return self._failed(row, call)
        assert call.response is not None
        writes = self._account(row["cache_key"], call)
        outcome = Outcome(output=call.response.output, source_request_id=row["request_id"])
        validator = self.stage.validator(row["model_id"])
        if validator is not None:
            outcome.parsed = parse_structured(call.response.output, validator)
            if outcome.parsed.status == "failed":
                return self._reask(row, call, outcome, writes)
        return self._finish(row, call, outcome, writes)

    def handle_reask(self, pending: NeedsReask, call: Call) -> Done:
        """The re-ask's answer (or error): the outcome holds the re-ask's answer and id when there is one."""
        outcome, writes = pending.outcome, pending.writes
        error = outcome.parsed.error if outcome.parsed else None
        reask_id = pending.row["request_id"]
        if call.error is not None:
            self.stats.retries += call.retries
            self.stats.note(f"re-ask failed: {call.error}")
            failure = outcome.parsed.failure if outcome.parsed else None  # the first answer's
            outcome.parsed = StructuredParse(status="failed", error=f"{error}; re-ask failed: {call.error}",
                                             failure=failure)
            writes.append(("results", result_row(reask_id, "failed", None, error=str(call.error),
                                                 retries=call.retries)))
        else:
            assert call.response is not None
            writes += self._account(pending.row["cache_key"], call)
            validator = self.stage.validator(pending.first["model_id"])
            assert validator is not None
            parsed = parse_structured(call.response.output, validator)
            if parsed.status != "failed":
                parsed.status = "reasked"
            else:
                parsed.error = f"{error}; after re-ask: {parsed.error}"
            outcome.output, outcome.parsed, outcome.source_request_id = call.response.output, parsed, reask_id
            writes.append(("results", result_row(reask_id, "ok", call.response, cache_hit=call.cached,
                                                 retries=call.retries)))
        return self._finish(pending.first, pending.first_call, outcome, writes)

    # -- steps -------------------------------------------------------------------------------
    def _account(self, cache_key: str, call: Call) -> list[Write]:
        """Count a received answer; a fresh one is cached (the returned write)."""
        response = call.response
        assert response is not None
        self.stats.retries += call.retries
        if call.cached:
            self.stats.cached += 1
            return []
        self.stats.calls += 1
        self.stats.tokens_in += response.tokens_in
        self.stats.tokens_out += response.tokens_out
        return [("cache", {"cache_key": cache_key, "output": response.output,
                           "finish_reason": response.finish_reason, "tokens_in": response.tokens_in,
                           "tokens_out": response.tokens_out, "latency_s": response.latency_s,
                           "created_at": time.time()})]

    def _failed(self, row: sqlite3.Row, call: Call) -> Done:
        exc = call.error
        assert exc is not None
        self.stats.retries += call.retries
        self.stats.failed += 1
        if exc.context:  # the prompt does not fit the model's context: says nothing of the server's health
            self.stats.too_long += 1
            self.stats.note(context_note(self.config.id))
            self.progress(self.config.id, 1, 1)
            return Done([("results", result_row(row["request_id"], "failed", None, error=str(exc),
                                                retries=call.retries))])
        self.consecutive_failures += 1
        if self.successes == 0 and exc.unreachable:
            self.stats.stopped = self.stats.stopped or (
                f"{exc}: the server is down or the URL is wrong (no request got through; start it or fix the "
                "URL and run again)")
        elif exc.fatal or exc.status in FATAL_STATUS or (
                self.successes == 0 and self.consecutive_failures >= STOP_AFTER_CONSECUTIVE):
            self.stats.stopped = self.stats.stopped or f"{exc} (fix and run again)"
        if not (exc.fatal and (self.stats.stopped or "").startswith(str(exc))):
            self.stats.note(str(exc))  # a fatal error is named once: as the reason the model stopped
        self.progress(self.config.id, 1, 1)
        return Done([("results", result_row(row["request_id"], "failed", None, error=str(exc),
                                            retries=call.retries))])

    def _reask(self, row: sqlite3.Row, call: Call, outcome: Outcome, writes: list[Write]) -> NeedsReask:
        """One re-ask with the parse error, stored as a request of its own: stage "<stage>:reask", refs =
        [the first request], meta = the first's plus `reask_of`, with its own result row. Its rows land in
        the first request's transaction; it is in no compiled request set, so it is never pending, and
        its output is cached, so it is never sent twice."""
        self.stats.reasked += 1
        first_id, error = row["request_id"], outcome.parsed.error if outcome.parsed else None
        request = chat_request(row, self.store)
        spec = RequestSpec(
            stage=f"{self.stage.name}{REASK_SUFFIX}", model=self.config, item_id=row["item_id"], variant=row["variant"],
            template=row["template"], messages=reask_messages(request.messages, outcome.output, error or "invalid"),
            params=request.params, json_schema=request.json_schema, refs=[first_id],
            meta={**json.loads(row["meta"]), "reask_of": first_id})
        reask = spec.to_row()
        if attempt := json.loads(row["meta"]).get("attempt"):  # a retried request's re-ask is asked afresh too
            reask["cache_key"] = retry_cache_key(reask["cache_key"], attempt)
        cached = self.store.cached(reask["cache_key"])
        return NeedsReask(first=row, row=reask, request=spec.chat_request(),
                          cached=None if cached is None else Call.from_cache(cached), outcome=outcome,
                          first_call=call, writes=[*writes, ("requests", reask)])

    def _finish(self, row: sqlite3.Row, call: Call, outcome: Outcome, writes: list[Write]) -> Done:
        if outcome.parsed is not None:
            self.stats.repaired += outcome.parsed.status == "repaired"
            failed = outcome.parsed.status == "failed"
            if failed and outcome.parsed.failure == "values":
                self.stats.invalid_values += 1
                self.stats.note(invalid_values_note(self.config.id))
            if failed and outcome.parsed.failure != "values":
                self.stats.parse_failed += 1
                if call.response is not None and call.response.finish_reason == "length":
                    self.stats.note(cut_note(self.config.id))
        self.successes += 1
        self.consecutive_failures = 0
        self.progress(self.config.id, 1, 0)
        writes.append(("results", result_row(row["request_id"], "ok", call.response, cache_hit=call.cached,
                                             retries=call.retries)))
        if self.stage.finalize is not None:
            writes += self.stage.finalize(self.store, row, outcome)
        return Done(writes)


def result_row(request_id: str, status: str, response: ChatResponse | None, *, cache_hit: bool = False,
               retries: int = 0, error: str | None = None) -> dict[str, Any]:
    """A `results` row."""
    return {"request_id": request_id, "status": status,
            "output": response.output if response else None,
            "finish_reason": response.finish_reason if response else None,
            "tokens_in": response.tokens_in if response else 0,
            "tokens_out": response.tokens_out if response else 0,
            "latency_s": response.latency_s if response else 0.0,
            "cache_hit": int(cache_hit), "retries": retries, "error": error, "completed_at": time.time()}

