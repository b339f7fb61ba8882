"""`dialectbias build noise`: items with a `noisy` copy of their standard text (SPEC §4 P1/P4 noisy control).

The association usage setting reads the written file as it is: `noisy` sits beside `standard` and the
dialect variants, so one run prompts standard vs dialect and standard vs noisy (German paper §6.2,
Figure 4), and the report compares the two biases. The noise is applied to the standard text, as the
paper's code does (PROCEDURES.md §1.2).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.data import STANDARD, Item, iter_items
from dialectbias.dialects import language_of
from dialectbias.errors import DataError
from dialectbias.text import NOISY, Vocabulary, add_noise, token_counts, token_length_parity
from dialectbias.text._noise import BUILTIN_TOKENIZERS, NoiseMode, TokenCounter


def item_seed(seed: int, item_id: str) -> int:
    """A per-item seed from the run seed and the item id: reproducible whatever the order of the items."""
    return int(hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()[:16], 16)


@dataclass
class NoiseResult:
    """What `noise_items` wrote: counts and the texts per variant (for the token-length parity)."""

    items: int = 0
    texts: list[dict[str, str]] = field(default_factory=list)


def _record(item: Item, noisy: str, language: str | None, provenance: dict[str, Any]) -> dict[str, Any]:
    """The item in the input format the tasks read (unknown fields back at the top level)."""
    row: dict[str, Any] = {"id": item.id}
    for key in ("domain", "question_type"):
        if getattr(item, key) is not None:
            row[key] = getattr(item, key)
    row.update(item.metadata)
    if language and not row.get("language"):
        row["language"] = language
    row["variants"] = {**item.variants, NOISY: noisy}
    if item.gold is not None:
        row["gold"] = item.gold
    if item.validated_by:
        row["validated_by"] = item.validated_by
    row["noise"] = provenance
    return row


def _language(item: Item, forced: str | None) -> str | None:
    if forced:
        return forced
    found = {language_of(v) for v in item.variants if v not in (STANDARD, NOISY)} - {None}
    return found.pop() if len(found) == 1 else None


def noise_items(
    items: Path, out: Path, vocabulary: Vocabulary, *, p: float, seed: int, mode: NoiseMode = "mixed",
    language: str | None = None, vocabulary_name: str = "",
) -> NoiseResult:
    """Write `out` (JSONL): every item of `items` with `variants.noisy` = add_noise(standard text).

    Each item's noise is seeded by (seed, item id). An item that already has a `noisy` variant is an error
    naming it (re-run on the original file). `language` (else the one language of the item's dialects) is
    written when the item names none, so the report can place the noisy rows.
    """
    result = NoiseResult()
    provenance = {"p": p, "seed": seed, "mode": mode, "vocabulary": vocabulary_name}
    rows: list[dict[str, Any]] = []
    for item in iter_items(items, required_variants=(STANDARD,)):
        if NOISY in item.variants:
            raise DataError(f"{items}: item {item.id!r} already has a {NOISY!r} variant; build noise from the "
                            "file without it")
        standard = item.variants[STANDARD]
        noisy = add_noise(standard, p=p, vocabulary=vocabulary, seed=item_seed(seed, item.id), mode=mode)
        rows.append(_record(item, noisy, _language(item, language), provenance))
        result.texts.append({v: t for v, t in rows[-1]["variants"].items() if isinstance(t, str)})
        result.items += 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return result


def hf_token_counter(path: str | Path) -> TokenCounter:
    """Token counts of a Hugging Face tokenizer, loaded offline from a model folder or a .gguf file (needs
    `pip install 'dialectbias[hf]'`)."""
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        raise DataError(f"tokenizer {path}: transformers is not installed (pip install 'dialectbias[hf]')") from exc
    try:
        p = Path(path)
        if p.suffix.lower() == ".gguf":
            tok = AutoTokenizer.from_pretrained(str(p.parent), gguf_file=p.name, local_files_only=True)
        else:
            tok = AutoTokenizer.from_pretrained(str(p), local_files_only=True)
    except (OSError, ValueError, ImportError) as exc:
        raise DataError(f"tokenizer {path}: cannot load a Hugging Face tokenizer from it: {exc}") from exc

    def count(texts: Sequence[str]) -> list[int]:
        return token_counts(texts, hf_tokenizer=tok)

    return count


def parity_tokenizers(hf_paths: Sequence[str | Path] = ()) -> dict[str, TokenCounter]:
    """The built-in counts ('whitespace', 'words') plus one per Hugging Face tokenizer folder."""
    out: dict[str, Callable[[Sequence[str]], list[int]]] = dict(BUILTIN_TOKENIZERS)
    for path in hf_paths:
        out[f"hf:{Path(path).name}"] = hf_token_counter(path)
    return out


def parity_rows(texts: Sequence[Mapping[str, str]], hf_paths: Sequence[str | Path] = ()) -> Iterator[dict[str, Any]]:
    """`token_length_parity` over the built-in and the given tokenizers."""
    yield from token_length_parity(texts, parity_tokenizers(hf_paths))


__all__ = ["NoiseResult", "hf_token_counter", "item_seed", "noise_items", "parity_rows", "parity_tokenizers"]
