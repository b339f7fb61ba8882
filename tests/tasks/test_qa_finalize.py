"""`QABiasTask._finalize_judgment` end to end on a small store: the script/refusal rule as stored.

Scores are hand-computed with Σ w·L / 5, weights 3, 2.5, 2, 1.5, 1 (Bengali paper §3.3):
[5,5,5,5,5] → 10.0; [4,3,5,2,1] → (12 + 7.5 + 10 + 3 + 1)/5 = 6.7; [0,1,5,4,5] → (0 + 2.5 + 10 + 6 + 5)/5 = 4.7.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectbias.config import load_experiment
from dialectbias.judges import RlaifJudgment, parse_structured
from dialectbias.run._specs import RequestSpec
from dialectbias.run._stage import Outcome
from dialectbias.store import Store
from dialectbias.tasks.qa_bias import QABiasTask
from dialectbias.tasks.qa_bias._report import load_judgments

FULL, MID, LOW, ZERO = [5, 5, 5, 5, 5], [4, 3, 5, 2, 1], [0, 1, 5, 4, 5], [0, 0, 0, 0, 0]
FIELDS = ["dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length"]
STANDARD_ANSWER = "ঢাকা বাংলাদেশের রাজধানী।"


class Finalizer:
    """A qa_bias store with model-a's standard answers; `judge(answer, …)` stores `answer` as a dialect
    answer of a fresh item, finalizes a judge output for it and returns the stored judgment."""

    def __init__(self, task: QABiasTask, store: Store) -> None:
        self.task, self.store = task, store
        self.model, self.judge_model = task.exp.models[0], task.exp.judges[0]
        self.items = iter(store.iter_items())

    def _add(self, spec: RequestSpec, output: str | None = None) -> dict[str, Any]:
        row = spec.to_row()
        self.store.add_requests([row])
        if output is not None:
            self.store.write([("results", {"request_id": row["request_id"], "status": "ok", "output": output,
                                           "completed_at": time.time()})])
        return row

    def judge(self, answer: str, likert: list[int], *, script_valid: bool = True, refusal: bool = False,
              confidence: int = 5) -> dict[str, Any]:
        item = next(self.items)
        for spec in self.task._generation_requests(self.store, self.model):
            if not isinstance(spec, RequestSpec) or spec.item_id != item.id:
                continue
            self._add(spec, STANDARD_ANSWER if spec.variant == "standard" else answer)
        spec = next(s for s in self.task._judge_requests(self.store, self.judge_model)
                    if isinstance(s, RequestSpec) and s.item_id == item.id and s.variant == "chittagong"
                    and s.meta["model_id"] == self.model.id)
        request_id = self._add(spec)["request_id"]
        row = self.store.query("SELECT * FROM requests WHERE request_id=?", (request_id,))[0]
        output = RlaifJudgment(chain_of_thought_reasoning="…", script_valid=script_valid, refusal=refusal,
                               confidence=confidence, **dict(zip(FIELDS, likert, strict=True))).model_dump_json()
        outcome = Outcome(output=output, source_request_id=request_id, parsed=parse_structured(output, RlaifJudgment))
        self.store.write(self.task.finalize_judgment(self.store, row, outcome))
        return dict(self.store.query("SELECT * FROM judgments WHERE request_id=?", (request_id,))[0])


@pytest.fixture
def fin(tmp_path: Path, qa: Any) -> Iterator[Finalizer]:
    project = qa.make_project(tmp_path / "exp", "http://127.0.0.1:9/v1", n_items=10)
    task = QABiasTask(load_experiment(project.yaml_path))
    with Store.open(tmp_path / "exp" / "store.sqlite") as store:
        store.save_items(task.load_items())
        yield Finalizer(task, store)


def picked(j: dict[str, Any]) -> tuple[Any, ...]:
    """score, flagged, needs_review, the code's script verdict (1 ok, 0 invalid, None indeterminate) and the
    judge's (1/0), from the stored record (`checks`, `parsed`)."""
    code = {"ok": 1, "invalid": 0, "indeterminate": None}[json.loads(j["checks"])["script"]["status"]]
    return j["score"], j["flagged"], j["needs_review"], code, int(json.loads(j["parsed"])["script_valid"])


def code_refusal(j: dict[str, Any]) -> str | None:
    return json.loads(j["checks"])["refusal"]


@pytest.mark.parametrize("answer", ["১৯৭১", "64", "৬৪"])
def test_number_only_answer_keeps_judge_score_and_goes_to_review(fin: Finalizer, answer: str) -> None:
    j = fin.judge(answer, FULL)
    assert picked(j) == (10.0, 1, 1, None, 1)
    assert j["reason"].startswith("review: script: indeterminate (no letters")


def test_bengali_answer_with_lowercase_term_scores_normally(fin: Finalizer) -> None:
    j = fin.judge("এটি একটি software।", MID)
    assert (*picked(j), j["reason"]) == (6.7, 0, 0, 1, 1, None)


def test_judge_and_code_agree_romanized_answer_is_zeroed(fin: Finalizer) -> None:
    j = fin.judge("ami bhalo achi", ZERO, script_valid=False)
    assert picked(j) == (0.0, 0, 0, 0, 0)
    assert j["reason"].startswith("zeroed: script: judge and code agree")


def test_code_finds_clearly_not_bengali_zeroes_against_the_judge_and_flags(fin: Finalizer) -> None:
    j = fin.judge("भारत की राजधानी नई दिल्ली है।", FULL)
    assert picked(j) == (0.0, 1, 1, 0, 1)
    assert j["reason"].startswith("zeroed: script: code finds it clearly not bengali script")


def test_judge_says_script_invalid_code_disagrees_keeps_judge_score(fin: Finalizer) -> None:
    j = fin.judge(STANDARD_ANSWER, LOW, script_valid=False)
    assert picked(j) == (4.7, 1, 1, 1, 0)
    assert j["reason"].startswith("review: script: judge says invalid; code says valid")


def test_judge_and_code_agree_refusal_is_zeroed(fin: Finalizer) -> None:
    j = fin.judge("আমি দুঃখিত, এই প্রশ্নের উত্তর দিতে পারছি না।", ZERO, refusal=True)
    assert (*picked(j), code_refusal(j), j["reason"]) == (
        0.0, 0, 0, 1, 1, "bn_sorry", "zeroed: refusal: judge and code agree (pattern bn_sorry)")


def test_code_detects_refusal_judge_does_not_keeps_judge_score(fin: Finalizer) -> None:
    j = fin.judge("আমি দুঃখিত, এই প্রশ্নের উত্তর দিতে পারছি না।", MID)
    assert picked(j) == (6.7, 1, 1, 1, 1)
    assert j["reason"] == "review: refusal: code found pattern bn_sorry; judge says no refusal"


def test_judge_says_refusal_code_does_not_keeps_judge_score(fin: Finalizer) -> None:
    j = fin.judge(STANDARD_ANSWER, LOW, refusal=True)
    assert (*picked(j), code_refusal(j)) == (4.7, 1, 1, 1, 1, None)


def test_low_confidence_alone_goes_to_review_unflagged(fin: Finalizer) -> None:
    j = fin.judge(STANDARD_ANSWER, MID, confidence=3)
    assert (*picked(j), j["reason"]) == (6.7, 0, 1, 1, 1, None)


def test_summary_and_report_count_only_zeroed_judgments_as_zeroed(fin: Finalizer) -> None:
    fin.judge("ami bhalo achi", ZERO, script_valid=False)  # zeroed, agreed
    fin.judge("भारत की राजधानी नई दिल्ली है।", FULL)  # zeroed, flagged
    fin.judge("১৯৭১", FULL)  # flagged, kept
    fin.judge(STANDARD_ANSWER, MID)  # plain
    assert fin.task.summary_lines(fin.store) == [
        "judge judge-1: 4 judgments · 0 unscored (parse failed) · 2 zeroed (script/refusal) · 2 flagged "
        "(judge and code disagree, or script indeterminate) · 2 for human review"]
    frame = load_judgments(fin.store, ["judge-1"], ["model-a"])
    assert sorted(frame.zeroed.tolist()) == [0, 0, 1, 1]
    assert sorted(frame.judge_score.tolist()) == [0.0, 0.0, 6.7, 10.0]
