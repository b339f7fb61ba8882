"""Prompt token logprobs of a local transformers model (`provider: hf`; task `perplexity`, German paper App. C.2).

One forward pass over each text (right-padded batches: a causal model's real tokens never see the padding that
follows them): the logprob of token i is log_softmax(logits[i − 1])[token i], computed in float32. The text is
tokenised as the model reads raw text, `tokenizer(text, add_special_tokens=True)`: no chat template, the
tokenizer's own BOS where it adds one. The first token has no prefix, so its logprob is None (see
`providers._logprobs`)."""

from __future__ import annotations

from typing import Any

import torch

from dialectbias.providers._logprobs import PromptLogprobs


def score_texts(model: Any, tokenizer: Any, texts: list[str], device: str = "cpu") -> list[PromptLogprobs]:
    """Each text's tokens and their logprobs given their prefix (the first None); an empty text: no tokens."""
    encoded = [list(tokenizer(text, add_special_tokens=True)["input_ids"]) for text in texts]
    width = max((len(ids) for ids in encoded), default=0)
    if width == 0:
        return [PromptLogprobs(tokens=[], logprobs=[]) for _ in texts]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded], device=device)
    mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in encoded], device=device)
    with torch.no_grad():
        logits = model(input_ids=input_ids, attention_mask=mask).logits
    logp = torch.log_softmax(logits[:, :-1, :].float(), dim=-1)
    picked = logp.gather(2, input_ids[:, 1:, None]).squeeze(2).cpu()
    out = []
    for row, ids in enumerate(encoded):
        values: list[float | None] = [None, *(float(v) for v in picked[row, : max(len(ids) - 1, 0)].tolist())]
        out.append(PromptLogprobs(tokens=[str(t) for t in tokenizer.convert_ids_to_tokens(ids)],
                                  logprobs=values[: len(ids)]))
    return out


__all__ = ["score_texts"]
