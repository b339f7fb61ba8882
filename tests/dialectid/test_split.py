"""The grouped, stratified held-out split: groups never straddle it, each label's share is close to test_size,
the seed decides it."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dialectbias.dialectid._split import grouped_split


def data(seed: int = 0) -> tuple[list[str], list[str]]:
    """300 transcript-like groups of 1–6 single-label units (three labels) and 200 six-unit parallel groups
    (one standard sentence with five dialect versions)."""
    rng = random.Random(seed)
    labels, groups = [], []
    for g in range(300):
        label = rng.choice(["rangpur", "sylhet", "tangail"])
        for _ in range(rng.randint(1, 6)):
            labels.append(label)
            groups.append(f"t{g}")
    for g in range(200):
        for label in ("standard", "sylhet", "chittagong", "barishal", "noakhali", "mymensingh"):
            labels.append(label)
            groups.append(f"p{g}")
    return labels, groups


def test_groups_never_on_both_sides_and_every_unit_once() -> None:
    labels, groups = data()
    train, test = grouped_split(labels, groups, 0.2, seed=0)
    assert sorted(train + test) == list(range(len(labels)))
    assert not {groups[i] for i in train} & {groups[i] for i in test}


def test_each_label_is_held_out_near_test_size() -> None:
    labels, groups = data()
    _, test = grouped_split(labels, groups, 0.2, seed=3)
    total, held = Counter(labels), Counter(labels[i] for i in test)
    for label, n in total.items():
        assert abs(held[label] / n - 0.2) < 0.03, (label, held[label], n)


def test_seeded() -> None:
    labels, groups = data()
    assert grouped_split(labels, groups, 0.2, seed=1) == grouped_split(labels, groups, 0.2, seed=1)
    assert grouped_split(labels, groups, 0.2, seed=1) != grouped_split(labels, groups, 0.2, seed=2)


def test_small_labels_by_hand() -> None:
    # a: 5 one-unit groups → quota 1 → exactly one held out; b: 2 groups → quota 0.4 < half a group → none;
    # c: one group of 4 units → quota 0.8 < 2 → none
    labels = ["a"] * 5 + ["b"] * 2 + ["c"] * 4
    groups = ["a1", "a2", "a3", "a4", "a5", "b1", "b2", "c1", "c1", "c1", "c1"]
    _, test = grouped_split(labels, groups, 0.2, seed=0)
    assert Counter(labels[i] for i in test) == {"a": 1}


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        grouped_split(["a"], ["g"], 1.0, seed=0)
    with pytest.raises(ValueError, match="2 labels but 1 groups"):
        grouped_split(["a", "b"], ["g"], 0.2, seed=0)
