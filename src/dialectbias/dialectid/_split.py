"""A seeded, grouped, stratified held-out split: every unit of a group (the sentences of one transcript, the
standard sentence and all its dialect versions) on one side; each label's held-out share close to `test_size`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def grouped_split(labels: Sequence[str], groups: Sequence[str], test_size: float,
                  seed: int) -> tuple[list[int], list[int]]:
    """(train indices, test indices). Groups are visited in a seeded random order; a group goes to the test side
    when at least half of its units fill a label's remaining test quota (test_size × that label's units). So a
    label seen in a single group (or in too few to fill half a group) stays in training only."""
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be between 0 and 1, got {test_size}")
    if len(labels) != len(groups):
        raise ValueError(f"{len(labels)} labels but {len(groups)} groups")
    names = sorted(set(labels))
    col = {name: j for j, name in enumerate(names)}
    group_ids = sorted(set(groups))
    row = {g: i for i, g in enumerate(group_ids)}
    counts = np.zeros((len(group_ids), len(names)))
    members: list[list[int]] = [[] for _ in group_ids]
    for i, (label, group) in enumerate(zip(labels, groups, strict=True)):
        counts[row[group], col[label]] += 1
        members[row[group]].append(i)
    quota = test_size * counts.sum(axis=0)
    held = np.zeros(len(names))
    test_groups = np.zeros(len(group_ids), dtype=bool)
    for g in np.random.default_rng(seed).permutation(len(group_ids)):
        c = counts[g]
        fill = np.minimum(c, np.maximum(quota - held, 0.0)).sum()
        if fill >= 0.5 * c.sum():
            test_groups[g] = True
            held += c
    train = sorted(i for g, m in enumerate(members) if not test_groups[g] for i in m)
    test = sorted(i for g, m in enumerate(members) if test_groups[g] for i in m)
    return train, test
