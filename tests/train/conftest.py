"""A tiny random Llama (tests/tiny_llm.py) and a small standard → dialect corpus written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_llm import write_corpus


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Llama, with a chat template (prompt_format: raw must bypass it)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tiny_llm import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-base"))


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus"), identical=2)
