"""The packaged trait lists match the German study's released lexicons, pole by pole (needs ../shared/data)."""

from __future__ import annotations

import json

import pytest

from dialectbias.tasks.probes.association._core import load_traits
from shared_data import GERMAN, shared_path

# our trait (the pole attached to dialect speakers) -> the study's dimension; its list 1 is our trait pole
DIMENSIONS = {"careless": "conscientiousness", "close_minded": "open_to_experience", "friendly": "friendly",
              "rural": "urban", "temperamental": "calm", "uneducated": "educated"}


@pytest.fixture(scope="module")
def lexicons() -> dict:
    path = shared_path(*GERMAN, "lexicons_and_templates.json", why="the provenance check needs it")
    return json.loads(path.read_text(encoding="utf-8"))["association_adjectives"]


@pytest.mark.parametrize("trait", sorted(DIMENSIONS))
def test_trait_poles_match_the_released_lists(lexicons: dict, trait: str) -> None:
    ours = load_traits()[trait]
    theirs = lexicons[DIMENSIONS[trait]]
    # the study lists 'nonurban' twice in the rural list; ours keeps it once
    assert ours.trait.adjectives == list(dict.fromkeys(theirs["list1_scored_neg"]))
    assert ours.opposite.adjectives == theirs["list0_scored_pos"]
