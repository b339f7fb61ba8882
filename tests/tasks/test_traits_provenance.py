"""The packaged trait lists match the German study's released lexicons, pole by pole (needs ../shared/data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialectbias.tasks.probes.association._core import load_traits

LEXICONS = Path(__file__).resolve().parents[3] / "shared" / "data" / "german_dialect_bias" / \
    "lexicons_and_templates.json"

# our trait (the pole attached to dialect speakers) -> the study's dimension; its list 1 is our trait pole
DIMENSIONS = {"careless": "conscientiousness", "close_minded": "open_to_experience", "friendly": "friendly",
              "rural": "urban", "temperamental": "calm", "uneducated": "educated"}


@pytest.fixture(scope="module")
def lexicons() -> dict:
    if not LEXICONS.is_file():
        pytest.skip(f"shared data not available ({LEXICONS}); the provenance check needs it")
    return json.loads(LEXICONS.read_text(encoding="utf-8"))["association_adjectives"]


@pytest.mark.parametrize("trait", sorted(DIMENSIONS))
def test_trait_poles_match_the_released_lists(lexicons: dict, trait: str) -> None:
    ours = load_traits()[trait]
    theirs = lexicons[DIMENSIONS[trait]]
    # the study lists 'nonurban' twice in the rural list; ours keeps it once
    assert ours.trait.adjectives == list(dict.fromkeys(theirs["list1_scored_neg"]))
    assert ours.opposite.adjectives == theirs["list0_scored_pos"]
