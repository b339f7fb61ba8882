"""Held-out scores: per-label precision, recall, F1 and support, macro-F1, accuracy and the confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel


class LabelScore(BaseModel):
    """One label's scores on the held-out units (0 where a ratio's denominator is 0)."""

    label: str
    precision: float
    recall: float
    f1: float
    support: int  # held-out units with this label
    predicted: int  # held-out units predicted as this label


def confusion_matrix(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """counts[i, j]: units of labels[i] predicted as labels[j] (units whose label is not listed are left out)."""
    index = {name: i for i, name in enumerate(labels)}
    out = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for t, p in zip(y_true, y_pred, strict=True):
        if t in index and p in index:
            out[index[t], index[p]] += 1
    return out


def label_scores(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str]) -> list[LabelScore]:
    """precision = tp / predicted, recall = tp / support, F1 = 2PR / (P + R)."""
    cm = confusion_matrix(y_true, y_pred, labels)
    tp = np.diag(cm)
    predicted, support = cm.sum(axis=0), cm.sum(axis=1)
    out = []
    for i, name in enumerate(labels):
        p = tp[i] / predicted[i] if predicted[i] else 0.0
        r = tp[i] / support[i] if support[i] else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        out.append(LabelScore(label=name, precision=float(p), recall=float(r), f1=float(f1),
                              support=int(support[i]), predicted=int(predicted[i])))
    return out


def macro_f1(scores: Sequence[LabelScore]) -> float:
    """The unweighted mean F1 over labels with held-out units (a label absent from the test side is left out)."""
    present = [s.f1 for s in scores if s.support]
    return float(np.mean(present)) if present else 0.0


def accuracy(y_true: Sequence[str], y_pred: Sequence[str]) -> float:
    return float(np.mean([t == p for t, p in zip(y_true, y_pred, strict=True)])) if y_true else 0.0
