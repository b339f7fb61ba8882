"""Character n-gram TF-IDF features: the n-grams and weights are scikit-learn's (char_wb, sublinear tf, idf,
L2 norm), computed without it."""

from __future__ import annotations

import numpy as np
import pytest

from dialectbias.dialectid._features import CharNgramFeatures, NgramAnalyzer, char_wb_ngrams, prepare

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")

TEXTS = ["তুমি কিতা খাইছো?", "আঁই বাজারত যাইর।", "  আমি,  ভাত\u200c খাই ১২ ", "a", "ঢাকা জেলার প্রধান নদীর নাম কী?",
         "Hello WORLD"]


def test_char_wb_ngrams_by_hand() -> None:
    # " ab " → 1-grams " ", "a", "b", " "; 2-grams " a", "ab", "b "; 3-grams " ab", "ab "
    assert char_wb_ngrams("ab", 1, 3) == [" ", "a", "b", " ", " a", "ab", "b ", " ab", "ab "]
    # a word shorter than n is counted once, then no longer n-grams
    assert char_wb_ngrams("a", 2, 5) == [" a", "a ", " a "]
    assert char_wb_ngrams("", 1, 3) == []


def test_prepare_keeps_words_only() -> None:
    assert prepare("  আমি,  ভাত\u200c খাই ১২। ") == "আমি ভাত খাই 12"
    assert prepare("Hello, WORLD!") == "hello world"
    assert prepare("।?!") == ""


@pytest.mark.parametrize("ngram_range", [(1, 3), (2, 5)])
def test_ngrams_equal_scikit_learn_char_wb(ngram_range: tuple[int, int]) -> None:
    vec = sklearn_text.TfidfVectorizer(analyzer="char_wb", ngram_range=ngram_range, preprocessor=prepare,
                                       lowercase=False)
    analyzer = vec.build_analyzer()
    for text in TEXTS:
        assert NgramAnalyzer(*ngram_range)(text) == analyzer(text)


def test_transform_equals_scikit_learn_tfidf() -> None:
    vec = sklearn_text.TfidfVectorizer(analyzer=NgramAnalyzer(2, 4), sublinear_tf=True, min_df=1)
    vec.fit(TEXTS[:4])
    features = CharNgramFeatures(tuple(sorted(vec.vocabulary_, key=vec.vocabulary_.get)), vec.idf_, (2, 4))
    new = [*TEXTS, "কিতা কিতা কিতা", "zzz"]  # repeated n-grams (sublinear tf) and a text with no known n-gram
    ours, theirs = features.transform(new).toarray(), vec.transform(new).toarray()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert not ours[-1].any()


def test_transform_known_values() -> None:
    # "ab ab" with (2, 2): " a" ×2, "ab" ×2, "b " ×2; sublinear tf 1 + ln 2; idf (1, 2, 1, 5) on (" a", "ab", "b ",
    # "zz"); row = (1, 2, 1, 0)·(1 + ln 2) normalised → (1, 2, 1, 0) / √6
    features = CharNgramFeatures((" a", "ab", "b ", "zz"), np.array([1.0, 2.0, 1.0, 5.0]), (2, 2))
    row = features.transform(["ab ab"]).toarray()[0]
    np.testing.assert_allclose(row, np.array([1, 2, 1, 0]) / np.sqrt(6), atol=1e-15)
    with pytest.raises(ValueError, match="3 terms but 2 idf"):
        CharNgramFeatures(("a", "b", "c"), np.array([1.0, 1.0]), (1, 1))
