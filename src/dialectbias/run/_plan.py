"""`dialectbias plan`: what a run would send, before any call — per stage and model: requests, how many need
no call (a stored result or a cached answer), estimated input and output tokens, money and wall time.

How it is estimated (the numbers are estimates, never calls):

- The stages are compiled exactly as `run` compiles them, into a copy of the store (the real store is not
  touched). A later stage is built from the earlier stages' stored results; where an earlier request has no
  result yet, a placeholder answer of its estimated output length stands in, so e.g. the judge prompts of
  answers not generated yet are counted with an answer of the expected size.
- `cached`: requests that need no call (a stored successful result, or a cached answer of an identical
  call). Tokens, cost and seconds count the other requests only.
- `tokens_in`: the model's own tokenizer with its chat template for local models (`CAPABILITIES.local`: hf,
  vllm; the folder or GGUF file of `model`); otherwise (and when the tokenizer cannot be loaded) text
  characters / 4 plus the image tokens of each image (`CHARS_PER_TOKEN`; OpenAI's rule of thumb, the rate
  limiter's estimate too).
- `tokens_out`: the mean output tokens of this model's earlier answers in this stage when the store has
  any (measured); else the request's `max_tokens` (an upper bound), else `DEFAULT_MAX_TOKENS`.
- `cost`: the model's `price_in_per_mtok` / `price_out_per_mtok` × tokens; null when it has no price.
- `seconds`: requests ÷ parallel slots × seconds per request. Slots: `max_concurrency` (HTTP models) or
  `batch_size` (engines that batch: `CAPABILITIES.batched`), × `replicas` on `executor: ray`. Seconds per
  request: the mean latency of the model's earlier calls in the store (measured throughput), else output tokens ÷
  `ASSUMED_TOKENS_PER_S` (a configured-concurrency estimate; no measurement yet).
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.config import Experiment
from dialectbias.providers import PROMPT_LOGPROBS, ChatRequest, ChatResponse, ModelConfig
from dialectbias.providers._base import estimate_tokens
from dialectbias.run._postcall import chat_request, result_row
from dialectbias.run._runner import _compile, _save_items
from dialectbias.run._stage import StagedTask
from dialectbias.run._summary import StageStats
from dialectbias.store import Store, measured_means

CHARS_PER_TOKEN = 4
DEFAULT_MAX_TOKENS = 256
#: tokens per second of one request stream, when the store has no measured latency for the model
ASSUMED_TOKENS_PER_S = 50.0
PLACEHOLDER_WORD = "lorem "  # one token per word in common BPE vocabularies
PAGE = 2000


@dataclass
class PlanRow:
    """One stage × model of the plan; `as_json` is the `plan --json` contract."""

    stage: str
    model_id: str
    requests: int
    cached: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    seconds: float
    #: how the numbers were obtained (printed by `plan`, not in the JSON contract)
    basis: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        row = asdict(self)
        row.pop("basis")
        return row


class TokenCounter:
    """Input tokens of one request for one model: its tokenizer when local, else the character ratio."""

    def __init__(self, config: ModelConfig, tokenizer: bool = True) -> None:
        self.config = config
        self.tokenizer: Any = None
        self.basis = f"characters/{CHARS_PER_TOKEN}"
        if tokenizer and config.CAPABILITIES.local:
            self._load_tokenizer()

    def _load_tokenizer(self) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError:
            self.basis += " (no transformers for the model's tokenizer)"
            return
        path = Path(self.config.model).expanduser()
        gguf = getattr(self.config, "gguf_file", None)
        if gguf is None and path.is_file() and path.suffix == ".gguf":
            path, gguf = path.parent, path.name
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(path), **({"gguf_file": gguf} if gguf else {}))
            self.basis = "the model's tokenizer"
        except Exception as exc:
            self.basis += f" (tokenizer not loaded: {type(exc).__name__})"

    def count(self, request: ChatRequest) -> int:
        if self.tokenizer is not None:
            from dialectbias.data import message_text

            messages = [{"role": m["role"], "content": message_text(m["content"])} for m in request.messages]
            try:
                if getattr(self.tokenizer, "chat_template", None):
                    ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
                    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
                    return len(ids)
                return len(self.tokenizer("".join(f"{m['role']}: {m['content']}\n" for m in messages))["input_ids"])
            except Exception:
                pass
        return estimate_tokens(request)


def _slots(exp: Experiment, config: ModelConfig) -> int:
    slots = int(getattr(config, "batch_size", 0) or 0) if config.CAPABILITIES.batched else 0
    slots = slots or config.max_concurrency
    return slots * (config.replicas if exp.executor == "ray" else 1)


def make_plan(exp: Experiment, task: StagedTask, *, tokenizers: bool = True) -> list[PlanRow]:
    """The plan of every stage × model (see the module docstring); no model is called, the store is read.
    `tokenizers=False`: input tokens by characters only (no local tokenizer is loaded), e.g. to count
    what is left to send."""
    rows: list[PlanRow] = []
    with tempfile.TemporaryDirectory(prefix="dialectbias-plan-") as tmp:
        store = Store.open_copy(exp.store_path, Path(tmp) / "plan.sqlite")
        try:
            _save_items(exp, task, store)
            stages = task.stages()
            store.retire_current((stage.name, m.id) for stage in stages for m in stage.models)
            counters: dict[str, TokenCounter] = {}
            for i, stage in enumerate(stages):
                stats = {m.id: StageStats(stage=stage.name, model_id=m.id) for m in stage.models}
                _compile(exp, task, stage, [s.name for s in stages[:i]], store, stats)
                for config in stage.models:
                    counter = counters.setdefault(config.id, TokenCounter(config, tokenizers))
                    rows.append(_plan_model(exp, store, stage.name, config, stats[config.id].total, counter))
        finally:
            store.close()
    return rows


def _plan_model(exp: Experiment, store: Store, stage: str, config: ModelConfig, total: int,
                counter: TokenCounter) -> PlanRow:
    mean_out, latency = measured_means(store, stage, config.id)  # of fresh answers, if any
    cached = total - store.count_pending(stage, config.id)
    tokens_in = tokens_out = to_send = 0
    placeholders: list[tuple[str, dict[str, Any]]] = []
    after = ""
    while page := store.pending_requests(stage, config.id, after=after, limit=PAGE):
        after = page[-1]["request_id"]
        for row in page:
            params = json.loads(row["params"])
            out = 0 if params.get(PROMPT_LOGPROBS) else round(mean_out) if mean_out is not None else int(
                params.get("max_tokens") or params.get("max_new_tokens") or DEFAULT_MAX_TOKENS)  # scoring: none
            if row["cached_output"] is not None:
                cached += 1
                text = row["cached_output"]
            else:
                to_send += 1
                tokens_in += counter.count(chat_request(row, store))
                tokens_out += out
                text = (PLACEHOLDER_WORD * max(1, out)).strip()
            placeholders.append(("results", result_row(row["request_id"], "ok", ChatResponse(output=text))))
    store.write(placeholders)  # later stages are built from these (in the plan's copy of the store)
    per_request = latency if latency is not None else (tokens_out / max(to_send, 1)) / ASSUMED_TOKENS_PER_S
    slots = _slots(exp, config)
    seconds = math.ceil(to_send / slots) * per_request if to_send else 0.0
    basis = {"tokens_in": counter.basis,
             "tokens_out": "measured mean" if mean_out is not None else "max_tokens (upper bound)",
             "seconds": (f"measured latency {latency:.2f} s" if latency is not None else
                         f"assumed {ASSUMED_TOKENS_PER_S:g} tokens/s") + f", {slots} parallel"}
    return PlanRow(stage=stage, model_id=config.id, requests=total, cached=cached, tokens_in=tokens_in,
                   tokens_out=tokens_out, cost=config.cost(tokens_in, tokens_out), seconds=round(seconds, 1),
                   basis=basis)


def total_cost(rows: list[PlanRow]) -> float | None:
    costs = [r.cost for r in rows if r.cost is not None]
    return sum(costs) if costs else None
