"""The identifier's probabilities, verdicts and persistence, on a hand-built model whose numbers are known:
n-grams (1, 1) over the words x, y, z (idf 1), weights 10 on the label's own letter."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from dialectbias.dialectid import DialectCheck, DialectIdentifier, canonical_label
from dialectbias.dialectid._features import CharNgramFeatures
from dialectbias.errors import ConfigError

LABELS = ["chittagong", "standard", "sylhet"]


def hand_model() -> DialectIdentifier:
    features = CharNgramFeatures((" ", "x", "y", "z"), np.ones(4), (1, 1))
    coef = np.zeros((3, 4))
    coef[0, 1] = coef[1, 2] = coef[2, 3] = 10.0  # x → chittagong, y → standard, z → sylhet
    return DialectIdentifier(features, LABELS, coef, np.zeros(3))


def test_probabilities_by_hand() -> None:
    ident = hand_model()
    # "x": n-grams " ", "x", " " → counts (2, 1, 0, 0), sublinear (1 + ln 2, 1) → normalised; score of
    # chittagong = 10 · x-weight; the others 0
    w = 1 / math.sqrt((1 + math.log(2)) ** 2 + 1)
    p = math.exp(10 * w) / (math.exp(10 * w) + 2)
    (label, prob), = ident.predict(["x"])
    assert label == "chittagong" and prob == pytest.approx(p, rel=1e-12)
    assert ident.probabilities(["x"]).sum() == pytest.approx(1.0)
    # no known n-gram: the intercepts' softmax (uniform), the first label on the tie
    assert ident.predict(["…"]) == [("chittagong", pytest.approx(1 / 3))]
    assert ident.predict([]) == []


def test_verdicts() -> None:
    ident = hand_model()
    texts = ["z", "y", "x", "x y", "z", "z", "Z"]
    expected = ["sylhet", "sylhet", "sylhet", "sylhet", "rangpur", "Sylhet", " SYLHETI"]
    checks = ident.check(texts, expected, min_probability=0.6)
    assert [c.verdict for c in checks] == ["ok", "standard", "other_dialect", "uncertain", "not_covered", "ok", "ok"]
    assert checks[1].predicted == "standard" and checks[2].predicted == "chittagong"
    # "x y": chittagong and standard tie at p = e^a / (2e^a + 1) < 0.6 → uncertain
    assert checks[3].predicted == "chittagong" and checks[3].probability < 0.5
    assert checks[4].expected == "rangpur" and checks[4].expected_probability is None
    assert checks[0].expected_probability == checks[0].probability
    assert checks[2].expected_probability == pytest.approx((1 - checks[2].probability) / 2)
    # standard expected (a standard text checked) and standard read as a dialect
    assert [c.verdict for c in ident.check(["y", "z"], ["STANDARD", "standard"])] == ["ok", "other_dialect"]
    assert isinstance(checks[0], DialectCheck) and checks[0].as_dict()["verdict"] == "ok"
    with pytest.raises(ValueError, match="2 texts but 1 expected"):
        ident.check(["x", "y"], ["sylhet"])


def test_canonical_labels() -> None:
    assert [canonical_label(n) for n in ("Barisal", " Chittagonian ", "Low German", "nds", "Standard", "Cumilla")] \
        == ["barishal", "chittagong", "low_german", "low_german", "standard", "comilla"]


def test_save_load_round_trip_is_exact(tmp_path: Path) -> None:
    ident = hand_model()
    ident.meta = {"classifier": "hand", "training": {"macro_f1": 1.0}}
    ident.save(tmp_path / "m")
    back = DialectIdentifier.load(tmp_path / "m")
    texts = ["x", "x y", "z z y", "…"]
    assert back.labels == LABELS and back.meta == ident.meta
    assert np.array_equal(back.probabilities(texts), ident.probabilities(texts))
    assert DialectIdentifier.load(tmp_path / "m" / "model.json").labels == LABELS
    doc = json.loads((tmp_path / "m" / "model.json").read_text(encoding="utf-8"))
    assert doc["format"] == "dialectbias-dialect-id" and doc["version"] == 1


def test_load_failures_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"{tmp_path / 'none'}: no dialect-identification model"):
        DialectIdentifier.load(tmp_path / "none")
    folder = hand_model().save(tmp_path / "m")
    meta = folder / "model.json"
    good = meta.read_text(encoding="utf-8")
    meta.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"model\.json: not a readable model file"):
        DialectIdentifier.load(folder)
    meta.write_text(good.replace('"version": 1', '"version": 99'), encoding="utf-8")
    with pytest.raises(ConfigError, match="format version 99, this dialectbias reads version 1"):
        DialectIdentifier.load(folder)
    meta.write_text(json.dumps({"format": "something-else"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a dialectbias dialect-identification model"):
        DialectIdentifier.load(folder)
    meta.write_text(good, encoding="utf-8")
    (folder / "model.npz").write_bytes(b"garbage")
    with pytest.raises(ConfigError, match=rf"{folder}: corrupt dialect-identification model"):
        DialectIdentifier.load(folder)
    # consistent files, but weights for another vocabulary
    np.savez(folder / "model.npz", terms=np.array(["x"]), idf=np.ones(1), coef=np.zeros((3, 4)),
             intercept=np.zeros(3))
    with pytest.raises(ConfigError, match=r"corrupt dialect-identification model .*do not fit 3 labels × 1 features"):
        DialectIdentifier.load(folder)
    # an object array needs pickle: refused
    np.savez(folder / "model.npz", terms=np.array(["x", None], dtype=object), idf=np.ones(2), coef=np.zeros((3, 2)),
             intercept=np.zeros(3))
    with pytest.raises(ConfigError, match="corrupt dialect-identification model"):
        DialectIdentifier.load(folder)
