"""Training examples of the LoRA dialect generator (BanglaVerse App. C.1): the corpus's standard → dialect
pairs as instruction examples, optional dialect-conversation turns, the grouped held-out split and the
tokenised examples with the prompt masked out of the loss. No torch: tokenizers are duck-typed."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dialectbias.data import Corpus, read_csv_rows, read_jsonl
from dialectbias.errors import DataError
from dialectbias.text import match_key
from dialectbias.train._instruction import (
    conversation_prompt,
    dialect_display,
    dialect_language,
    instruction_prompt,
    target_text,
)

#: label of prompt tokens: ignored by the loss (PyTorch's cross-entropy `ignore_index`)
IGNORE = -100


@dataclass(frozen=True)
class Example:
    """One training example: `prompt` (masked) then `target` (learnt). `group` keys the held-out split: the
    normalised standard sentence (or user turn), so its versions in every dialect land on the same side."""

    id: str
    kind: Literal["translate", "conversation"]
    dialect: str
    prompt: str
    target: str
    group: str


@dataclass
class Selection:
    """The examples kept and every row left out, by reason."""

    examples: list[Example] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    per_dialect: Counter[str] = field(default_factory=Counter)


def _group(text: str) -> str:
    return hashlib.sha256(match_key(text).encode("utf-8")).hexdigest()[:16]


def pair_examples(corpus: Corpus, *, dialects: Sequence[str] | None = None, splits: Sequence[str] | None = None,
                  extra: dict[str, list[str]] | None = None) -> Selection:
    """Task 1 examples from the corpus's pairs; pairs of other dialects or splits, and pairs whose dialect text
    equals the standard text (nothing to learn), are counted, never silently dropped."""
    wanted = {d.lower() for d in dialects} if dialects else None
    wanted_splits = {s.lower() for s in splits} if splits else None
    out = Selection()
    languages: dict[str, str] = {}
    for pair in corpus.pairs:
        if wanted is not None and pair.dialect not in wanted:
            out.skipped["other dialect (--dialect)"] += 1
            continue
        if wanted_splits is not None and (pair.split or "").lower() not in wanted_splits:
            out.skipped["other split (--split)"] += 1
            continue
        if pair.standard_norm == pair.dialect_norm:
            out.skipped["dialect text = standard text"] += 1
            continue
        if pair.dialect not in languages:
            try:
                languages[pair.dialect] = dialect_language(pair.dialect, extra)
            except ValueError as exc:
                raise DataError(f"{corpus.path}: {exc}") from None
        out.examples.append(Example(
            id=pair.id, kind="translate", dialect=pair.dialect,
            prompt=instruction_prompt(languages[pair.dialect], dialect_display(pair.dialect), pair.standard),
            target=target_text(pair.dialect_text), group=_group(pair.standard)))
        out.per_dialect[pair.dialect] += 1
    return out


def conversation_examples(path: Path) -> Selection:
    """Task 2 examples from a JSONL or CSV file of dialect-only turns: columns `user` and `assistant` (both in
    dialect), optional `dialect` and `id`. Rows with an empty side are counted and skipped."""
    out = Selection()
    for line, row in _rows(path):
        user, assistant = str(row.get("user") or "").strip(), str(row.get("assistant") or "").strip()
        if not user or not assistant:
            out.skipped["conversation row with an empty user or assistant turn"] += 1
            continue
        dialect = str(row.get("dialect") or "").strip().lower() or "unspecified"
        rid = str(row.get("id") or f"{path.name}:{line}")
        out.examples.append(Example(id=rid, kind="conversation", dialect=dialect, prompt=conversation_prompt(user),
                                    target=target_text(assistant), group=_group(user)))
        out.per_dialect[f"conversation:{dialect}"] += 1
    return out


def _rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise DataError(f"{path}: conversation file not found")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        for line, row in read_jsonl(path):  # every row is checked, as the CSV file's header is
            missing = sorted({"user", "assistant"} - set(row))
            if missing:
                raise DataError(f"{path}:{line}: missing key(s) {', '.join(missing)} (a row is {{\"user\": …, "
                                f"\"assistant\": …}}, optional dialect, id); found: {', '.join(row) or '(none)'}")
            for key, kinds in (("user", str), ("assistant", str), ("dialect", str), ("id", str | int)):
                if row.get(key) is not None and not isinstance(row[key], kinds):
                    raise DataError(f"{path}:{line}: {key!r} is a {type(row[key]).__name__}, not a text")
            yield line, row
    elif path.suffix.lower() == ".csv":
        for n, (line, row) in enumerate(read_csv_rows(path)):
            missing = sorted({"user", "assistant"} - set(row)) if n == 0 else []
            if missing:
                raise DataError(f"{path}: missing column(s) {', '.join(missing)}; found: "
                                f"{', '.join(k for k in row if k) or '(none)'}")
            yield line, row
    else:
        raise DataError(f"{path}: conversation file must be .jsonl or .csv")


def split_examples(examples: Sequence[Example], eval_fraction: float, seed: int
                   ) -> tuple[list[Example], list[Example]]:
    """(train, held-out): round(eval_fraction × groups) groups, drawn with `seed` from the sorted group keys,
    are held out whole (BanglaVerse §3.3: a random 80/20 split; grouped here so that a standard sentence
    never appears on both sides, its other dialects' versions included). Deterministic for a given seed and
    set of examples, whatever their order."""
    groups = sorted({e.group for e in examples})
    n_eval = round(eval_fraction * len(groups))
    if eval_fraction > 0 and n_eval == 0 and len(groups) > 1:
        n_eval = 1
    n_eval = min(n_eval, max(0, len(groups) - 1))
    held = set(random.Random(seed).sample(groups, n_eval))
    ordered = sorted(examples, key=lambda e: (e.group, e.kind, e.dialect, e.id))
    return [e for e in ordered if e.group not in held], [e for e in ordered if e.group in held]


@dataclass
class Encoded:
    """Tokenised examples and those left out (with reason)."""

    rows: list[dict[str, list[int]]] = field(default_factory=list)
    truncated: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def encode_examples(tokenizer: Any, examples: Sequence[Example], max_length: int,
                    loss_on: str = "target") -> Encoded:
    """`input_ids`, `attention_mask` and `labels` per example: the prompt as the tokenizer encodes it alone
    (with its own BOS handling: exactly what the served model is sent), then the target and EOS. Prompt
    labels are IGNORE, so the loss covers the target only; `loss_on="sequence"`: the labels are the whole
    sequence (BanglaVerse App. C.1). A sequence over `max_length` loses the end of its target (counted); one
    whose prompt alone reaches `max_length` is skipped (counted)."""
    eos = tokenizer.eos_token_id
    out = Encoded()
    for e in examples:
        prompt = list(tokenizer(e.prompt, add_special_tokens=True)["input_ids"])
        target = list(tokenizer(e.target, add_special_tokens=False)["input_ids"])
        if eos is not None:
            target.append(int(eos))
        if len(prompt) >= max_length:
            out.skipped[f"prompt alone reaches max_length ({max_length} tokens)"] += 1
            continue
        if len(prompt) + len(target) > max_length:
            target = target[:max_length - len(prompt)]
            out.truncated += 1
        ids = prompt + target
        out.rows.append({"input_ids": ids, "attention_mask": [1] * len(ids),
                         "labels": list(ids) if loss_on == "sequence" else [IGNORE] * len(prompt) + target})
    return out

