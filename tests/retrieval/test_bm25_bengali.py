"""BM25 over our tokens keeps Bengali vowel signs; bm25s' default tokenizer does not (its `\\w` excludes
combining marks), so with it 'আমি' (I) and 'আম' (mango) become the same term."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest

from dialectbias.retrieval import bm25_tokens
from dialectbias.retrieval._sparse import SparseIndex

DOCS = ["আমি ভাত খাই", "আম খুব মিষ্টি"]  # "I eat rice", "mango is very sweet"


def default_tokenizer(text: str) -> list[str]:
    return bm25s.tokenize([text], stopwords=None, return_ids=False, show_progress=False)[0]


def matching_docs(tokenizer, query: str) -> list[int]:  # type: ignore[no-untyped-def]
    retriever = bm25s.BM25()
    retriever.index([tokenizer(d) for d in DOCS], show_progress=False)
    known = [t for t in tokenizer(query) if t in retriever.vocab_dict]
    scores = retriever.get_scores(known) if known else np.zeros(len(DOCS))
    return [i for i, s in enumerate(scores) if s > 0]


def test_our_tokens_keep_vowel_signs() -> None:
    assert bm25_tokens("আমি ভাত খাই।") == ["আমি", "ভাত", "খাই"]


@pytest.mark.parametrize(("query", "expected"), [("আম", [1]), ("আমি", [0]), ("মিষ্টি", [1])])
def test_bengali_query_matches_only_the_right_document(query: str, expected: list[int]) -> None:
    assert matching_docs(bm25_tokens, query) == expected
    index = SparseIndex(DOCS)
    assert [i for i, s in enumerate(index.scores(bm25_tokens(query))) if s > 0] == expected


def test_the_same_check_fails_with_bm25s_default_tokenizer() -> None:
    """Why we tokenise ourselves: the default turns 'আমি' into 'আম', so 'mango' matches 'I eat rice'."""
    assert default_tokenizer("আমি") == ["আম"]
    assert matching_docs(default_tokenizer, "আম") != [1]


def test_unknown_tokens_score_zero() -> None:
    assert SparseIndex(DOCS).scores(["কলা"]).tolist() == [0.0, 0.0]


def test_deep_search_expands_inflections_and_spelling_variants() -> None:
    index = SparseIndex(["গরুর দুধ", "আমি বাড়িতে যাই"])
    assert "গরুর" in index.expand("গরুগুলো", cutoff=75, limit=5)  # shared stem গরু
    assert "বাড়িতে" in index.expand("বাড়ি", cutoff=75, limit=5)
    assert "বাড়িতে" in index.expand("বাড়ীতে", cutoff=75, limit=5)  # ি / ী spelling variant, ratio ≥ 75
    assert index.expand("কলা", cutoff=75, limit=5) == []


def test_deep_scores_average_each_tokens_scaled_score() -> None:
    # token 1 finds only doc 0 (scaled 1.0), token 2 only doc 1 (1.0): each doc gets (1 + 0) / 2
    index = SparseIndex(["গরুর দুধ", "আমি বাড়িতে যাই"])
    assert index.deep_scores(["গরুগুলো", "বাড়ি"], cutoff=75, limit=5).tolist() == pytest.approx([0.5, 0.5])
    assert index.deep_scores(["গরুগুলো"], cutoff=75, limit=5).tolist() == pytest.approx([1.0, 0.0])
