"""Training on the synthetic corpus: known predictions, held-out scores equal to sklearn.metrics on the same
predictions, the saved model predicting exactly what the trained one did, and scikit-learn's own probabilities."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from dialectbias.dialectid import DialectIdentifier, fit_dialect_id, train_dialect_id
from dialectbias.dialectid._features import NgramAnalyzer
from dialectbias.dialectid._split import grouped_split
from dialectbias.dialectid._train import collect_units
from dialectbias.errors import ConfigError, DataError

metrics = pytest.importorskip("sklearn.metrics")

KNOWN = {"নতুন কথা কিতা কররাম": "sylhet", "আকাশ মেঘ কিয়া গরির": "chittagong", "মাঠ ফুল কেমন বাহে": "rangpur",
         "বই গাছ কী করছি": "standard"}


def test_known_predictions_and_files(synthetic: dict[str, Path]) -> None:
    out = synthetic["dir"] / "model"
    summary, model = fit_dialect_id([synthetic["corpus"]], [synthetic["transcripts"]], out, seed=0)
    assert summary.labels == ["chittagong", "rangpur", "standard", "sylhet"]
    assert [label for label, _ in model.predict(list(KNOWN))] == list(KNOWN.values())
    assert summary.macro_f1 == 1.0 and summary.accuracy == 1.0 and not summary.not_held_out
    assert {s.source: s.kind for s in summary.sources} == {str(synthetic["corpus"]): "corpus",
                                                          str(synthetic["transcripts"]): "transcripts"}
    assert {p.name for p in out.iterdir()} == {"model.json", "model.npz", "dialect_id.json", "dialect_id_eval.csv",
                                               "confusion.csv"}
    saved = json.loads((out / "dialect_id.json").read_text(encoding="utf-8"))
    assert saved["macro_f1"] == 1.0 and saved["settings"]["seed"] == 0 and saved["format_version"] == 1
    model_json = json.loads((out / "model.json").read_text(encoding="utf-8"))
    assert model_json["classifier"] == "logistic_regression" and model_json["training"]["macro_f1"] == 1.0
    with (out / "confusion.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["true \\ predicted", *summary.labels]
    assert sum(int(v) for r in rows[1:] for v in r[1:]) == sum(summary.test_units.values())


def noisy_corpus(directory: Path) -> Path:
    """Sylhet and chittagong sentences that share their markers half the time: held-out scores below 1."""
    import random

    rng = random.Random(3)
    words = ["আমার", "বাড়ি", "নদী", "মাঠ", "গ্রাম", "শহর", "বাজার", "স্কুল", "বই", "গাছ", "কিতা", "কিয়া", "গরির",
             "কররাম", "যাইতাম", "আঁই", "তুমি", "হিতে"]
    with (directory / "noisy.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["standard_text", "dialect_text", "dialect"])
        for i in range(120):
            dialect = "sylhet" if i % 2 else "chittagong"
            marker = ("কিতা" if dialect == "sylhet" else "কিয়া") if rng.random() < 0.6 else rng.choice(words)
            writer.writerow([f"বাক্য {i} আমি যাব", " ".join([*rng.sample(words, 3), marker]), dialect])
    path = directory / "noisy.yaml"
    path.write_text(yaml.safe_dump({"name": "noisy", "files": [{"path": "noisy.csv", "standard": "standard_text",
                                                                "dialect_text": "dialect_text",
                                                                "dialect": "dialect"}]}), encoding="utf-8")
    return path


def test_scores_equal_sklearn_metrics_and_reload_is_exact(tmp_path: Path) -> None:
    corpus = noisy_corpus(tmp_path)
    out = tmp_path / "model"
    summary, model = fit_dialect_id([corpus], [], out, seed=5, test_size=0.25)
    assert 0.3 < summary.macro_f1 < 1.0  # the markers are noisy: not a perfect score
    units, _ = collect_units([corpus], [], summary.settings.min_chars)
    _, test_idx = grouped_split([u.label for u in units], [u.group for u in units], 0.25, 5)
    test = [units[i] for i in test_idx]
    reloaded = DialectIdentifier.load(out)
    texts = [u.text for u in test]
    assert np.array_equal(reloaded.probabilities(texts), model.probabilities(texts))
    assert reloaded.predict(texts) == model.predict(texts)
    truth, pred = [u.label for u in test], [label for label, _ in reloaded.predict(texts)]
    assert sum(summary.test_units.values()) == len(test)
    p, r, f, s = metrics.precision_recall_fscore_support(truth, pred, labels=summary.labels, zero_division=0)
    with (out / "dialect_id_eval.csv").open(encoding="utf-8") as fh:
        table = {row["label"]: row for row in csv.DictReader(fh)}
    for i, label in enumerate(summary.labels):
        assert float(table[label]["precision"]) == pytest.approx(p[i], abs=5e-5)
        assert float(table[label]["recall"]) == pytest.approx(r[i], abs=5e-5)
        assert float(table[label]["f1"]) == pytest.approx(f[i], abs=5e-5)
        assert int(table[label]["support"]) == s[i]
    assert summary.macro_f1 == pytest.approx(metrics.f1_score(truth, pred, average="macro"))


def test_numpy_probabilities_equal_scikit_learn(tmp_path: Path) -> None:
    """The saved weights scored with numpy give scikit-learn's predict_proba (multiclass and two classes)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    corpus = noisy_corpus(tmp_path)
    for labels in (None, {"sylhet", "standard"}):
        units, _ = collect_units([corpus], [], 8)
        units = [u for u in units if labels is None or u.label in labels]
        train_idx, test_idx = grouped_split([u.label for u in units], [u.group for u in units], 0.2, 0)
        train = [units[i] for i in train_idx]
        vec = TfidfVectorizer(analyzer=NgramAnalyzer(2, 5), sublinear_tf=True, min_df=2)
        clf = LogisticRegression(C=10.0, class_weight="balanced", max_iter=300, random_state=0)
        clf.fit(vec.fit_transform([u.text for u in train]), [u.label for u in train])
        from dialectbias.dialectid._features import features_from_vectorizer

        coef, intercept = clf.coef_, clf.intercept_
        if len(clf.classes_) == 2:
            coef, intercept = np.vstack([np.zeros_like(coef[0]), coef[0]]), np.array([0.0, intercept[0]])
        ours = DialectIdentifier(features_from_vectorizer(vec, (2, 5), True), list(clf.classes_), coef, intercept)
        texts = [units[i].text for i in test_idx] + list(KNOWN)
        np.testing.assert_allclose(ours.probabilities(texts), clf.predict_proba(vec.transform(texts)), atol=1e-12)


def test_two_labels_train(tmp_path: Path) -> None:
    corpus = noisy_corpus(tmp_path)
    text = corpus.read_text(encoding="utf-8")
    only = tmp_path / "noisy_sylhet.csv"
    rows = (tmp_path / "noisy.csv").read_text(encoding="utf-8").splitlines()
    only.write_text("\n".join([rows[0], *(r for r in rows[1:] if r.endswith(",sylhet"))]) + "\n", encoding="utf-8")
    (tmp_path / "two.yaml").write_text(text.replace("noisy.csv", "noisy_sylhet.csv"), encoding="utf-8")
    summary, model = fit_dialect_id([tmp_path / "two.yaml"], [], None)
    assert summary.labels == ["standard", "sylhet"] and model.coef.shape[0] == 2
    assert model.predict(["বাক্য 999 আমি যাব"])[0][0] == "standard"


def test_training_failures(synthetic: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="at least one corpus file or transcript file"):
        train_dialect_id([], [], tmp_path / "m")
    with pytest.raises(DataError, match=r"at least 2 labels .* found rangpur"):
        train_dialect_id([], [synthetic["transcripts"]], tmp_path / "m")
    with pytest.raises(ConfigError, match="test_size"):
        train_dialect_id([synthetic["corpus"]], [], tmp_path / "m", test_size=1.5)
    assert not (tmp_path / "m").exists()


def test_sample_weights_by_hand() -> None:
    from dialectbias.dialectid._data import Unit
    from dialectbias.dialectid._train import sample_weights

    def unit(label: str, source: str) -> Unit:
        return Unit(text="t", key="t", label=label, group="g", source=source)

    # cells (a, s1) ×3, (a, s2) ×1, (b, s1) ×2: n = 6, 3 cells → 6/9, 6/3, 6/6; every cell sums to 2
    units = [unit("a", "s1")] * 3 + [unit("a", "s2")] + [unit("b", "s1")] * 2
    np.testing.assert_allclose(sample_weights(units, "balanced_by_source"), [2 / 3] * 3 + [2.0] + [1.0] * 2)
    assert sample_weights(units, "balanced") is None and sample_weights(units, "none") is None


def test_external_evaluation(synthetic: dict[str, Path], tmp_path: Path) -> None:
    """Scored on a second corpus: its texts already seen in training are left out, labels the model lacks are
    counted, the rest scored."""
    rows = ["standard_text,dialect_text,dialect",
            "নতুন কথা কী করছি,নতুন কথা কিতা কররাম,sylhet",  # unseen
            "আকাশ মেঘ কী করছি,আকাশ মেঘ কিয়া গরির,chittagong",
            "মাঠ ফুল কী করছি,মাঠ ফুল কেমন বাহে,tangail"]  # a label the model lacks
    (tmp_path / "extra.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "extra.yaml").write_text(yaml.safe_dump({"name": "x", "files": [{
        "path": "extra.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    summary, _ = fit_dialect_id([synthetic["corpus"]], [], tmp_path / "m",
                                eval_corpora=[tmp_path / "extra.yaml", synthetic["corpus"]])
    ext = summary.external
    assert ext is not None and ext.not_covered == {"tangail": 1}
    # the training corpus itself: its training units overlap, its held-out units are scored again
    assert ext.overlap == sum(summary.train_units.values())
    assert ext.units == 5 + sum(summary.test_units.values())  # 3 standard sides + sylhet + chittagong, + held out
    assert ext.macro_f1 == 1.0
    assert (tmp_path / "m" / "dialect_id_eval_external.csv").read_text(encoding="utf-8").startswith("label,")
    assert set(summary.held_out_by_source) == {str(synthetic["corpus"])}
    cells = summary.held_out_by_source[str(synthetic["corpus"])]
    assert all(c == n for c, n in cells.values())
