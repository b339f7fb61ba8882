"""JSON-schema-constrained decoding for local transformers models (`constrained_decoding: llguidance`): one
llguidance matcher per row, masking inside a batched `generate`."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import torch
from transformers import LogitsProcessor

from dialectbias.errors import ProviderError

if TYPE_CHECKING:
    from llguidance._lib import JsonCompileOptions  # the options' TypedDict, declared in llguidance's stub only

log = logging.getLogger("dialectbias.providers._hf")

#: JSON compiled compactly (no free whitespace): small models otherwise wander in whitespace
_JSON_OPTIONS: JsonCompileOptions = {"whitespace_flexible": False, "lenient": True}


class JsonConstraints:
    """llguidance matchers for JSON schemas over one loaded model's tokenizer (compiled grammars cached)."""

    def __init__(self, model_id: str, model: Any, tokenizer: Any, eos_ids: set[int]) -> None:
        self.model_id, self.model, self.tokenizer, self.eos_ids = model_id, model, tokenizer, eos_ids
        self.lltokenizer: Any = None
        self._grammars: dict[str, str] = {}
        self._shifts = torch.arange(32, dtype=torch.int32)

    def matcher(self, schema: dict[str, Any]) -> Any:
        import llguidance
        import llguidance.hf

        if self.lltokenizer is None:
            vocab = self.model.get_output_embeddings().weight.shape[0]
            n_vocab = vocab if vocab >= len(self.tokenizer) else None
            eos = self.tokenizer.eos_token_id
            if eos is None and self.eos_ids:
                eos = min(self.eos_ids)
            self.lltokenizer = llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=n_vocab, eos_token=eos)
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            try:
                grammar = llguidance.LLMatcher.grammar_from_json_schema(schema, defaults=_JSON_OPTIONS)
            except ValueError as exc:
                raise ProviderError(f"model {self.model_id!r}: invalid JSON schema: {exc}") from exc
            self._grammars[key] = grammar
        matcher = llguidance.LLMatcher(self.lltokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ProviderError(f"model {self.model_id!r}: JSON schema not supported: {matcher.get_error()}")
        for warning in matcher.get_grammar_warnings():
            log.warning("model %s: JSON schema: %s", self.model_id, warning)
        return matcher

    def mask(self, logits: torch.Tensor, mask: torch.Tensor) -> None:
        """Set logits of tokens whose bit is 0 in the llguidance bitmask to -inf (in place)."""
        allowed = ((mask.unsqueeze(1) >> self._shifts) & 1).reshape(-1).bool()
        vocab = logits.shape[0]
        if allowed.numel() < vocab:
            allowed = torch.cat([allowed, torch.zeros(vocab - allowed.numel(), dtype=torch.bool)])
        logits.masked_fill_(~allowed[:vocab], float("-inf"))


class GrammarMask(LogitsProcessor):
    """Per-row llguidance matchers inside a batched `generate`: each step feeds a row's last token to
    its matcher and masks the tokens its schema forbids; a finished row may only emit EOS."""

    def __init__(self, constraints: JsonConstraints, matchers: list[Any], prompt_width: int) -> None:
        import llguidance.torch as llt

        self.constraints, self.matchers, self.width = constraints, matchers, prompt_width
        self.fill = llt.fill_next_token_bitmask
        self.bitmask = llt.allocate_token_bitmask(len(matchers), constraints.lltokenizer.vocab_size)
        self.eos = constraints.lltokenizer.eos_token

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        started = input_ids.shape[1] > self.width
        for row, matcher in enumerate(self.matchers):
            if matcher is None:
                continue
            if started and not matcher.is_stopped() and not matcher.is_error():
                matcher.consume_token(int(input_ids[row, -1]))
            if matcher.is_stopped() or matcher.is_error():
                scores[row].fill_(float("-inf"))
                scores[row, self.eos] = 0.0
            else:
                self.fill(matcher, self.bitmask, row)
                self.constraints.mask(scores[row], self.bitmask[row])
        return scores
