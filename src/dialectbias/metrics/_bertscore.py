"""BERTScore F1 of candidate captions against references, over an explicit local encoder (SPEC §4 P5).

BanglaVerse (paper 003 §4.3) reports BERTScore-F1 (Zhang et al., 2020) between generated and reference
captions. bert-score picks a default encoder per language and downloads it (`lang="bn"` → a multilingual
model from the Hub); this wrapper never does: the encoder is always a local folder (config.json, weights,
tokenizer) given by the caller, and a missing one is a ConfigError naming the key to set.

Per pair, F1 = 2·P·R / (P + R), where R averages over reference tokens the best cosine similarity to a
candidate token and P does the same over candidate tokens (Zhang et al. §3), with token weights 1
(`idf=False`) or idf over the references of the call (`idf=True`, bert-score's rule: log((M + 1) / (df + 1))
over M references; [CLS]/[SEP] weigh 0). No baseline rescaling here: `rescale_with_baseline` applies a
baseline read from a bert-score baseline file by `bertscore_baseline` (published for named models only).

Empty strings, the rule: a candidate that is empty or only whitespace scores 0.0 without reaching the
encoder (a model that said nothing matched nothing); an empty reference is a ValueError naming its
positions — there is nothing to compare against, so the caller leaves such items out and counts them.

Requires the `metrics` extra (bert-score, torch, transformers). The loaded encoder is kept per
(path, layers, device) for the life of the process.
"""

from __future__ import annotations

import json
import math
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dialectbias.errors import ConfigError

DEFAULT_KEY = "bertscore.model_path"
_LOCK = threading.Lock()
_ENCODERS: dict[tuple[str, int, str], tuple[Any, Any]] = {}


def _encoder_dir(model_path: str | Path | None, key: str) -> Path:
    """The encoder folder, checked: never a Hub name (from_pretrained would download it)."""
    if model_path is None or not str(model_path).strip():
        raise ConfigError(
            f"BERTScore needs a local encoder: set `{key}` to a model folder (config.json, weights, tokenizer), "
            "e.g. a multilingual encoder saved with save_pretrained; bert-score's default encoder for a "
            "language (lang='bn') would be downloaded, so it is never used")
    path = Path(model_path).expanduser()
    if not path.is_dir():
        raise ConfigError(f"`{key}`: BERTScore encoder folder {str(path)!r} does not exist (a local folder is "
                          "required; Hub model names are not downloaded)")
    if not (path / "config.json").is_file():
        raise ConfigError(f"`{key}`: {str(path)!r} has no config.json: not a transformers model folder")
    return path.resolve()


def _layers(path: Path, num_layers: int | None, key: str) -> int:
    """`num_layers`, or the encoder's last layer (config `num_hidden_layers`) when None."""
    try:
        total = int(json.loads((path / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if num_layers is None:
            raise ConfigError(f"`{key}`: cannot read num_hidden_layers from {path / 'config.json'} ({exc}); "
                              "set the number of layers explicitly") from exc
        return num_layers
    layers = total if num_layers is None else num_layers
    if not 1 <= layers <= total:
        raise ConfigError(f"BERTScore num_layers must be between 1 and {total} for {str(path)!r}, got {layers}")
    return layers


def bertscore_baseline(baseline_file: str | Path, *, model_path: str | Path | None, num_layers: int | None = None,
                       key: str = DEFAULT_KEY) -> float:
    """The F1 baseline of the layer BERTScore compares (`num_layers`, else the encoder's last), read from a
    bert-score baseline file (`rescale_baseline/<lang>/<model>.tsv`: a CSV with the header `LAYER,P,R,F`, one row
    per layer: the mean scores of unrelated sentence pairs). ConfigError naming the file when it has no such
    layer or cannot be read."""
    import csv

    layer = _layers(_encoder_dir(model_path, key), num_layers, key)
    path = Path(baseline_file)
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = {int(r["LAYER"]): float(r["F"]) for r in csv.DictReader(fh)}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a bert-score baseline file (a CSV with LAYER,P,R,F): {exc}") from None
    if layer not in rows:
        raise ConfigError(f"{path}: no baseline for layer {layer} (layers: {', '.join(map(str, sorted(rows)))})")
    return rows[layer]


def rescale_with_baseline(values: Sequence[float], baseline: float) -> list[float]:
    """bert-score's `rescale_with_baseline`: (F − b) / (1 − b), so unrelated pairs score about 0 (Zhang et al.
    2020, §"Baseline Rescaling"); the order of the scores is unchanged, their spread widened."""
    if not baseline < 1:
        raise ValueError(f"a BERTScore baseline must be below 1, got {baseline}")
    return [(v - baseline) / (1 - baseline) for v in values]


def _device(device: str | None) -> str:
    if device is not None:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _encoder(path: Path, layers: int, device: str) -> tuple[Any, Any]:
    """(tokenizer, model truncated to `layers`), loaded once per process."""
    cache_key = (str(path), layers, device)
    if cache_key not in _ENCODERS:
        try:
            from bert_score.utils import get_model, get_tokenizer
        except ImportError as exc:
            raise ConfigError("BERTScore needs the `metrics` extra: pip install 'dialectbias[metrics]' "
                              f"({exc})") from exc
        tokenizer = get_tokenizer(str(path), use_fast=True)
        model = get_model(str(path), layers)
        model.to(device)
        _ENCODERS[cache_key] = (tokenizer, model)
    return _ENCODERS[cache_key]


def bertscore_f1(candidates: Sequence[str], references: Sequence[str], *, model_path: str | Path | None,
                 num_layers: int | None = None, batch_size: int = 32, idf: bool = False,
                 device: str | None = None, key: str = DEFAULT_KEY) -> list[float]:
    """BERTScore F1 of each candidate against the reference at the same position, in input order.

    `model_path`: local encoder folder (required; `key` is the config key named when it is missing);
    `num_layers`: the layer whose embeddings are compared (None: the last; bert-score's tuned layers for
    known encoders are in `bert_score.utils.model2layers`, e.g. 9 for bert-base-multilingual-cased, 17 for
    xlm-roberta-large); `idf`: weight tokens by idf over these references; `device`: torch device (None:
    cuda when available, else cpu). Empty candidates score 0.0; empty references raise ValueError.
    """
    cands, refs = list(candidates), list(references)
    if len(cands) != len(refs):
        raise ValueError(f"BERTScore needs one reference per candidate, got {len(cands)} candidates and "
                         f"{len(refs)} references")
    empty_refs = [i for i, r in enumerate(refs) if not r.strip()]
    if empty_refs:
        shown = ", ".join(map(str, empty_refs[:10])) + (" …" if len(empty_refs) > 10 else "")
        raise ValueError(f"BERTScore: {len(empty_refs)} empty reference(s) at position(s) {shown}; leave "
                         "items without a reference out and count them")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    path = _encoder_dir(model_path, key)
    layers = _layers(path, num_layers, key)
    scored = [i for i, c in enumerate(cands) if c.strip()]
    f1 = [0.0] * len(cands)
    if not scored:
        return f1
    from bert_score.utils import bert_cos_score_idf, get_idf_dict

    with _LOCK:
        dev = _device(device)
        tokenizer, model = _encoder(path, layers, dev)
        if idf:
            weights = get_idf_dict([refs[i] for i in scored], tokenizer, nthreads=1)
        else:
            weights = defaultdict(lambda: 1.0)
            weights[tokenizer.sep_token_id] = 0.0
            weights[tokenizer.cls_token_id] = 0.0
        preds = bert_cos_score_idf(model, [refs[i] for i in scored], [cands[i] for i in scored], tokenizer,
                                   weights, batch_size=batch_size, device=dev).cpu()
    for i, value in zip(scored, preds[:, 2].tolist(), strict=True):
        f1[i] = float(value)
    return f1


def corpus_bertscore_f1(candidates: Sequence[str], references: Sequence[str], **kwargs: Any) -> float:
    """Mean BERTScore F1 over the pairs (empty candidates count as 0.0); arguments as `bertscore_f1`.

    Raises ValueError for no pairs (a mean over nothing is undefined)."""
    if not candidates:
        raise ValueError("BERTScore corpus mean of no pairs is undefined")
    scores = bertscore_f1(candidates, references, **kwargs)
    return math.fsum(scores) / len(scores)
