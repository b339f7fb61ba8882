"""A trained dialect identifier: character n-gram TF-IDF features and a linear model's weights, saved as
`model.json` (format version, settings, labels, training summary) and `model.npz` (n-grams, idf, weights;
read with `allow_pickle=False`, so loading a model file runs no code). Scores are computed with numpy:
probabilities = softmax(X · Wᵀ + b), as scikit-learn's multinomial logistic regression does.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from dialectbias.dialectid._features import CharNgramFeatures, prepare
from dialectbias.dialectid._labels import canonical_label
from dialectbias.dialects import STANDARD
from dialectbias.errors import ConfigError

FORMAT = "dialectbias-dialect-id"
FORMAT_VERSION = 1
MODEL_JSON, MODEL_NPZ = "model.json", "model.npz"

Verdict = Literal["ok", "other_dialect", "standard", "uncertain", "not_covered"]
VERDICTS: tuple[str, ...] = ("ok", "other_dialect", "standard", "uncertain", "not_covered")


@dataclass(frozen=True)
class DialectCheck:
    """Does a text read as the dialect it should be in?

    verdict: `ok` (predicted == expected); `standard` (predicted standard with p ≥ min_probability);
    `other_dialect` (another label with p ≥ min_probability); `uncertain` (a wrong label with p below it);
    `not_covered` (the identifier has no `expected` label: nothing can be said)."""

    expected: str
    predicted: str
    probability: float
    expected_probability: float | None
    verdict: Verdict

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "predicted": self.predicted, "probability": round(self.probability, 6),
                "expected": self.expected,
                "expected_probability": None if self.expected_probability is None
                else round(self.expected_probability, 6)}


class DialectIdentifier:
    """Labels texts with a dialect (or `standard`) and a probability."""

    def __init__(self, features: CharNgramFeatures, labels: Sequence[str], coef: np.ndarray, intercept: np.ndarray,
                 meta: dict[str, Any] | None = None) -> None:
        coef, intercept = np.asarray(coef, dtype=np.float64), np.asarray(intercept, dtype=np.float64)
        if coef.shape != (len(labels), features.n_features) or intercept.shape != (len(labels),):
            raise ValueError(f"weights of shape {coef.shape} / {intercept.shape} do not fit {len(labels)} labels × "
                             f"{features.n_features} features")
        self.features = features
        self._labels = [str(x) for x in labels]
        self.coef = coef
        self.intercept = intercept
        self.meta = dict(meta or {})

    @property
    def labels(self) -> list[str]:
        return list(self._labels)

    @staticmethod
    def has_words(text: str) -> bool:
        """Whether `text` has a word the features read (an empty, blank or punctuation-only text has none and
        would only get the intercepts' softmax)."""
        return bool(prepare(text))

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), len(labels)) probabilities; a text with no known n-gram gets the intercepts' softmax."""
        if not texts:
            return np.zeros((0, len(self._labels)))
        scores = np.asarray(self.features.transform(texts) @ self.coef.T) + self.intercept
        scores -= scores.max(axis=1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=1, keepdims=True)
        return scores

    def predict(self, texts: Sequence[str]) -> list[tuple[str, float]]:
        """(label, probability) per text: the most probable label (the first in label order on a tie)."""
        proba = self.probabilities(list(texts))
        best = proba.argmax(axis=1)
        return [(self._labels[j], float(proba[i, j])) for i, j in enumerate(best)]

    def check(self, texts: Sequence[str], expected: Sequence[str], min_probability: float = 0.5) -> list[DialectCheck]:
        """A `DialectCheck` per text against the label it should have (names matched case-insensitively, other
        spellings such as `Barisal` or `nds` mapped to the registry name)."""
        if len(texts) != len(expected):
            raise ValueError(f"{len(texts)} texts but {len(expected)} expected labels")
        proba = self.probabilities(list(texts))
        index = {name: j for j, name in enumerate(self._labels)}
        out = []
        for i, want in enumerate(expected):
            name = canonical_label(want)
            j = int(proba[i].argmax()) if len(texts) else 0
            predicted, p = self._labels[j], float(proba[i, j])
            expected_p = float(proba[i, index[name]]) if name in index else None
            out.append(DialectCheck(expected=name, predicted=predicted, probability=p,
                                    expected_probability=expected_p,
                                    verdict=verdict(name, predicted, p, name in index, min_probability)))
        return out

    # -- persistence ------------------------------------------------------------------------------
    def save(self, out_dir: str | Path) -> Path:
        """Write model.json and model.npz into `out_dir` (created); returns the folder."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(out / MODEL_NPZ, terms=np.asarray(self.features.terms, dtype=np.str_),
                            idf=self.features.idf, coef=self.coef, intercept=self.intercept)
        doc = {"format": FORMAT, "version": FORMAT_VERSION, "labels": self._labels,
               "features": {"analyzer": "char_wb", "ngram_range": list(self.features.ngram_range),
                            "sublinear_tf": self.features.sublinear_tf, "norm": "l2",
                            "preprocessing": "dialectbias.text.match_key, then the words of dialectbias.text."
                                             "tokenize joined by spaces"},
               **self.meta}
        (out / MODEL_JSON).write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        return out

    @classmethod
    def load(cls, path: str | Path) -> DialectIdentifier:
        """A model saved by `save` (its folder or its model.json); ConfigError naming the path when it is
        missing, unreadable, of another format version or inconsistent."""
        path = Path(path)
        folder = path.parent if path.name == MODEL_JSON else path
        meta_path, arrays_path = folder / MODEL_JSON, folder / MODEL_NPZ
        hint = f"train one with `dialectbias train-dialect-id CORPUS.yaml --transcripts FILE --out {folder}`"
        if not folder.is_dir() or not meta_path.is_file() or not arrays_path.is_file():
            raise ConfigError(f"{folder}: no dialect-identification model here ({MODEL_JSON} and {MODEL_NPZ}); {hint}")
        try:
            doc = json.loads(meta_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{meta_path}: not a readable model file ({exc}); {hint}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ConfigError(f"{meta_path}: not a dialectbias dialect-identification model (format "
                              f"{doc.get('format') if isinstance(doc, dict) else None!r}); {hint}")
        if doc.get("version") != FORMAT_VERSION:
            raise ConfigError(f"{meta_path}: model format version {doc.get('version')!r}, this dialectbias reads "
                              f"version {FORMAT_VERSION}; {hint}")
        try:
            with np.load(arrays_path, allow_pickle=False) as npz:
                terms, idf = npz["terms"], npz["idf"]
                coef, intercept = npz["coef"], npz["intercept"]
            features = CharNgramFeatures(tuple(str(t) for t in terms), np.asarray(idf, dtype=np.float64),
                                         tuple(doc["features"]["ngram_range"]),
                                         bool(doc["features"]["sublinear_tf"]))
            meta = {k: v for k, v in doc.items() if k not in ("format", "version", "labels", "features")}
            return cls(features, doc["labels"], coef, intercept, meta)
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
            raise ConfigError(f"{folder}: corrupt dialect-identification model ({type(exc).__name__}: {exc}); "
                              f"{hint}") from None


def verdict(expected: str, predicted: str, probability: float, covered: bool, min_probability: float) -> Verdict:
    """The verdict of one check (see `DialectCheck`)."""
    if not covered:
        return "not_covered"
    if predicted == expected:
        return "ok"
    if probability < min_probability:
        return "uncertain"
    return "standard" if predicted == STANDARD else "other_dialect"
