"""The hybrid and blended score formulas with hand-computed values (SPEC §4 P1)."""

from __future__ import annotations

import numpy as np
import pytest

from dialectbias.retrieval import RetrievalConfig
from dialectbias.retrieval._scoring import blended, by_max, minmax


def test_defaults_are_the_spec_weights() -> None:
    cfg = RetrievalConfig()
    assert cfg.weights(short=False) == (0.7, 0.3)
    assert cfg.weights(short=True) == (0.3, 0.7)


def test_pool_is_widened_three_times_for_short_queries() -> None:
    cfg = RetrievalConfig()
    assert cfg.pool_size(5, short=False) == 20
    assert cfg.pool_size(5, short=True) == 60
    assert cfg.pool_size(10, short=False) == 40  # at least 4·k


def test_minmax_ranks_bunched_cosines() -> None:
    assert minmax(np.array([0.85, 0.90, 0.95])) == pytest.approx([0.0, 0.5, 1.0])
    assert minmax(np.array([0.9, 0.9])) == pytest.approx([1.0, 1.0])


def test_by_max_keeps_zero_as_no_overlap() -> None:
    assert by_max(np.array([0.0, 2.0, 4.0])) == pytest.approx([0.0, 0.5, 1.0])
    assert by_max(np.array([0.0, 0.0])) == pytest.approx([0.0, 0.0])


def test_blended_score_adds_dialect_bonus_and_character_similarity() -> None:
    # 0.5 + 0.2 + 0.1·0.4 = 0.74 ; 0.2 + 0 + 0.1·1.0 = 0.30
    bonus, score = blended(np.array([0.5, 0.2]), np.array([True, False]), np.array([0.4, 1.0]), RetrievalConfig())
    assert bonus == pytest.approx([0.2, 0.0])
    assert score == pytest.approx([0.74, 0.30])


def test_weights_are_configurable() -> None:
    cfg = RetrievalConfig(dialect_bonus=0.5, char_weight=0.0)
    _, score = blended(np.array([0.5]), np.array([True]), np.array([0.4]), cfg)
    assert score == pytest.approx([1.0])
