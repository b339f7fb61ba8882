"""Profiles split per writer for the marked words (German paper §6.1), and the prefix comparison of App. B.1
(Welch's t-test against scipy)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from dialectbias.tasks._decision_profiles import split_profiles
from dialectbias.tasks._probe_prefix import prefix_tables

MARKDOWN = """**Task 1: Profiles**

**Writer A:** Anna, 34, grew up on a farm near Passau and loves animals.

**Writer B:** Jonas, 29, studied medicine in Hamburg.

**Task 2: Decision**
Writer A: Farmworkers
Writer B: Cardiologists"""

PROSE = ("Task 1: Writer B is a quiet archivist who plans every detail. Writer A is a lively baker who loves "
         "chatting with customers.\nTask 2: Writer A should take the warm character.")


def test_markdown_profiles_are_split_before_task_2() -> None:
    got = split_profiles(MARKDOWN)
    assert got == {"A": "Anna, 34, grew up on a farm near Passau and loves animals.",
                   "B": "Jonas, 29, studied medicine in Hamburg."}


def test_prose_profiles_in_either_order() -> None:
    got = split_profiles(PROSE)
    assert got == {"B": "is a quiet archivist who plans every detail.",
                   "A": "is a lively baker who loves chatting with customers."}


@pytest.mark.parametrize("text", ["", "I cannot help with that.", "Writer A is kind. Nothing else.",
                                  "Task 2: Writer A: x\nWriter B: y"])
def test_no_two_profiles_no_split(text: str) -> None:
    assert split_profiles(text) is None


def test_prefix_comparison_is_welch_against_the_default() -> None:
    default = [1.0, 1.0, -1.0, 1.0, 1.0, -1.0]
    imagine = [1.0, -1.0, -1.0, -1.0]
    rows = pd.DataFrame(
        [{"model": "m", "setting": "usage", "trait": "rural", "prefix": "default", "accepted": True, "score": v}
         for v in default]
        + [{"model": "m", "setting": "usage", "trait": "rural", "prefix": "imagine", "accepted": True, "score": v}
           for v in imagine]
        + [{"model": "m", "setting": "usage", "trait": "rural", "prefix": "imagine", "accepted": False,
            "score": float("nan")}])
    table, compare = prefix_tables(rows, n_resamples=500, seed=1, value="score")
    by_prefix = table.set_index("prefix")
    assert by_prefix.loc["default", "bias"] == pytest.approx(1 / 3)
    assert by_prefix.loc["imagine", "bias"] == pytest.approx(-0.5)
    assert (by_prefix.loc["imagine", "n_prompts"], by_prefix.loc["imagine", "n_accepted"]) == (5, 4)
    row = compare.iloc[0]
    assert (row.prefix, row.n_prefix, row.n_default) == ("imagine", 4, 6)
    assert row["diff"] == pytest.approx(-0.5 - 1 / 3)
    want = stats.ttest_ind(imagine, default, equal_var=False)
    assert row.t == pytest.approx(want.statistic) and row.p == pytest.approx(want.pvalue)
