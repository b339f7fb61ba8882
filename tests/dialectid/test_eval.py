"""Per-label precision, recall, F1, macro-F1 and the confusion matrix: by hand and against sklearn.metrics."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dialectbias.dialectid._eval import accuracy, confusion_matrix, label_scores, macro_f1

metrics = pytest.importorskip("sklearn.metrics")


def test_by_hand() -> None:
    y_true = ["a", "a", "a", "b", "b", "c"]
    y_pred = ["a", "a", "b", "b", "c", "c"]
    scores = {s.label: s for s in label_scores(y_true, y_pred, ["a", "b", "c", "d"])}
    # a: tp 2, predicted 2, support 3 → P 1, R 2/3, F1 0.8
    assert (scores["a"].precision, scores["a"].recall, scores["a"].support) == (1.0, pytest.approx(2 / 3), 3)
    assert scores["a"].f1 == pytest.approx(0.8)
    # b: tp 1, predicted 2, support 2 → P 0.5, R 0.5; c: tp 1, predicted 2, support 1 → P 0.5, R 1, F1 2/3
    assert (scores["b"].precision, scores["b"].recall, scores["b"].f1) == (0.5, 0.5, 0.5)
    assert scores["c"].f1 == pytest.approx(2 / 3)
    # d: nothing held out, nothing predicted → 0 and left out of the macro average
    assert (scores["d"].support, scores["d"].f1) == (0, 0.0)
    assert macro_f1(list(scores.values())) == pytest.approx((0.8 + 0.5 + 2 / 3) / 3)
    assert accuracy(y_true, y_pred) == pytest.approx(4 / 6)
    assert confusion_matrix(y_true, y_pred, ["a", "b", "c"]).tolist() == [[2, 1, 0], [0, 1, 1], [0, 0, 1]]


def test_against_sklearn_on_random_predictions() -> None:
    rng = random.Random(11)
    labels = ["barishal", "chittagong", "standard", "sylhet", "rangpur"]
    y_true = [rng.choice(labels[:4]) for _ in range(400)]  # rangpur: predicted sometimes, never true
    y_pred = [t if rng.random() < 0.6 else rng.choice(labels) for t in y_true]
    ours = label_scores(y_true, y_pred, labels)
    p, r, f, s = metrics.precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    np.testing.assert_allclose([x.precision for x in ours], p)
    np.testing.assert_allclose([x.recall for x in ours], r)
    np.testing.assert_allclose([x.f1 for x in ours], f)
    assert [x.support for x in ours] == list(s)
    present = [lbl for lbl in labels if lbl in y_true]
    assert macro_f1(ours) == pytest.approx(metrics.f1_score(y_true, y_pred, labels=present, average="macro"))
    assert accuracy(y_true, y_pred) == pytest.approx(metrics.accuracy_score(y_true, y_pred))
    assert (confusion_matrix(y_true, y_pred, labels) == metrics.confusion_matrix(y_true, y_pred, labels=labels)).all()
