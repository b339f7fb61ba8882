"""`train_dialect_id`: units from corpora and transcripts → a grouped, stratified held-out split → TF-IDF char_wb
n-grams + multinomial logistic regression on the training side, weighted so every (label, source file) cell
counts the same → per-label scores on the held-out side (and, optionally, on separate evaluation sources) → the
model and its evaluation written to one folder.

Files written to `out`: model.json + model.npz (the model; `DialectIdentifier.load`), dialect_id.json (this
summary), dialect_id_eval.csv (per-label precision, recall, F1, support), confusion.csv (rows: true label,
columns: predicted label), dialect_id_eval_external.csv (with evaluation sources).
"""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from dialectbias.dialectid._data import SKIP_KINDS, SourceCounts, Unit, UnitCollector, add_corpus, add_transcripts
from dialectbias.dialectid._eval import LabelScore, accuracy, confusion_matrix, label_scores, macro_f1
from dialectbias.dialectid._features import NgramAnalyzer, features_from_vectorizer
from dialectbias.dialectid._model import FORMAT_VERSION, DialectIdentifier
from dialectbias.dialectid._split import grouped_split
from dialectbias.errors import ConfigError, DataError

EVAL_CSV, CONFUSION_CSV, SUMMARY_JSON = "dialect_id_eval.csv", "confusion.csv", "dialect_id.json"
EXTERNAL_CSV = "dialect_id_eval_external.csv"
CLASSIFIER = "logistic_regression"


class TrainSettings(BaseModel):
    """How the model was trained (recorded in the model and its summary)."""

    seed: int = 0
    test_size: float = Field(default=0.2, gt=0.0, lt=1.0)
    min_chars: int = Field(default=8, ge=0, description="units with fewer letters are set aside")
    ngram_range: tuple[int, int] = (2, 5)
    min_df: int = Field(default=2, ge=1, description="n-grams in fewer training units are dropped")
    max_features: int | None = Field(default=None, ge=1)
    c: float = Field(default=10.0, gt=0.0, description="inverse regularisation strength of the logistic regression")
    max_iter: int = Field(default=300, ge=1)
    max_per_label: int | None = Field(default=None, ge=1, description="keep at most this many units per label "
                                      "(a seeded random sample) before the split; default: all (class_weight "
                                      "balances the labels instead)")
    classifier: str = CLASSIFIER
    class_weight: Literal["balanced_by_source", "balanced", "none"] = Field(
        default="balanced_by_source", description="balanced_by_source: every (label, source file) cell weighs the "
        "same in training (Vashantor's written Sylhet as much as RegSpeech12's spoken Sylhet); balanced: every label "
        "(scikit-learn's class_weight='balanced'); none")


class ExternalEval(BaseModel):
    """Scores on separate evaluation sources (e.g. Vashantor's Test split): every unit, no split."""

    sources: list[SourceCounts]
    units: int
    overlap: int = Field(description="units whose text is also a training unit's: left out of the scores")
    scores: list[LabelScore]
    macro_f1: float
    accuracy: float
    not_covered: dict[str, int] = Field(default_factory=dict, description="units of labels the model lacks: "
                                        "left out of the scores")


class TrainSummary(BaseModel):
    """What `train_dialect_id` did: sources, units per label and side, skipped units, held-out scores."""

    format_version: int = FORMAT_VERSION
    settings: TrainSettings
    sources: list[SourceCounts]
    labels: list[str]
    train_units: dict[str, int]
    test_units: dict[str, int]
    train_groups: int
    test_groups: int
    features: int
    scores: list[LabelScore]
    macro_f1: float
    accuracy: float
    capped: dict[str, int] = Field(default_factory=dict, description="units left out per label by max_per_label")
    not_held_out: list[str] = Field(default_factory=list, description="labels with no held-out unit (too few "
                                    "groups): trained, not evaluated")
    confusion: list[list[int]]
    held_out_by_source: dict[str, dict[str, tuple[int, int]]] = Field(
        default_factory=dict, description="source -> label -> (correct, held-out units): recall per source")
    external: ExternalEval | None = None
    seconds: float
    out: str | None = None

    def skipped(self) -> dict[str, int]:
        """Units set aside by kind, over all sources."""
        total: Counter[str] = Counter()
        for s in self.sources:
            total.update(s.skipped)
        return {k: total[k] for k in SKIP_KINDS if total.get(k)}


def collect_units(corpora: Sequence[str | Path], transcripts: Sequence[str | Path],
                  min_chars: int) -> tuple[list[Unit], list[SourceCounts]]:
    """Every unit of the sources, deduplicated; the per-source counts."""
    collector = UnitCollector(min_chars)
    for path in corpora:
        add_corpus(collector, Path(path))
    for path in transcripts:
        add_transcripts(collector, Path(path))
    return collector.units(), collector.sources


def cap_units(units: list[Unit], cap: int | None, seed: int) -> tuple[list[Unit], dict[str, int]]:
    """At most `cap` units per label (a seeded random sample, original order kept); units left out per label."""
    if cap is None:
        return units, {}
    rng = np.random.default_rng(seed)
    by_label: dict[str, list[int]] = {}
    for i, u in enumerate(units):
        by_label.setdefault(u.label, []).append(i)
    keep: set[int] = set()
    capped = {}
    for label, idx in sorted(by_label.items()):
        if len(idx) > cap:
            capped[label] = len(idx) - cap
            idx = [int(i) for i in rng.choice(idx, size=cap, replace=False)]
        keep.update(idx)
    return [u for i, u in enumerate(units) if i in keep], capped


def sample_weights(units: Sequence[Unit], mode: str) -> np.ndarray | None:
    """balanced_by_source: n / (cells × units in the unit's (label, source) cell), so every cell sums to
    n / cells; otherwise None (scikit-learn's class_weight does the rest)."""
    if mode != "balanced_by_source":
        return None
    cells = Counter((u.label, u.source) for u in units)
    return np.array([len(units) / (len(cells) * cells[(u.label, u.source)]) for u in units])


def evaluate_external(model: DialectIdentifier, corpora: Sequence[str | Path], transcripts: Sequence[str | Path],
                      min_chars: int, training_keys: set[str]) -> ExternalEval:
    """The model's scores on every unit of separate sources (texts also seen in training left out)."""
    units, sources = collect_units(corpora, transcripts, min_chars)
    fresh = [u for u in units if u.key not in training_keys]
    known = set(model.labels)
    covered = [u for u in fresh if u.label in known]
    truth = [u.label for u in covered]
    predicted = [label for label, _ in model.predict([u.text for u in covered])]
    scores = label_scores(truth, predicted, model.labels)
    return ExternalEval(sources=sources, units=len(covered), overlap=len(units) - len(fresh), scores=scores,
                        macro_f1=macro_f1(scores), accuracy=accuracy(truth, predicted),
                        not_covered=dict(Counter(u.label for u in fresh if u.label not in known)))


def train_dialect_id(corpora: Sequence[str | Path] = (), transcripts: Sequence[str | Path] = (),
                     out: str | Path | None = None, seed: int = 0, test_size: float = 0.2,
                     **settings: Any) -> TrainSummary:
    """Train and evaluate a dialect identifier; write it and its evaluation to `out` (when given).

    `settings`: `TrainSettings` fields (min_chars, ngram_range, min_df, max_features, c, max_iter,
    max_per_label, class_weight), and `eval_corpora` / `eval_transcripts`: separate sources the trained model is
    also scored on (`summary.external`). Load the model with `DialectIdentifier.load(out)`; `fit_dialect_id`
    also returns the trained object."""
    summary, _ = fit_dialect_id(corpora, transcripts, out, seed=seed, test_size=test_size, **settings)
    return summary


def fit_dialect_id(corpora: Sequence[str | Path] = (), transcripts: Sequence[str | Path] = (),
                   out: str | Path | None = None, *, eval_corpora: Sequence[str | Path] = (),
                   eval_transcripts: Sequence[str | Path] = (),
                   **settings: Any) -> tuple[TrainSummary, DialectIdentifier]:
    """`train_dialect_id`, also returning the trained identifier."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise ConfigError("training a dialect identifier needs scikit-learn: pip install 'dialectbias[dialectid]'"
                          ) from None
    try:
        cfg = TrainSettings(**settings)
    except ValueError as exc:
        raise ConfigError(f"train-dialect-id settings: {exc}") from None
    if not corpora and not transcripts:
        raise ConfigError("give at least one corpus file or transcript file to train on")
    start = time.perf_counter()
    units, sources = collect_units(corpora, transcripts, cfg.min_chars)
    units, capped = cap_units(units, cfg.max_per_label, cfg.seed)
    labels = sorted({u.label for u in units})
    if len(labels) < 2:
        raise DataError(f"need units of at least 2 labels to train on, found {', '.join(labels) or 'none'} "
                        f"({len(units)} units) in {', '.join(s.source for s in sources)}")
    train_idx, test_idx = grouped_split([u.label for u in units], [u.group for u in units], cfg.test_size, cfg.seed)
    if not test_idx or not train_idx:
        raise DataError(f"{len(units)} units in {len({u.group for u in units})} groups are too few for a "
                        f"{cfg.test_size:.0%} held-out split")
    train, test = [units[i] for i in train_idx], [units[i] for i in test_idx]
    train_labels = sorted({u.label for u in train})
    if len(train_labels) < 2:
        raise DataError(f"the training side holds a single label ({train_labels[0]}): add data")
    vectorizer = TfidfVectorizer(analyzer=NgramAnalyzer(*cfg.ngram_range), sublinear_tf=True, min_df=cfg.min_df,
                                 max_features=cfg.max_features, dtype=np.float64)
    x_train = vectorizer.fit_transform([u.text for u in train])
    clf = LogisticRegression(C=cfg.c, class_weight="balanced" if cfg.class_weight == "balanced" else None,
                             max_iter=cfg.max_iter, random_state=cfg.seed)
    clf.fit(x_train, [u.label for u in train], sample_weight=sample_weights(train, cfg.class_weight))
    classes = [str(c) for c in clf.classes_]
    coef, intercept = clf.coef_, clf.intercept_
    if len(classes) == 2:  # scikit-learn keeps one row for two classes: softmax([0, s]) = sigmoid(s)
        coef = np.vstack([np.zeros_like(coef[0]), coef[0]])
        intercept = np.array([0.0, intercept[0]])
    features = features_from_vectorizer(vectorizer, cfg.ngram_range, sublinear_tf=True)
    model = DialectIdentifier(features, classes, coef, intercept)
    predicted = [label for label, _ in model.predict([u.text for u in test])]
    truth = [u.label for u in test]
    scores = label_scores(truth, predicted, classes)
    test_counts = Counter(truth)
    by_source: dict[str, dict[str, list[int]]] = {}
    for u, p in zip(test, predicted, strict=True):
        cell = by_source.setdefault(u.source, {}).setdefault(u.label, [0, 0])
        cell[0] += u.label == p
        cell[1] += 1
    external = None
    if eval_corpora or eval_transcripts:
        external = evaluate_external(model, eval_corpora, eval_transcripts, cfg.min_chars,
                                     {u.key for u in train})
    summary = TrainSummary(
        settings=cfg, sources=sources, labels=classes,
        train_units=dict(sorted(Counter(u.label for u in train).items())),
        test_units=dict(sorted(test_counts.items())), train_groups=len({u.group for u in train}),
        test_groups=len({u.group for u in test}), features=features.n_features, scores=scores,
        macro_f1=macro_f1(scores), accuracy=accuracy(truth, predicted),
        capped=capped, not_held_out=[c for c in classes if not test_counts.get(c)],
        confusion=confusion_matrix(truth, predicted, classes).tolist(),
        held_out_by_source={src: {k: (c[0], c[1]) for k, c in sorted(cells.items())}
                            for src, cells in by_source.items()},
        external=external, seconds=time.perf_counter() - start)
    model.meta = {"classifier": CLASSIFIER, "training": _model_training(summary)}
    if out is not None:
        summary.out = str(write_outputs(model, summary, Path(out)))
    return summary, model


def _model_training(summary: TrainSummary) -> dict[str, Any]:
    """The training summary stored inside model.json (no confusion matrix: that is in confusion.csv)."""
    return summary.model_dump(mode="json", exclude={"confusion", "out"})


def write_outputs(model: DialectIdentifier, summary: TrainSummary, out: Path) -> Path:
    """model.json, model.npz, dialect_id.json, dialect_id_eval.csv and confusion.csv in `out`."""
    model.save(out)
    (out / SUMMARY_JSON).write_text(json.dumps(summary.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n",
                                    encoding="utf-8")
    with (out / EVAL_CSV).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["label", "precision", "recall", "f1", "support", "predicted", "train_units"])
        for s in summary.scores:
            writer.writerow([s.label, f"{s.precision:.4f}", f"{s.recall:.4f}", f"{s.f1:.4f}", s.support, s.predicted,
                             summary.train_units.get(s.label, 0)])
        writer.writerow(["macro_f1", "", "", f"{summary.macro_f1:.4f}", sum(s.support for s in summary.scores), "", ""])
    if summary.external is not None:
        with (out / EXTERNAL_CSV).open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["label", "precision", "recall", "f1", "support", "predicted"])
            for s in summary.external.scores:
                writer.writerow([s.label, f"{s.precision:.4f}", f"{s.recall:.4f}", f"{s.f1:.4f}", s.support,
                                 s.predicted])
            writer.writerow(["macro_f1", "", "", f"{summary.external.macro_f1:.4f}", summary.external.units, ""])
    with (out / CONFUSION_CSV).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["true \\ predicted", *summary.labels])
        for label, row in zip(summary.labels, summary.confusion, strict=True):
            writer.writerow([label, *row])
    return out
