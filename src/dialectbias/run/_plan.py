"""`dialectbias plan`: what a run would send, before any call — per stage and model: requests, how many need
no call (a stored result or a cached answer), estimated input and output tokens, money and wall time, and
the requests that would not fit the model's context window.

How it is estimated (the numbers are estimates, never calls; each row says what each number rests on,
`PlanRow.basis`: measured, server, tokenizer, estimate or assumed):

- The stages are compiled exactly as `run` compiles them, into a copy of the store (the real store is not
  touched). A later stage is built from the earlier stages' stored results; where an earlier request has no
  result yet, a placeholder answer of its estimated output length stands in, so e.g. the judge prompts of
  answers not generated yet are counted with an answer of the expected size.
- `cached`: requests that need no call (a stored successful result, or a cached answer of an identical
  call). Tokens, cost and seconds count the other requests only.
- `tokens_in`: a real tokenizer with its chat template where there is one — the model's own for local
  models (`CAPABILITIES.local`: hf, vllm; the folder or GGUF file of `model`), the config's `tokenizer`
  where the provider has that key; otherwise (and when it cannot be loaded) `estimate_tokens`, the
  per-script characters-per-token estimate the rate limiter uses too (issue 24: Bengali counted as
  characters / 4 was 8× too low), plus the chat template's tokens, as the run's context-fit check counts.
- `tokens_out`: the mean output tokens of this model's earlier answers in this stage when the store has
  any (measured); else the request's `max_tokens` (an upper bound), else `DEFAULT_MAX_TOKENS`.
- `cost`: the model's `price_in_per_mtok` / `price_out_per_mtok` × tokens; null when it has no price.
- `seconds` (issue 24.4), in order of trust:
  measured — the store holds earlier calls of the model in this stage: their mean latency L and how many
  were really in flight at once, p (`measured_parallelism`, from the calls' start and end times), so
  seconds = requests × L / p: the throughput the server really gave (a server with fewer slots than
  `max_concurrency` queues calls, which shows as a longer L at the same p). A lower `max_concurrency`
  now (c < p) scales it to c / p.
  server — no measurement, the server says its parallel slots S: ceil(requests / min(c, S)) × seconds per
  request, seconds per request = output tokens ÷ `ASSUMED_TOKENS_PER_S`.
  assumed — neither: the configured slots c (`max_concurrency`, or `batch_size` for engines that batch,
  `CAPABILITIES.batched`; × `replicas` on `executor: ray`) at `ASSUMED_TOKENS_PER_S`.
- context (issue 24.2): the model's context window as its server reports it (`ask_server`: cheap GETs,
  never a model call), else the config's `max_model_len`, else its tokenizer's `model_max_length`. A request whose input
  tokens plus `max_tokens` exceed it is counted in `too_long` and named in `warnings` with the largest
  prompt and what to change: "do not fit (counted)" when a tokenizer counted it (`run` refuses it), "may not fit
  (estimated)" when the per-script estimate did, an upper bound: `run` then has the server count the request
  (vLLM, llama.cpp) or sends it, refusing only what cannot fit (`ModelAPI.check_fit`).
"""


from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.config import Experiment
from dialectbias.providers import PROMPT_LOGPROBS, ChatRequest, ChatResponse, ModelConfig
from dialectbias.providers._base import CHAT_TOKENS_PER_MESSAGE, CHAT_TOKENS_PER_REQUEST, estimate_tokens
from dialectbias.run._plan_server import ServerFacts, ask_server
from dialectbias.run._postcall import chat_request, result_row
from dialectbias.run._runner import _compile, _save_items
from dialectbias.run._stage import StagedTask
from dialectbias.run._summary import StageStats
from dialectbias.store import Store, measured_means, measured_parallelism

DEFAULT_MAX_TOKENS = 256
#: tokens per second of one request stream, when the store has no measured latency for the model
ASSUMED_TOKENS_PER_S = 50.0
PLACEHOLDER_WORD = "lorem "  # one token per word in common BPE vocabularies
PAGE = 2000
#: a tokenizer's `model_max_length` above this is transformers' "no limit" sentinel, not a context window
NO_LIMIT = 10_000_000


@dataclass
class PlanRow:
    """One stage × model of the plan; `as_json` is the `plan --json` contract: the first eight keys as
    before issue 24, then `basis`, `slots`, `context_window`, `too_long`, `largest_prompt`, `warnings`."""

    stage: str
    model_id: str
    requests: int
    cached: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    seconds: float
    #: what each estimate rests on, one word each: tokens_in (tokenizer | estimate), tokens_out (measured |
    #: max_tokens), seconds (measured | server | assumed), context (config | tokenizer | server | unknown)
    basis: dict[str, str] = field(default_factory=dict)
    #: parallel calls the seconds assume (measured: the mean in flight, a fraction)
    slots: float = 1.0
    context_window: int | None = None
    #: requests whose input tokens + max_tokens exceed the context window
    too_long: int = 0
    #: input tokens of the largest prompt still to send
    largest_prompt: int = 0
    warnings: list[str] = field(default_factory=list)
    #: how each number was obtained, in words (printed by `plan`, not in the JSON contract)
    notes: dict[str, str] = field(default_factory=dict)
    #: the server the model is on (models on one server share it; not in the JSON contract)
    server: str = ""

    def as_json(self) -> dict[str, Any]:
        row = asdict(self)
        row.pop("notes")
        row.pop("server")
        return row


class TokenCounter:
    """Input tokens of one request for one model: a real tokenizer (a local model's own, or the config's
    `tokenizer`; `providers._tokenizer`, the one the run's context-fit check counts with) when there is
    one, else `estimate_tokens` (characters per token by script)."""

    def __init__(self, config: ModelConfig, tokenizer: bool = True) -> None:
        self.config = config
        self.tokenizer: Any = None
        self.basis, self.note = "estimate", "an estimate from characters per token by script"
        source = getattr(config, "tokenizer", None)
        if source is None and config.CAPABILITIES.local:
            gguf = getattr(config, "gguf_file", None)
            source = str(Path(config.model).expanduser() / gguf) if gguf else config.model
        if tokenizer and source:
            self._load_tokenizer(str(source))

    @property
    def context_window(self) -> int | None:
        """The tokenizer's `model_max_length` when it is a real limit."""
        length = getattr(self.tokenizer, "model_max_length", None)
        return int(length) if isinstance(length, int) and 0 < length < NO_LIMIT else None

    def _load_tokenizer(self, source: str) -> None:
        from dialectbias.errors import ConfigError
        from dialectbias.providers._tokenizer import load_tokenizer

        try:
            self.tokenizer = load_tokenizer(source)
            self.basis, self.note = "tokenizer", f"the tokenizer of {source}"
        except ConfigError as exc:
            self.note += f" ({exc})"

    def count(self, request: ChatRequest) -> int:
        if self.tokenizer is not None:
            from dialectbias.providers._tokenizer import chat_tokens

            try:
                images = estimate_tokens(request.model_copy(update={"messages": [
                    {**m, "content": [p for p in m["content"] if p["type"] == "image"]} for m in request.messages
                    if not isinstance(m["content"], str)]}))
                return chat_tokens(self.tokenizer, request) + images
            except Exception:  # a tokenizer that fails on this text: the estimate, as without one
                pass
        # as the run's context-fit check counts without a tokenizer (`ModelAPI.input_tokens`): the chat
        # template's tokens too
        return estimate_tokens(request) + CHAT_TOKENS_PER_REQUEST + CHAT_TOKENS_PER_MESSAGE * len(request.messages)


@dataclass
class ModelFacts:
    """What the plan knows of one model before any call: its token counter and what its server said."""

    counter: TokenCounter
    server: ServerFacts


def configured_slots(exp: Experiment, config: ModelConfig) -> int:
    """Parallel calls the config allows: `batch_size` for engines that batch, else `max_concurrency`; ×
    `replicas` on `executor: ray`."""
    slots = int(getattr(config, "batch_size", 0) or 0) if config.CAPABILITIES.batched else 0
    slots = slots or config.max_concurrency
    return slots * (config.replicas if exp.executor == "ray" else 1)


def make_plan(exp: Experiment, task: StagedTask, *, tokenizers: bool = True,
              ask: Callable[[ModelConfig], ServerFacts] | None = ask_server) -> list[PlanRow]:
    """The plan of every stage × model (see the module docstring); no model is called, the store is read.
    `tokenizers=False`: input tokens by characters only (no local tokenizer is loaded), e.g. to count
    what is left to send. `ask`: how a served model's server is asked for its context window and slots
    (cheap GETs); None asks nothing."""
    rows: list[PlanRow] = []
    with tempfile.TemporaryDirectory(prefix="dialectbias-plan-") as tmp:
        store = Store.open_copy(exp.store_path, Path(tmp) / "plan.sqlite")
        try:
            _save_items(exp, task, store)
            stages = task.stages()
            store.retire_current((stage.name, m.id) for stage in stages for m in stage.models)
            facts: dict[str, ModelFacts] = {}
            for i, stage in enumerate(stages):
                stats = {m.id: StageStats(stage=stage.name, model_id=m.id) for m in stage.models}
                _compile(exp, task, stage, [s.name for s in stages[:i]], store, stats)
                pending = store.pending_counts(stage.name)  # one sweep for the stage, not one per model
                for config in stage.models:
                    known = facts.get(config.id)
                    if known is None:
                        known = facts[config.id] = ModelFacts(TokenCounter(config, tokenizers),
                                                              ask(config) if ask else ServerFacts())
                    total = stats[config.id].total
                    rows.append(_plan_model(exp, store, stage.name, config, total,
                                            total - pending.get(config.id, 0), known))
        finally:
            store.close()
    return rows


@dataclass
class _Fit:
    """Requests that do not fit the context window, and the largest prompt."""

    window: int | None
    too_long: int = 0
    largest: int = 0
    largest_max_tokens: int = 0

    def add(self, prompt: int, max_tokens: int) -> None:
        if prompt > self.largest:
            self.largest, self.largest_max_tokens = prompt, max_tokens
        if self.window is not None and prompt + max_tokens > self.window:
            self.too_long += 1


def _context(config: ModelConfig, facts: ModelFacts) -> tuple[int | None, str]:
    """The model's context window and where it comes from: an `openai` model's `context_window` (set for a server
    that does not report one; the run checks against it too), else what its server serves, else the config's
    `max_model_len` (what a local engine reserves), else the tokenizer's `model_max_length`."""
    for window, basis in ((getattr(config, "context_window", None), "config"), (facts.server.context_window, "server"),
                          (getattr(config, "max_model_len", None), "config"),
                          (facts.counter.context_window, "tokenizer")):
        if isinstance(window, int):
            return window, basis
    return None, "unknown"


def _plan_model(exp: Experiment, store: Store, stage: str, config: ModelConfig, total: int, done: int,
                facts: ModelFacts) -> PlanRow:
    """The plan of one model's stage: `total` requests, `done` of them already answered."""
    mean_out, latency = measured_means(store, stage, config.id)  # of fresh answers, if any
    cached = done
    window, context_basis = _context(config, facts)
    fit = _Fit(window)
    tokens_in = tokens_out = to_send = 0
    placeholders: list[tuple[str, dict[str, Any]]] = []
    after = 0
    while page := store.pending_requests(stage, config.id, after=after, limit=PAGE):
        after = page[-1]["rid"]
        for row in page:
            params = json.loads(row["params"])
            scoring = bool(params.get(PROMPT_LOGPROBS))  # a prompt-scoring request generates nothing
            given = 0 if scoring else int(params.get("max_tokens") or params.get("max_new_tokens") or 0)
            limit = 0 if scoring else given or DEFAULT_MAX_TOKENS
            out = round(mean_out) if mean_out is not None and limit else limit
            if row["cached_output"] is not None:
                cached += 1
                text = row["cached_output"]
            else:
                to_send += 1
                prompt = facts.counter.count(chat_request(row, store))
                fit.add(prompt, given)  # as the run checks it: the max_tokens sent, none when none is
                tokens_in += prompt
                tokens_out += out
                text = (PLACEHOLDER_WORD * max(1, out)).strip()
            placeholders.append(("results", result_row(row["request_id"], "ok", ChatResponse(output=text))))
    store.write(placeholders)  # later stages are built from these (in the plan's copy of the store)
    seconds, slots, seconds_basis, seconds_note = _seconds(exp, store, stage, config, facts, to_send,
                                                            tokens_out, latency)
    plan = PlanRow(stage=stage, model_id=config.id, requests=total, cached=cached, tokens_in=tokens_in,
                  tokens_out=tokens_out, cost=config.cost(tokens_in, tokens_out), seconds=round(seconds, 1),
                  basis={"tokens_in": facts.counter.basis,
                         "tokens_out": "measured" if mean_out is not None else "max_tokens",
                         "seconds": seconds_basis, "context": context_basis},
                  slots=round(slots, 2), context_window=window, too_long=fit.too_long, largest_prompt=fit.largest,
                  notes={"tokens_in": facts.counter.note,
                         "tokens_out": "measured mean" if mean_out is not None else "max_tokens (upper bound)",
                         "seconds": seconds_note},
                  server=str(getattr(config, "base_url", "") or config.id))
    if fit.too_long:
        plan.warnings.append(_context_warning(stage, config, fit, to_send, context_basis,
                                              counted=facts.counter.basis == "tokenizer"))
    return plan


def _seconds(exp: Experiment, store: Store, stage: str, config: ModelConfig, facts: ModelFacts, to_send: int,
             tokens_out: int, latency: float | None) -> tuple[float, float, str, str]:
    """(seconds, parallel slots, basis, note) of the requests to send (see the module docstring)."""
    configured = configured_slots(exp, config)
    in_flight = measured_parallelism(store, stage, config.id) if latency is not None else None
    if latency is not None and in_flight is not None:
        slots = min(float(configured), in_flight)
        note = f"measured: {latency:.2f} s a call, {in_flight:.1f} in flight"
        if slots < in_flight:
            note += f" (max_concurrency now {configured})"
        return to_send * latency / slots, slots, "measured", note
    per_request = (tokens_out / max(to_send, 1)) / ASSUMED_TOKENS_PER_S
    speed = f"assumed {ASSUMED_TOKENS_PER_S:g} tokens/s"
    if facts.server.slots is not None:
        slots = min(configured, facts.server.slots)
        basis, note = "server", f"{speed}, {slots} parallel (the server's {facts.server.slots} slots)"
    else:
        slots = configured
        basis, note = "assumed", f"{speed}, {slots} parallel (assumed: the configured slots)"
    return (math.ceil(to_send / slots) * per_request if to_send else 0.0), float(slots), basis, note


def _context_warning(stage: str, config: ModelConfig, fit: _Fit, to_send: int, basis: str, counted: bool) -> str:
    """The warning for requests over the context window: counted with a tokenizer they "do not fit" (the run
    refuses them); estimated they "may not fit" (the estimate is an upper bound; the run refuses only on the
    server's count or when they cannot fit at any tokenizer's density, `ModelAPI.check_fit`)."""
    where = {"config": "its config", "tokenizer": "its tokenizer", "server": "its server"}.get(basis, basis)
    verdict, prompt = ("do not fit (counted)", "") if counted else ("may not fit (estimated)", "at most ")
    after = "" if counted else (" The run has the server count them (vLLM, llama.cpp) or sends them; name a "
                                "`tokenizer:` to count them here.")
    return (f"{stage} · {config.id}: {fit.too_long:,} of {to_send:,} requests {verdict} in the context window of "
            f"{fit.window:,} tokens ({where}); the largest prompt is {prompt}{fit.largest:,} tokens + max_tokens "
            f"{fit.largest_max_tokens:,}.{after} Lower max_tokens, shorten the prompt (template, answer length), or "
            "serve the model with a longer context (llama.cpp --n_ctx, vLLM --max-model-len).")


def total_cost(rows: list[PlanRow]) -> float | None:
    costs = [r.cost for r in rows if r.cost is not None]
    return sum(costs) if costs else None


def total_seconds(rows: list[PlanRow]) -> float:
    """Wall time of the stages run one after the other. Within a stage the models run at once: measured
    rows already hold the contention they met, so the stage takes the longest of them; models on one
    server otherwise share its slots, so their seconds add up, and separate servers overlap."""
    total = 0.0
    for stage in dict.fromkeys(r.stage for r in rows):
        by_server: dict[str, float] = {}
        measured = 0.0
        for r in (r for r in rows if r.stage == stage):
            if r.basis.get("seconds") == "measured":
                measured = max(measured, r.seconds)
            else:
                by_server[r.server] = by_server.get(r.server, 0.0) + r.seconds
        total += max([measured, *by_server.values()])
    return total
