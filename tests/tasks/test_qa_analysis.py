"""qa_bias analysis functions (Table 5 agreement, breakdowns, gap CIs, paired tests), hand-checked."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dialectbias.metrics import (
    cohen_kappa,
    critical_bias_sensitivity,
    krippendorff_alpha,
    lin_ccc,
    mean_abs_difference,
    paired_test,
    pearson,
    spearman,
)
from dialectbias.tasks.qa_bias import _analysis as qa

FIELDS = ["dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length"]
MODELS = ["m1", "m2"]
DIALECTS = ["chittagong", "sylhet", "tangail"]
ITEMS = ["i1", "i2", "i3", "i4"]
JUDGES = ["gemini", "gpt", "gemma"]


def synthetic_frame(seed: int = 3) -> pd.DataFrame:
    """2 models × 3 dialects × 4 items × 3 judges; the secondaries are noisy copies of the primary."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, d, i in itertools.product(MODELS, DIALECTS, ITEMS):
        likert = rng.integers(0, 6, size=5)
        for j, judge in enumerate(JUDGES):
            lk = np.clip(likert + (rng.integers(-1, 2, size=5) if j else 0), 0, 5)
            score = float(np.dot([3.0, 2.5, 2.0, 1.5, 1.0], lk) / 5)
            rows.append({"judge_id": judge, "model_id": m, "item_id": i, "variant": d, "judge_score": score,
                         "human_score": math.nan, "final_score": score,
                         **{f: float(v) for f, v in zip(FIELDS, lk, strict=True)}})
    return pd.DataFrame(rows)


# -- Table 5 -----------------------------------------------------------------------------------------


def test_agreement_row_hand_checked() -> None:
    p, s = np.array([2.0, 5.0, 8.0, 3.0]), np.array([3.0, 5.0, 7.0, 6.0])
    row = qa.agreement_row(p, s, ccc_min=0.8, cbs_min=0.75, threshold=4.0)
    # means 4.5 / 5.25, population variances 5.25 / 2.1875, covariance 2.625:
    # C = 2·2.625 / (5.25 + 2.1875 + 0.75²) = 5.25 / 8
    assert row["ccc"] == pytest.approx(0.65625)
    # critical set (primary < 4): rows 0 and 3; the secondary agrees on row 0 only → recall 0.5;
    # MAE = (1 + 0 + 1 + 3) / 4 = 1.25 → CBS = 0.5 × (1 − 0.125)
    assert row["cbs"] == pytest.approx(0.4375)
    assert row["mean_abs_diff"] == pytest.approx(1.25)
    assert row["n"] == 4 and row["pass"] == "FAIL" and row["note"] == ""
    assert qa.agreement_row(p, s, ccc_min=0.6, cbs_min=0.4, threshold=4.0)["pass"] == "PASS"
    assert qa.agreement_row(p, s, ccc_min=0.6, cbs_min=0.5, threshold=4.0)["pass"] == "FAIL"  # CBS short
    assert qa.agreement_row(p, s, ccc_min=0.7, cbs_min=0.4, threshold=4.0)["pass"] == "FAIL"  # C short


def test_cbs_undefined_fails_and_is_not_zero() -> None:
    p, s = np.array([6.0, 7.0, 9.0]), np.array([6.0, 7.0, 9.0])  # perfect agreement, no critical row
    row = qa.agreement_row(p, s, ccc_min=0.8, cbs_min=0.75, threshold=4.0)
    assert row["ccc"] == 1.0 and row["cbs"] is None
    assert row["pass"] == "FAIL" and "CBS undefined" in row["note"]
    empty = qa.agreement_row(np.array([]), np.array([]), ccc_min=0.8, cbs_min=0.75, threshold=4.0)
    assert empty["n"] == 0 and empty["pass"] == "" and empty["note"] == "no pairs"


@pytest.mark.parametrize("n", [1, 2])
def test_agreement_row_on_too_few_pairs_is_undefined_never_pass(n: int) -> None:
    p, s = np.array([2.0, 3.0][:n]), np.array([2.0, 3.0][:n])  # perfect agreement, critical rows present
    row = qa.agreement_row(p, s, ccc_min=0.0, cbs_min=0.0, threshold=4.0)
    assert row["n"] == n and math.isnan(row["ccc"]) and row["cbs"] is None
    assert math.isnan(row["pearson"]) and math.isnan(row["spearman"])
    assert row["pass"] == "" and row["note"] == "n < 3: agreement undefined"
    assert row["mean_abs_diff"] == 0.0


def test_agreement_min_pairs_is_a_setting() -> None:
    p, s = np.array([2.0, 3.0]), np.array([2.0, 3.0])
    row = qa.agreement_row(p, s, ccc_min=0.8, cbs_min=0.75, threshold=4.0, min_pairs=2)
    assert row["ccc"] == 1.0 and row["cbs"] == 1.0 and row["pass"] == "PASS"
    row = qa.agreement_row(np.arange(4.0), np.arange(4.0), ccc_min=0.8, cbs_min=0.75, threshold=4.0,
                           min_pairs=5)
    assert row["pass"] == "" and row["note"] == "n < 5: agreement undefined"


def test_agreement_table_row_over_one_pair_has_no_verdict() -> None:
    frame = synthetic_frame()
    # keep a single sylhet pair: every other sylhet judgment of the secondary is missing
    drop = (frame.judge_id == "gpt") & (frame.variant == "sylhet") & ~(
        (frame.item_id == "i1") & (frame.model_id == "m1"))
    table = qa.agreement_table(frame[~drop], "gemini", ["gpt"], ccc_min=-1.0, cbs_min=0.0, threshold=11.0,
                               models=MODELS, dialects=DIALECTS)
    row = table[(table.scope == "dialect") & (table.group == "sylhet")].iloc[0]
    assert row.n == 1 and math.isnan(row.ccc) and pd.isna(row.cbs)
    assert row["pass"] == "" and row.note == "n < 3: agreement undefined"
    # the other dialects have 8 pairs, thresholds any score passes: PASS
    assert (table[(table.scope == "dialect") & (table.group != "sylhet")]["pass"] == "PASS").all()


def test_kappa_and_alpha_on_too_few_pairs_are_undefined_with_a_note() -> None:
    frame = synthetic_frame()
    two = frame[(frame.item_id == "i1") & (frame.variant == "sylhet")]  # 2 units (one per model)
    kappa = qa.likert_kappa(two, "gemini", ["gpt"], FIELDS)
    assert kappa.n.tolist() == [2] * 5 and kappa.kappa_quadratic.isna().all()
    assert (kappa.note == "n < 3: undefined").all()
    alpha, units = qa.interval_alpha(two, JUDGES)
    assert units == 2 and math.isnan(alpha)
    assert qa.undefined_note(units, alpha, 3) == "n < 3: undefined"


def test_agreement_table_equals_metrics_computed_independently() -> None:
    frame = synthetic_frame()
    frame.loc[(frame.judge_id == "gpt") & (frame.item_id == "i1") & (frame.model_id == "m1")
              & (frame.variant == "sylhet"), "judge_score"] = np.nan  # one unscored secondary judgment
    table = qa.agreement_table(frame, "gemini", ["gpt", "gemma"], ccc_min=0.5, cbs_min=0.5, threshold=4.0,
                               models=MODELS, dialects=DIALECTS)
    assert list(table.columns) == qa.AGREEMENT_COLUMNS
    assert len(table) == 2 * (1 + len(DIALECTS) + len(MODELS))
    for sec in ("gpt", "gemma"):
        a = frame[frame.judge_id == "gemini"].set_index(qa.KEYS).judge_score
        b = frame[frame.judge_id == sec].set_index(qa.KEYS).judge_score
        both = pd.concat([a.rename("p"), b.rename("s")], axis=1).dropna().reset_index()
        for scope, col, group in [("overall", None, "all"), ("dialect", "variant", "sylhet"),
                                  ("model", "model_id", "m2")]:
            sub = both if col is None else both[both[col] == group]
            row = table[(table.secondary == sec) & (table.scope == scope) & (table.group == group)].iloc[0]
            assert row.n == len(sub)
            assert row.ccc == pytest.approx(lin_ccc(sub.p, sub.s))
            assert row.pearson == pytest.approx(pearson(sub.p, sub.s))
            assert row.spearman == pytest.approx(spearman(sub.p, sub.s))
            assert row.mean_abs_diff == pytest.approx(mean_abs_difference(sub.p, sub.s))
            cbs = critical_bias_sensitivity(sub.p, sub.s, threshold=4.0)
            assert (pd.isna(row.cbs) and cbs is None) or row.cbs == pytest.approx(cbs)
    overall = table[(table.scope == "overall")].set_index("secondary")
    assert overall.loc["gpt", "n"] == 23 and overall.loc["gpt", "dropped_unscored"] == 1
    assert overall.loc["gemma", "n"] == 24 and overall.loc["gemma", "dropped_unscored"] == 0
    by_dialect = table[(table.secondary == "gpt") & (table.scope == "dialect")].set_index("group")
    assert by_dialect.loc["sylhet", "dropped_unscored"] == 1
    assert by_dialect.loc["tangail", "dropped_unscored"] == 0


def test_agreement_uses_judge_scores_not_overrides() -> None:
    frame = synthetic_frame()
    frame["human_score"] = 10.0
    frame["final_score"] = 10.0
    pairs, dropped = qa.pair_judges(frame, "gemini", "gpt")
    assert dropped == 0 and (pairs.p != 10.0).any()


def test_likert_kappa_and_alpha_equal_metrics() -> None:
    frame = synthetic_frame()
    frame.loc[3, FIELDS] = np.nan  # an unparsed judgment has no Likert values
    kappa = qa.likert_kappa(frame, "gemini", ["gpt", "gemma"], FIELDS)
    assert list(kappa.columns) == qa.KAPPA_COLUMNS and len(kappa) == 10
    both = frame[frame.judge_id == "gemini"][[*qa.KEYS, *FIELDS]].merge(
        frame[frame.judge_id == "gemma"][[*qa.KEYS, *FIELDS]], on=qa.KEYS, suffixes=("_p", "_s"))
    ok = both["factual_correctness_p"].notna() & both["factual_correctness_s"].notna()
    want = cohen_kappa(both.loc[ok, "factual_correctness_p"].astype(int).tolist(),
                       both.loc[ok, "factual_correctness_s"].astype(int).tolist(), weights="quadratic",
                       labels=range(6))
    got = kappa[(kappa.secondary == "gemma") & (kappa.field == "factual_correctness")].iloc[0]
    assert got.kappa_quadratic == pytest.approx(want) and got.n == int(ok.sum())

    frame.loc[5, "judge_score"] = np.nan  # a missing rating
    alpha, units = qa.interval_alpha(frame, JUDGES)
    wide = frame.pivot_table(index=qa.KEYS, columns="judge_id", values="judge_score", dropna=False)
    data = [[None if pd.isna(v) else v for v in wide[j]] for j in JUDGES]
    assert alpha == pytest.approx(krippendorff_alpha(data, "interval"))
    assert units == len(MODELS) * len(DIALECTS) * len(ITEMS)


def test_interval_alpha_hand_checked() -> None:
    # units (1, 2) and (3, 3): D_o = 2·2·0.5/1 + 0 = 2; all ratings 1, 2, 3, 3: SS = 2.75, D_e = 2·4·2.75 = 22
    # α = 1 − 3·2/22 = 8/11 (Krippendorff's coincidence-matrix formula gives the same)
    frame = pd.DataFrame({"judge_id": ["a", "b", "a", "b"], "model_id": "m", "item_id": ["x", "x", "y", "y"],
                          "variant": "d", "judge_score": [1.0, 2.0, 3.0, 3.0]})
    alpha, units = qa.interval_alpha(frame, ["a", "b"], min_pairs=2)
    assert alpha == pytest.approx(8 / 11) and units == 2
    assert alpha == pytest.approx(krippendorff_alpha([[1, 3], [2, 3]], "interval", min_pairs=2))


# -- breakdowns --------------------------------------------------------------------------------------


BREAKDOWN = pd.DataFrame({
    "model_id": ["m1", "m1", "m1", "m2", "m2", "m2"],
    "item_id": ["a", "b", "c", "a", "b", "c"],
    "final_score": [2.0, 4.0, 9.0, 6.0, np.nan, 7.0],
    "question_type": ["definitional", "definitional", "factual", "definitional", "definitional", None],
})


def test_breakdown_means_hand_checked() -> None:
    t = qa.breakdown(BREAKDOWN, "question_type", ["m1", "m2"], n_resamples=200).set_index(
        ["model", "question_type"])
    assert list(t.reset_index().columns) == ["model", "question_type", "n", "mean_score", "ci_low", "ci_high"]
    assert t.loc[("m1", "definitional"), "mean_score"] == 3.0 and t.loc[("m1", "factual"), "mean_score"] == 9.0
    assert t.loc[("m1", "all"), "mean_score"] == 5.0 and t.loc[("m2", "all"), "mean_score"] == 6.5
    assert t.loc[("m2", "definitional"), "mean_score"] == 6.0 and t.loc[("m2", "(none)"), "mean_score"] == 7.0
    assert t.loc[("model_avg", "definitional"), "mean_score"] == 4.5
    assert t.loc[("model_avg", "all"), "mean_score"] == 5.75
    assert t.loc[("m1", "(none)"), "n"] == 0 and math.isnan(t.loc[("m1", "(none)"), "mean_score"])
    assert t.loc[("model_avg", "(none)"), "mean_score"] == 7.0  # only m2 has one
    assert [int(t.loc[("m1", g), "n"]) for g in ("definitional", "factual", "all")] == [2, 1, 3]


def test_breakdown_cis_are_seeded_and_contain_the_mean() -> None:
    scores = synthetic_frame()
    scores = scores[scores.judge_id == "gemini"].assign(
        domain=lambda f: f.item_id.map({"i1": "x", "i2": "x", "i3": "y", "i4": "y"}))
    t = qa.breakdown(scores, "domain", MODELS, n_resamples=1000, seed=4)
    assert t.ci_low.notna().all() and t.ci_high.notna().all()
    assert ((t.ci_low <= t.mean_score) & (t.mean_score <= t.ci_high)).all()
    pd.testing.assert_frame_equal(t, qa.breakdown(scores, "domain", MODELS, n_resamples=1000, seed=4))
    assert not np.allclose(t.ci_low, qa.breakdown(scores, "domain", MODELS, n_resamples=1000, seed=5).ci_low)


def test_breakdown_ci_is_table_4s_on_the_same_data() -> None:
    """One dialect and one question type: the breakdown cell is the gap table's cell, so its interval is the
    gap's mirrored (score = 10 − gap), from the same item resamples."""
    frame = synthetic_frame()
    scores = frame[(frame.judge_id == "gemini") & (frame.variant == "sylhet")].assign(question_type="why")
    t = qa.breakdown(scores, "question_type", MODELS, n_resamples=700, seed=9).set_index(["model", "question_type"])
    gaps = qa.gap_table(scores, MODELS, ["sylhet"], n_resamples=700, seed=9).set_index(["model", "dialect"])
    for m in MODELS:
        assert t.loc[(m, "why"), "ci_low"] == pytest.approx(10 - gaps.loc[(m, "sylhet"), "ci_high"])
        assert t.loc[(m, "why"), "ci_high"] == pytest.approx(10 - gaps.loc[(m, "sylhet"), "ci_low"])
    assert t.loc[("model_avg", "why"), "ci_low"] == pytest.approx(10 - gaps.loc[("all", "sylhet"), "ci_high"])


def test_breakdown_ci_hand_checked() -> None:
    """Items pooled over dialects: a resample draws items, each with all its judgments (ratio of sums)."""
    scores = pd.DataFrame({"model_id": "m", "item_id": ["a", "a", "b", "c"], "final_score": [1.0, 3.0, 6.0, 8.0],
                           "domain": "d"})
    b, seed = 400, 2
    t = qa.breakdown(scores, "domain", ["m"], n_resamples=b, seed=seed).set_index(["model", "domain"])
    sums, counts = np.array([4.0, 6.0, 8.0]), np.array([2.0, 1.0, 1.0])
    draws = np.random.default_rng(seed).integers(0, 3, size=(b, 3))
    lo, hi = np.quantile(sums[draws].sum(axis=1) / counts[draws].sum(axis=1), [0.025, 0.975])
    assert t.loc[("m", "d"), "mean_score"] == pytest.approx(18 / 4)
    assert (t.loc[("m", "d"), "ci_low"], t.loc[("m", "d"), "ci_high"]) == (pytest.approx(lo), pytest.approx(hi))


def test_model_size_and_scale_spearman() -> None:
    class M:
        def __init__(self, id: str, family: str | None, params_b: float | None) -> None:
            self.id, self.family, self.params_b = id, family, params_b

    matrix = pd.DataFrame({"model": ["a", "b", "c", "d", "dialect_avg"], "avg": [6.0, 8.0, 7.0, 5.0, 6.5]})
    configs = [M("a", "x", 1), M("b", "x", 10), M("c", "x", 100), M("d", "y", None)]
    sizes = qa.model_size_table(matrix, configs)
    assert sizes.mean_gap.tolist() == [4.0, 2.0, 3.0, 5.0]
    assert sizes.gap_ci_low.isna().all()  # no gap table given
    scale = qa.scale_spearman(sizes).set_index("family")
    assert scale.loc["x", "n_models"] == 3
    assert scale.loc["x", "spearman_params_vs_score"] == pytest.approx(0.5)
    assert "y" not in scale.index  # no size
    assert scale.loc["all", "n_models"] == 3


def test_model_size_gap_ci_is_the_gap_tables_model_row() -> None:
    class M:
        def __init__(self, id: str) -> None:
            self.id, self.family, self.params_b = id, "f", 1.0

    scores = synthetic_frame()
    scores = scores[scores.judge_id == "gemini"]
    gaps = qa.gap_table(scores, MODELS, DIALECTS, n_resamples=500, seed=1)
    matrix = pd.DataFrame({"model": MODELS, "avg": [10 - g for g in gaps.set_index(["model", "dialect"]).loc[
        [(m, "all") for m in MODELS], "gap"]]})
    sizes = qa.model_size_table(matrix, [M(m) for m in MODELS], gaps=gaps).set_index("model")
    row = gaps.set_index(["model", "dialect"]).loc[("m2", "all")]
    assert (sizes.loc["m2", "gap_ci_low"], sizes.loc["m2", "gap_ci_high"]) == (row.ci_low, row.ci_high)
    assert sizes.loc["m2", "gap_ci_low"] <= sizes.loc["m2", "mean_gap"] <= sizes.loc["m2", "gap_ci_high"]


# -- gap with bootstrap CIs --------------------------------------------------------------------------


def test_gap_table_means_and_cis() -> None:
    frame = synthetic_frame()
    scores = frame[frame.judge_id == "gemini"].copy()
    scores.loc[scores.index[0], "final_score"] = np.nan  # m1/chittagong/i1 unscored
    gaps = qa.gap_table(scores, MODELS, DIALECTS, n_resamples=2000, seed=5)
    assert list(gaps.columns) == qa.GAP_COLUMNS
    assert len(gaps) == len(MODELS) * len(DIALECTS) + len(MODELS) + len(DIALECTS) + 1
    cells = gaps.set_index(["model", "dialect"])
    for m, d in itertools.product(MODELS, DIALECTS):
        v = scores[(scores.model_id == m) & (scores.variant == d)].final_score.dropna()
        row = cells.loc[(m, d)]
        assert row.n == len(v) and row.mean_score == pytest.approx(v.mean())
        assert row.gap == pytest.approx(10 - v.mean())
        assert row.ci_low <= row.gap <= row.ci_high or v.nunique() == 1
    # aggregate rows are macro means of the cells, as in the Table 4 matrix
    assert cells.loc[("m2", "all"), "mean_score"] == pytest.approx(
        np.mean([cells.loc[("m2", d), "mean_score"] for d in DIALECTS]))
    assert cells.loc[("all", "sylhet"), "mean_score"] == pytest.approx(
        np.mean([cells.loc[(m, "sylhet"), "mean_score"] for m in MODELS]))
    assert cells.loc[("all", "all"), "n"] == len(scores) - 1
    again = qa.gap_table(scores, MODELS, DIALECTS, n_resamples=2000, seed=5)
    pd.testing.assert_frame_equal(gaps, again)  # seeded
    other = qa.gap_table(scores, MODELS, DIALECTS, n_resamples=2000, seed=6)
    assert not np.allclose(gaps.ci_low, other.ci_low)


def test_gap_ci_equals_a_plain_item_bootstrap() -> None:
    """Complete cells: the matmul bootstrap is exactly the percentile bootstrap of the item mean with
    the same item draws."""
    frame = synthetic_frame()
    scores = frame[frame.judge_id == "gemini"]
    b, seed = 500, 11
    gaps = qa.gap_table(scores, MODELS, DIALECTS, n_resamples=b, seed=seed).set_index(["model", "dialect"])
    draws = np.random.default_rng(seed).integers(0, len(ITEMS), size=(b, len(ITEMS)))
    for m, d in [("m1", "sylhet"), ("m2", "tangail")]:
        cell = scores[(scores.model_id == m) & (scores.variant == d)].set_index("item_id").final_score
        x = cell.reindex(sorted(ITEMS)).to_numpy()
        lo, hi = np.quantile(x[draws].mean(axis=1), [0.025, 0.975])
        assert gaps.loc[(m, d), "ci_low"] == pytest.approx(10 - hi)
        assert gaps.loc[(m, d), "ci_high"] == pytest.approx(10 - lo)


# -- paired tests ------------------------------------------------------------------------------------


def test_paired_dialects_and_models_match_scipy() -> None:
    frame = synthetic_frame()
    scores = frame[frame.judge_id == "gemini"]
    cube, items = qa.score_cube(scores, MODELS, DIALECTS)
    assert items == ITEMS and cube.shape == (2, 4, 3)
    dia = qa.paired_dialects(cube, MODELS, DIALECTS)
    assert list(dia.columns) == ["model", "dialect_a", "dialect_b", *qa.PAIRED_STAT_COLUMNS]
    assert len(dia) == 2 * 3
    row = dia[(dia.model == "m2") & (dia.dialect_a == "chittagong") & (dia.dialect_b == "tangail")].iloc[0]
    s = scores[scores.model_id == "m2"].set_index(["variant", "item_id"]).final_score
    a, b = s.loc["chittagong"].reindex(ITEMS).to_numpy(), s.loc["tangail"].reindex(ITEMS).to_numpy()
    want = paired_test(a, b)
    assert row.n == 4 and row.mean_diff == pytest.approx(want.mean_diff)
    assert row.mean_a == pytest.approx(a.mean()) and row.mean_b == pytest.approx(b.mean())
    assert row.t_pvalue == pytest.approx(want.t_pvalue, nan_ok=True)
    mod = qa.paired_models(cube, MODELS)
    assert list(mod.columns) == ["model_a", "model_b", *qa.PAIRED_STAT_COLUMNS] and len(mod) == 1
    x = scores[scores.model_id == "m1"].set_index(["item_id", "variant"]).final_score
    y = scores[scores.model_id == "m2"].set_index(["item_id", "variant"]).final_score.reindex(x.index)
    assert mod.n[0] == 12
    assert mod.t_pvalue[0] == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert mod.wilcoxon_pvalue[0] == pytest.approx(paired_test(x, y).wilcoxon_pvalue)


def test_field_agreement_per_field_ccc_and_alpha_equal_metrics() -> None:
    frame = synthetic_frame()
    frame.loc[3, FIELDS] = np.nan  # an unparsed judgment has no field values
    table = qa.field_agreement(frame, "gemini", ["gpt", "gemma"], FIELDS)
    assert list(table.columns) == qa.FIELD_AGREEMENT_COLUMNS and len(table) == 10
    field = "content_completeness"
    both = frame[frame.judge_id == "gemini"][[*qa.KEYS, field]].merge(
        frame[frame.judge_id == "gpt"][[*qa.KEYS, field]], on=qa.KEYS, suffixes=("_p", "_s")).dropna()
    got = table[(table.secondary == "gpt") & (table.field == field)].iloc[0]
    assert got.n == len(both)
    assert got.ccc == pytest.approx(lin_ccc(both[f"{field}_p"], both[f"{field}_s"]))
    pair = frame[frame.judge_id.isin(["gemini", "gpt"])]
    wide = pair.pivot_table(index=qa.KEYS, columns="judge_id", values=field, dropna=False)
    data = [[None if pd.isna(v) else v for v in wide[j]] for j in ("gemini", "gpt")]
    assert got.alpha_interval == pytest.approx(krippendorff_alpha(data, "interval"))


def test_field_agreement_is_undefined_under_min_pairs() -> None:
    frame = synthetic_frame()
    table = qa.field_agreement(frame.head(4), "gemini", ["gpt"], FIELDS[:1], min_pairs=3)
    row = table.iloc[0]
    assert row.n < 3 and math.isnan(row.ccc) and row.note.startswith(("n < 3", "no pairs"))


def test_paired_tests_in_blocks_equal_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model-pair tests run a block of pairs at a time so memory stays bounded (issue 23); the blocks must
    not change a single figure: 8 models (28 pairs) × 120 rows with ties, NaNs and > 50 pairs per column."""
    rng = np.random.default_rng(5)
    cube = rng.integers(0, 11, size=(8, 40, 3)).astype(float)
    cube[rng.random(cube.shape) < 0.1] = np.nan
    names = [f"m{i}" for i in range(8)]
    whole = qa.paired_models(cube, names)
    monkeypatch.setattr(qa, "_PAIRED_BLOCK_ELEMENTS", 250)  # 2 pairs per block (120 rows)
    blocked = qa.paired_models(cube, names)
    pd.testing.assert_frame_equal(blocked, whole)
    assert len(whole) == 28 and whole.wilcoxon_pvalue.notna().all()
    dialects = qa.paired_dialects(cube, names, ["a", "b", "c"])
    monkeypatch.setattr(qa, "_PAIRED_BLOCK_ELEMENTS", 10**9)
    pd.testing.assert_frame_equal(qa.paired_dialects(cube, names, ["a", "b", "c"]), dialects)
