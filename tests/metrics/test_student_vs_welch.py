"""options.t_test (docs/departures.md): the German paper's "independent samples t-test" (§5.1) is Student's
(pooled variance); our default is Welch's. Hand-computed on unequal groups, where the two differ."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from dialectbias.metrics import compare_groups
from dialectbias.tasks.probes._report import comparison_table

A = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # mean 3.5, sample variance 3.5
B = [0.0, 10.0, 20.0]  # mean 10, sample variance 100


def test_student_pools_the_variances_welch_does_not() -> None:
    diff = 3.5 - 10.0
    pooled = (5 * 3.5 + 2 * 100.0) / 7  # (n_a−1)s_a² + (n_b−1)s_b² over n_a + n_b − 2
    t_student = diff / math.sqrt(pooled * (1 / 6 + 1 / 3))
    t_welch = diff / math.sqrt(3.5 / 6 + 100.0 / 3)
    df_welch = (3.5 / 6 + 100.0 / 3) ** 2 / ((3.5 / 6) ** 2 / 5 + (100.0 / 3) ** 2 / 2)
    student = compare_groups(A, B, n_resamples=200, student=True)
    welch = compare_groups(A, B, n_resamples=200)
    assert student.t == pytest.approx(t_student) and welch.t == pytest.approx(t_welch)
    assert student.p == pytest.approx(2 * stats.t.sf(abs(t_student), 7))
    assert welch.p == pytest.approx(2 * stats.t.sf(abs(t_welch), df_welch))
    assert round(t_student, 3) == -1.649 and round(t_welch, 3) == -1.116  # by hand, to 3 places


def test_the_report_tables_use_the_chosen_test() -> None:
    rows = pd.DataFrame({"trait": "rural", "accepted": True, "setting": ["naming"] * 6 + ["usage"] * 3,
                         "bias": A + B})
    student = comparison_table(rows, ["trait"], "setting", "naming", "usage", n_resamples=200, seed=0, student=True)
    welch = comparison_table(rows, ["trait"], "setting", "naming", "usage", n_resamples=200, seed=0)
    assert student.t.iloc[0] == pytest.approx(-1.6491, abs=1e-4)
    assert welch.t.iloc[0] == pytest.approx(-1.1161, abs=1e-4)
