"""`review.on_miscalibrated: <judge id>`: the fallback judge's own calibration is checked before its scores
replace the primary's, and every alert names the judge it is about and the judge whose scores are used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from dialectbias.config import Experiment
from dialectbias.data import Item
from dialectbias.review import (
    Thresholds,
    judge_calibration,
    queue_kind,
    review_config,
    review_summary,
    routed_to_judge,
    save_annotation,
    save_snapshot,
)
from dialectbias.store import OVERRIDE_KIND, Store

FIELDS = ["dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length"]
PRIMARY, FALLBACK = "judge-1", "judge-2"
# sylhet: the primary judge scores high where the humans score low (miscalibrated); chittagong: it agrees
HUMAN = {"chittagong": [(5, 5, 4, 5, 5), (1, 1, 1, 1, 1), (3, 3, 3, 3, 2), (4, 4, 4, 4, 4), (2, 2, 2, 2, 2),
                        (0, 0, 0, 0, 0)],
         "sylhet": [(0, 0, 0, 0, 0), (1, 1, 1, 1, 1), (2, 2, 2, 2, 2), (0, 0, 0, 0, 0), (1, 0, 0, 0, 0),
                    (5, 5, 5, 5, 5)]}
PRIMARY_LIKERT = {"chittagong": HUMAN["chittagong"],
                  "sylhet": [(5, 5, 5, 5, 5), (5, 5, 5, 5, 5), (4, 4, 4, 4, 4), (5, 5, 4, 5, 5), (4, 5, 5, 5, 5),
                             (5, 4, 5, 5, 5)]}


def _experiment(route: str) -> Experiment:
    model = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    return Experiment.model_validate({
        "name": "e", "task": "qa_bias", "models": [{"id": "model-a", **model}],
        "judges": [{"id": PRIMARY, "role": "primary", **model}, {"id": FALLBACK, "role": "secondary", **model}],
        "review": {"on_miscalibrated": route, "calibration_min_pairs": 5}})


def _store(path: Path, rv: Any, fallback: str) -> Path:
    """Both dialects judged by the primary judge and human-scored; the fallback judge in sylhet agrees with
    the humans (`good`), with the primary (`bad`), or did not judge sylhet (`none`). A snapshot is taken."""
    kind = queue_kind("judgments")
    config = rv.review_config(routed={(PRIMARY, "chittagong"), (PRIMARY, "sylhet")})
    with Store.open(path) as store:
        store.save_items(Item(id=f"q{i}", variants={"standard": "ক", "chittagong": "খ", "sylhet": "গ"})
                         for i in range(6))
        for dialect in ("chittagong", "sylhet"):
            for i in range(6):
                jid = rv.add_judgment(store, "model-a", f"q{i}", dialect, confidence=4, needs_review=False,
                                      likert=PRIMARY_LIKERT[dialect][i], judge=PRIMARY)
                target = kind.target(config, store, jid)
                value = kind.annotation(config, store, target, dict(zip(FIELDS, HUMAN[dialect][i], strict=True)))
                save_annotation(store, jid, "ann1", OVERRIDE_KIND, value)
                other = {"good": HUMAN, "bad": PRIMARY_LIKERT}.get(fallback, HUMAN if dialect == "chittagong" else None)
                if other is not None:
                    rv.add_judgment(store, "model-a", f"q{i}", dialect, confidence=4, needs_review=False,
                                    likert=other[dialect][i], judge=FALLBACK)
        rows = judge_calibration(store, [PRIMARY, FALLBACK], ["model-a"], {}, Thresholds(min_pairs=5))
        save_snapshot(store, rows, Thresholds(min_pairs=5))
    return path


def test_a_calibrated_fallback_judge_replaces_the_primary_where_it_is_miscalibrated(tmp_path: Path, rv: Any) -> None:
    exp = _experiment(FALLBACK)
    with Store.open(_store(tmp_path / "s.sqlite", rv, "good")) as store:
        assert routed_to_judge(store, exp) == {"sylhet": FALLBACK}
        assert review_config(exp, {}, store).routed == set()
        warnings = review_summary(store, exp, {}).warnings
    assert len(warnings) == 1
    assert warnings[0].startswith(f"judge {PRIMARY} is below the thresholds for sylhet (")
    assert warnings[0].endswith(f"judge {FALLBACK}'s scores replace {PRIMARY}'s for sylhet (review.on_miscalibrated)")


def test_a_miscalibrated_fallback_judge_is_not_used_and_the_dialect_goes_to_review(tmp_path: Path, rv: Any) -> None:
    exp = _experiment(FALLBACK)
    with Store.open(_store(tmp_path / "s.sqlite", rv, "bad")) as store:
        routed = routed_to_judge(store, exp)
        config = review_config(exp, rv.review_config().rubrics, store)
        targets = list(queue_kind("judgments").targets(config, store))
        warnings = review_summary(store, exp, {}).warnings
    assert routed == {}
    assert config.routed == {(PRIMARY, "sylhet")}
    assert len(targets) == 6 and {t.dialect for t in targets} == {"sylhet"}
    about_primary = next(w for w in warnings if w.startswith(f"judge {PRIMARY} "))
    assert f"review.on_miscalibrated names judge {FALLBACK}, but judge {FALLBACK} is itself below the thresholds " \
           "for sylhet: ccc " in about_primary
    assert about_primary.endswith(f"its scores are not used, {PRIMARY}'s sylhet judgments go to review instead")
    assert all("scores replace" not in w and "scores are used" not in w for w in warnings)


def test_a_fallback_judge_without_calibration_in_the_dialect_is_not_used(tmp_path: Path, rv: Any) -> None:
    exp = _experiment(FALLBACK)
    with Store.open(_store(tmp_path / "s.sqlite", rv, "none")) as store:
        assert routed_to_judge(store, exp) == {}
        assert review_config(exp, {}, store).routed == {(PRIMARY, "sylhet")}
        warnings = review_summary(store, exp, {}).warnings
    assert len(warnings) == 1
    assert f"but judge {FALLBACK} has no calibration for sylhet" in warnings[0]
    assert warnings[0].endswith("go to review instead")


def test_a_fallback_judge_checked_on_too_few_judgments_is_not_used(tmp_path: Path, rv: Any) -> None:
    """The snapshot was taken over 6 human-scored judgments; the experiment now asks for 7."""
    exp = _experiment(FALLBACK)
    exp.review.calibration_min_pairs = 7
    with Store.open(_store(tmp_path / "s.sqlite", rv, "good")) as store:
        assert routed_to_judge(store, exp) == {}
        assert review_config(exp, {}, store).routed == set()  # nor is the primary: both unchecked at 7


def test_an_alert_about_a_judge_never_says_its_own_scores_are_used(tmp_path: Path, rv: Any) -> None:
    """The fallback judge below the thresholds: its alert says it does not replace the primary's scores."""
    exp = _experiment(FALLBACK)
    with Store.open(_store(tmp_path / "s.sqlite", rv, "bad")) as store:
        warnings = review_summary(store, exp, {}).warnings
    about_fallback = [w for w in warnings if w.startswith(f"judge {FALLBACK} ")]
    assert len(about_fallback) == 1
    assert f"{FALLBACK}'s scores" not in about_fallback[0]
    assert about_fallback[0].endswith(f"as review.on_miscalibrated's fallback judge it does not replace {PRIMARY}'s "
                                      "scores for sylhet")


@pytest.mark.parametrize("route", ["warn", "review"])
def test_alerts_say_what_warn_and_review_do(tmp_path: Path, rv: Any, route: str) -> None:
    exp = _experiment(route)
    with Store.open(_store(tmp_path / "s.sqlite", rv, "bad")) as store:
        warnings = review_summary(store, exp, {}).warnings
    about_primary = next(w for w in warnings if w.startswith(f"judge {PRIMARY} "))
    assert about_primary.endswith({"warn": "its scores stay in the tables (review.on_miscalibrated: warn)",
                                   "review": "its sylhet judgments go to review (review.on_miscalibrated: review)"}
                                  [route])
    about_fallback = next(w for w in warnings if w.startswith(f"judge {FALLBACK} "))
    assert about_fallback.endswith(")")  # no routing clause: judge-2 is no fallback here


def test_routing_a_dialect_to_the_primary_judge_itself_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match="on_miscalibrated: 'judge-1' is the primary judge itself"):
        _experiment(PRIMARY)
