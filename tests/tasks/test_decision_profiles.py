"""Profiles split per writer for the marked words (German paper §6.1), grouped per setting, and the prefix
comparison of App. B.1 (Welch's t-test against scipy)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from dialectbias.tasks.probes._prefix import prefix_tables
from dialectbias.tasks.probes.decision import _report as _decision_report
from dialectbias.tasks.probes.decision._profiles import split_profiles

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


def _profile(a: str, b: str) -> str:
    return f"Task 1:\nWriter A: {a}\nWriter B: {b}\nTask 2:\nWriter A: x\nWriter B: y"


def test_marked_words_keep_the_naming_and_usage_profiles_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 19 item 11: per setting × scenario × model × dialect, the prior from the same setting only."""
    answers = {"n1": _profile("farmer of fields", "banker of towers"), "u1": _profile("baker", "lawyer"),
               "n2": _profile("named other", "named prior"), "u2": _profile("usage other", "usage prior")}
    monkeypatch.setattr(_decision_report, "_generations", lambda task, store: iter(answers.items()))
    rows = pd.DataFrame([
        {"request_id": "n1", "setting": "naming", "model": "m", "dialect": "bar", "scenario": "rural-1",
         "dialect_writer": "A"},
        {"request_id": "u1", "setting": "usage", "model": "m", "dialect": "bar", "scenario": "rural-1",
         "dialect_writer": "B"},
        {"request_id": "n2", "setting": "naming", "model": "m", "dialect": "bar", "scenario": "rural-2",
         "dialect_writer": "A"},
        {"request_id": "u2", "setting": "usage", "model": "m", "dialect": "bar", "scenario": "rural-2",
         "dialect_writer": "A"},
    ])
    groups, unsplit = _decision_report.profile_inputs(None, None, rows)  # type: ignore[arg-type]
    by_key = {(g.setting, g.task): g for g in groups}
    assert unsplit == 0 and set(by_key) == {("naming", "rural-1"), ("usage", "rural-1"), ("naming", "rural-2"),
                                            ("usage", "rural-2")}
    naming, usage = by_key[("naming", "rural-1")], by_key[("usage", "rural-1")]
    assert (naming.dialect_texts, naming.standard_texts) == (["farmer of fields"], ["banker of towers"])
    assert (usage.dialect_texts, usage.standard_texts) == (["lawyer"], ["baker"])
    assert sorted(naming.prior_texts) == ["named other", "named prior"]  # not the usage profiles
    assert sorted(usage.prior_texts) == ["usage other", "usage prior"]
