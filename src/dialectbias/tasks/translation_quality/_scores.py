"""Per-row scores of a translation_quality experiment: each system's translation of each row against the human
reference, by every local metric (SPEC §4 P2; Bengali dialect-bias paper §3.1.3), plus the dialect-ID check.

Local metrics need no model call, so they are computed when the run ends (and again by `report` when
something changed), never per request. Each metric's scores are kept in the store (`meta`) under a
fingerprint of what they depend on (the texts, the normalisation, the encoder), so a report recomputes only
a metric whose inputs changed: adding BERTScore does not re-embed, and an unchanged report reads them all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dialectbias.data import file_digest
from dialectbias.errors import ConfigError
from dialectbias.metrics import TextNormalization, sentence_scores
from dialectbias.store import Store
from dialectbias.tasks.translation_quality._data import TQRow

if TYPE_CHECKING:
    from dialectbias.tasks.translation_quality._task import TranslationQualityTask

#: metrics computed here, per (row, system)
LOCAL_METRICS = ("bleu", "chrf", "wer", "bertscore", "comet", "embedding")
_META_PREFIX = "translation_quality:scores:"
_DIALECT_ID_KEY = "translation_quality:dialect_id"

Pair = tuple[str, str]  # (row key, system)
Scores = dict[Pair, float]


def scored_pairs(rows: Sequence[TQRow], systems: Sequence[str], failed_as_empty: bool
                 ) -> list[tuple[TQRow, str, str]]:
    """(row, system, hypothesis) for every translation to score; a failed translation scores as the empty
    text when `failed_as_empty`, else it is left out (and counted by the tables)."""
    out = []
    for row in rows:
        for system in systems:
            text = row.systems.get(system)
            if text is not None:
                out.append((row, system, text))
            elif failed_as_empty and system in row.failed:
                out.append((row, system, ""))
    return out


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()


def _cached(store: Store, metric: str, fingerprint: str, compute: Callable[[], Scores]) -> Scores:
    raw = store.get_meta(_META_PREFIX + metric)
    if raw:
        saved = json.loads(raw)
        if saved.get("fingerprint") == fingerprint:
            return {(k, s): v for k, s, v in saved["scores"]}
    scores = compute()
    store.set_meta(_META_PREFIX + metric, json.dumps(
        {"fingerprint": fingerprint, "scores": [[k, s, v] for (k, s), v in scores.items()]}, ensure_ascii=False))
    return scores


def _lexical(metric: str, pairs: list[tuple[TQRow, str, str]], norm: TextNormalization) -> Scores:
    hyps = [norm.apply(h) for _, _, h in pairs]
    refs = [norm.apply(r.reference) for r, _, _ in pairs]
    values = sentence_scores(metric, hyps, refs)  # type: ignore[arg-type]
    return {(r.key, s): v for (r, s, _), v in zip(pairs, values, strict=True)}


def _bertscore(task: TranslationQualityTask, pairs: list[tuple[TQRow, str, str]], norm: TextNormalization
               ) -> Scores:
    from dialectbias.metrics import bertscore_f1

    o = task.options
    path = task.exp.resolve(o.bertscore_model) if o.bertscore_model else None
    values = bertscore_f1([norm.apply(h) for _, _, h in pairs], [norm.apply(r.reference) for r, _, _ in pairs],
                          model_path=path, num_layers=o.bertscore_layers, key="options.bertscore_model")
    return {(r.key, s): v for (r, s, _), v in zip(pairs, values, strict=True)}


def _comet(task: TranslationQualityTask, pairs: list[tuple[TQRow, str, str]], norm: TextNormalization) -> Scores:
    """COMET of each translation: src = the standard source, mt = the translation, ref = the human dialect
    reference (PROCEDURES.md §2's convention for translation), all three normalised as for every metric."""
    from dialectbias.metrics import comet_scores

    o = task.options
    values = comet_scores([norm.apply(r.source) for r, _, _ in pairs], [norm.apply(h) for _, _, h in pairs],
                          [norm.apply(r.reference) for r, _, _ in pairs], task.comet_checkpoint(),
                          batch_size=o.comet_batch_size, gpus=o.comet_gpus, key="options.comet_checkpoint")
    return {(r.key, s): v for (r, s, _), v in zip(pairs, values, strict=True)}


def _embedding(task: TranslationQualityTask, pairs: list[tuple[TQRow, str, str]], norm: TextNormalization
               ) -> Scores:
    """Cosine of the hypothesis and reference embeddings (the retrieval index's embedder; e5 `query:` on both
    sides, its prefix for symmetric similarity); an empty hypothesis scores 0."""
    from dialectbias.retrieval import load_embedder

    embedder = load_embedder(task.embedder_spec())
    texts = sorted({norm.apply(t) for r, _, h in pairs for t in (h, r.reference) if t.strip()})
    vectors = embedder.embed_queries(texts) if texts else np.zeros((0, 0))
    index = {t: i for i, t in enumerate(texts)}
    out: Scores = {}
    for r, s, h in pairs:
        hyp, ref = norm.apply(h), norm.apply(r.reference)
        out[(r.key, s)] = min(1.0, float(vectors[index[hyp]] @ vectors[index[ref]])) if hyp.strip() else 0.0
    return out


def local_scores(task: TranslationQualityTask, store: Store, rows: Sequence[TQRow]) -> dict[str, Scores]:
    """metric -> {(row key, system): score} for the experiment's local metrics (raw scale: BLEU, chrF and WER
    0–100 per sentence, BERTScore F1, COMET and cosine as computed)."""
    norm = task.options.normalization
    pairs = scored_pairs(rows, task.systems, task.options.failed_as_empty)
    texts = [[r.key, s, h, r.reference] for r, s, h in pairs]
    sources = [[r.key, r.source] for r in rows]  # COMET reads the source too
    out: dict[str, Scores] = {}
    for metric in task.metrics:
        if metric not in LOCAL_METRICS:
            continue
        compute: Callable[[], Scores]
        setting: list[Any] | str | None  # what the scores depend on beyond the texts (encoder, embedder)
        if metric == "bertscore":
            compute, setting = partial(_bertscore, task, pairs, norm), task.encoder_identity()
        elif metric == "comet":
            if not pairs:
                out[metric] = {}
                continue
            compute, setting = partial(_comet, task, pairs, norm), task.comet_identity()
        elif metric == "embedding":
            compute, setting = partial(_embedding, task, pairs, norm), task.embedder_spec()
        else:
            compute, setting = partial(_lexical, metric, pairs, norm), None
        inputs = [texts, sources] if metric == "comet" else texts  # the others' fingerprints stay as they were
        out[metric] = _cached(store, metric, _fingerprint(metric, norm.model_dump(), setting, inputs), compute)
    return out


def dialect_id_checks(task: TranslationQualityTask, store: Store, rows: Sequence[TQRow]
                      ) -> dict[Pair, dict[str, Any]]:
    """(row key, system) -> the dialect-ID verdict of the translation (system `reference`: of the human
    reference itself, the classifier's own baseline on this data); empty without `options.dialect_id`."""
    if not task.options.dialect_id:
        return {}
    from dialectbias.dialectid import DialectIdentifier

    path = task.exp.resolve(task.options.dialect_id)
    pairs = [(r, "reference", r.reference) for r in rows]
    pairs += [(r, s, h) for r, s, h in scored_pairs(rows, task.systems, False)]
    fingerprint = _fingerprint(_model_files(path), task.options.dialect_id_min_probability,
                               [[r.key, s, h, r.dialect] for r, s, h in pairs])
    raw = store.get_meta(_DIALECT_ID_KEY)
    if raw:
        saved = json.loads(raw)
        if saved.get("fingerprint") == fingerprint:
            return {(k, s): v for k, s, v in saved["checks"]}
    ident = DialectIdentifier.load(path)
    checks = ident.check([h for _, _, h in pairs], [r.dialect for r, _, _ in pairs],
                         min_probability=task.options.dialect_id_min_probability)
    out = {(r.key, s): {"verdict": c.verdict, "predicted": c.predicted, "probability": float(c.probability)}
           for (r, s, _), c in zip(pairs, checks, strict=True)}
    store.set_meta(_DIALECT_ID_KEY, json.dumps({"fingerprint": fingerprint,
                                                "checks": [[k, s, v] for (k, s), v in out.items()]}))
    return out


def _model_files(path: Path) -> list[Any]:
    if not path.is_dir():
        raise ConfigError(f"options.dialect_id: {path} is not a folder written by `dialectbias train-dialect-id`")
    # by bytes, not size and modification time: a model replaced by one of the same size and time (`cp -p`,
    # `rsync -t`) must not keep the old verdicts, and a touched or moved one need not be checked again
    return sorted([p.name, file_digest(p)] for p in path.iterdir() if p.is_file())
