"""Agreement between annotators and judge-vs-human calibration per dialect, against independent computations
(scikit-learn's kappa, the `krippendorff` package, Lin's CCC and CBS written out by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dialectbias.data import Item
from dialectbias.judges import load_rubric, rlaif_score
from dialectbias.review import (
    Thresholds,
    annotator_agreement,
    judge_calibration,
    queue_kind,
    save_annotation,
    save_snapshot,
    snapshot_history,
)
from dialectbias.store import OVERRIDE_KIND, Store

FIELDS = ["dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length"]


def test_agreement_between_annotators_matches_sklearn_and_krippendorff(tmp_path: Path, rv: Any) -> None:
    from krippendorff import alpha as kalpha
    from sklearn.metrics import cohen_kappa_score

    a = [0, 1, 2, 2, 1, 0]
    b = [0, 2, 2, 1, 1, 0]
    c = [1, 2, 2, 2, None, 0]
    with Store.open(tmp_path / "s.sqlite") as store:
        for i, (x, y, z) in enumerate(zip(a, b, c, strict=True)):
            save_annotation(store, f"t{i}", "a", "validation_3pt", {"label": x})
            save_annotation(store, f"t{i}", "b", "validation_3pt", {"label": y})
            if z is not None:
                save_annotation(store, f"t{i}", "c", "validation_3pt", {"label": z})
        rows = annotator_agreement(store, rv.review_config())
    by_pair = {r["pair"]: r for r in rows if r["queue"] == "validation" and r["dialect"] == "all"}
    assert by_pair["a ~ b"]["n"] == 6
    assert by_pair["a ~ b"]["kappa"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"), abs=1e-4)
    assert by_pair["a ~ c"]["n"] == 5
    expected = kalpha(reliability_data=[a, b, [np.nan if v is None else v for v in c]],
                      level_of_measurement="ordinal")
    assert by_pair["all"]["alpha"] == pytest.approx(expected, abs=1e-4)


def test_error_codes_agree_per_category_as_nominal_values(tmp_path: Path, rv: Any) -> None:
    from sklearn.metrics import cohen_kappa_score

    a = [["entity_misrecognition"], [], ["cultural_bias"], ["entity_misrecognition"], []]
    b = [["entity_misrecognition"], ["entity_misrecognition"], [], ["entity_misrecognition"], []]
    with Store.open(tmp_path / "s.sqlite") as store:
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            save_annotation(store, f"t{i}", "a", "error_coding", {"categories": x})
            save_annotation(store, f"t{i}", "b", "error_coding", {"categories": y})
        rows = annotator_agreement(store, rv.review_config())
    entity = next(r for r in rows if r["value"] == "entity_misrecognition" and r["pair"] == "a ~ b")
    ea = ["entity_misrecognition" in x for x in a]
    eb = ["entity_misrecognition" in y for y in b]
    assert entity["kappa"] == pytest.approx(cohen_kappa_score(ea, eb), abs=1e-4)


def _ccc(x: list[float], y: list[float]) -> float:
    x_, y_ = np.array(x), np.array(y)
    return 2 * np.mean((x_ - x_.mean()) * (y_ - y_.mean())) / (x_.var() + y_.var() + (x_.mean() - y_.mean()) ** 2)


def _cbs(ref: list[float], other: list[float], t: float = 4.0) -> float:
    critical = [i for i, r in enumerate(ref) if r < t]
    recall = sum(other[i] < t for i in critical) / len(critical)
    return recall * (1 - np.mean(np.abs(np.array(ref) - np.array(other))) / 10)


@pytest.fixture
def calibrated(tmp_path: Path, rv: Any) -> dict[str, Any]:
    """A judge agreeing with two annotators in chittagong and disagreeing in sylhet (6 judgments each)."""
    judge_likert = {"chittagong": [(5, 5, 5, 5, 5), (1, 1, 1, 1, 1), (3, 3, 3, 3, 3), (4, 4, 4, 4, 4),
                                   (2, 2, 2, 2, 2), (0, 0, 0, 0, 0)],
                    "sylhet": [(5, 5, 5, 5, 5), (5, 5, 5, 5, 5), (4, 4, 4, 4, 4), (5, 5, 4, 5, 5),
                               (4, 5, 5, 5, 5), (5, 4, 5, 5, 5)]}
    human = {"chittagong": [(5, 5, 4, 5, 5), (1, 1, 1, 1, 1), (3, 3, 3, 3, 2), (4, 4, 4, 4, 4),
                            (2, 2, 2, 2, 2), (0, 0, 0, 0, 0)],
             "sylhet": [(0, 0, 0, 0, 0), (1, 1, 1, 1, 1), (2, 2, 2, 2, 2), (0, 0, 0, 0, 0), (1, 0, 0, 0, 0),
                        (5, 5, 5, 5, 5)]}
    path = tmp_path / "cal.sqlite"
    kind = queue_kind("judgments")
    config = rv.review_config(routed={(rv.JUDGE, "chittagong"), (rv.JUDGE, "sylhet")})
    with Store.open(path) as store:
        store.save_items(Item(id=f"q{i}", variants={"standard": "ক", "chittagong": "খ", "sylhet": "গ"})
                         for i in range(6))
        for dialect, rows in judge_likert.items():
            for i, likert in enumerate(rows):
                jid = rv.add_judgment(store, "model-a", f"q{i}", dialect, confidence=4, likert=likert,
                                      needs_review=False)
                target = kind.target(config, store, jid)
                for annotator in ("ann1", "ann2"):
                    value = kind.annotation(config, store, target, dict(zip(FIELDS, human[dialect][i], strict=True)))
                    save_annotation(store, jid, annotator, OVERRIDE_KIND, value)
    return {"path": path, "judge": judge_likert, "human": human}


def test_judge_calibration_per_dialect(calibrated: dict[str, Any], rv: Any) -> None:
    with Store.open(calibrated["path"]) as store:
        rows = judge_calibration(store, [rv.JUDGE], rv.MODELS, {}, Thresholds(min_pairs=5))
    by_dialect = {r.dialect: r for r in rows}
    assert list(by_dialect) == ["chittagong", "sylhet", "all"]
    for dialect in ("chittagong", "sylhet"):
        j = [rlaif_score(list(x)) for x in calibrated["judge"][dialect]]
        h = [rlaif_score(list(x)) for x in calibrated["human"][dialect]]
        row = by_dialect[dialect]
        assert row.n == 6
        assert row.ccc == pytest.approx(_ccc(h, j), abs=1e-4)
        assert row.cbs == pytest.approx(_cbs(h, j), abs=1e-4)
    assert by_dialect["chittagong"].below == [] and by_dialect["chittagong"].ccc > 0.95
    assert [b.split()[0] for b in by_dialect["sylhet"].below] == ["ccc", "cbs", "kappa"]


def test_calibration_snapshots_accumulate(calibrated: dict[str, Any], rv: Any) -> None:
    with Store.open(calibrated["path"]) as store:
        rows = judge_calibration(store, [rv.JUDGE], rv.MODELS, {}, Thresholds(min_pairs=5))
        save_snapshot(store, rows, Thresholds(), now=100.0)
        relaxed = judge_calibration(store, [rv.JUDGE], rv.MODELS, {}, Thresholds(-1, -1, -1, 5))
        save_snapshot(store, relaxed, Thresholds(-1, -1, -1, 5), now=200.0)
        history = snapshot_history(store, rv.JUDGE)
    assert [h["taken_at"] for h in history] == [100.0] * 3 + [200.0] * 3


def test_too_few_human_scores_are_not_checked(calibrated: dict[str, Any], rv: Any) -> None:
    with Store.open(calibrated["path"]) as store:
        rows = judge_calibration(store, [rv.JUDGE], rv.MODELS, {}, Thresholds(min_pairs=7))
    sylhet = next(r for r in rows if r.dialect == "sylhet")
    assert sylhet.below == [] and "fewer than 7" in sylhet.note and sylhet.ccc is None


def test_on_miscalibrated_review_sends_the_dialects_judgments_to_review(calibrated: dict[str, Any], rv: Any) -> None:
    from dialectbias.config import Experiment
    from dialectbias.review import review_config

    model = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    exp = Experiment.model_validate({"name": "e", "task": "qa_bias", "models": [{"id": "model-a", **model}],
                                     "judges": [{"id": rv.JUDGE, "role": "primary", **model}],
                                     "review": {"on_miscalibrated": "review", "calibration_min_pairs": 5}})
    kind = queue_kind("judgments")
    rubrics = {rv.JUDGE: load_rubric("rlaif")}
    with Store.open(calibrated["path"]) as store:
        assert review_config(exp, rubrics, store).routed == set()  # no snapshot yet: nothing routed
        assert list(kind.targets(review_config(exp, rubrics, store), store)) == []  # all confident (needs_review=0)
        save_snapshot(store, judge_calibration(store, [rv.JUDGE], ["model-a"], {}, Thresholds(min_pairs=5)),
                      Thresholds())
        config = review_config(exp, rubrics, store)
        targets = list(kind.targets(config, store))
    assert config.routed == {(rv.JUDGE, "sylhet")}
    assert len(targets) == 6 and {t.dialect for t in targets} == {"sylhet"}


def test_the_dialects_of_annotated_judgments_only_are_read(calibrated: dict[str, Any], rv: Any) -> None:
    """The report's annotator agreement maps each annotated judgment to its dialect; it reads those judgments
    only, not the store's every judgment (whose dict grew the report's memory with the study, issue 23)."""
    from dialectbias.store import annotated_judgment_variants

    with Store.open(calibrated["path"]) as store:
        extra = rv.add_judgment(store, "model-a", "q0", "standard", confidence=4, likert=(5, 5, 5, 5, 5),
                                needs_review=False)
        variants = annotated_judgment_variants(store)
        assert extra not in variants and len(variants) == 12
        assert set(variants.values()) == {"chittagong", "sylhet"}
