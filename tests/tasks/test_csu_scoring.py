"""The csu scoring rules (tasks/vlm/_csu_score.py), on hand-checked cases: exact match after NFKC and whitespace
collapsing (PROCEDURES.md §2, the released `normalize_text`), answer extraction, the abstention phrase counted
apart, and the per-domain table with abstentions and failed requests in or out of n."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dialectbias.data import Item
from dialectbias.errors import DataError
from dialectbias.tasks.vlm._csu_score import (
    ABSTENTION,
    FAILED_PLACEHOLDER,
    add_metric,
    exact_match,
    extract_answer,
    is_abstention,
    normalize_answer,
    score_table,
)
from dialectbias.tasks.vlm._items import csu_variant

PRECOMPOSED = "ব\u09dcশি"  # বড়শি with U+09DC (the culture_113 reference)
DECOMPOSED = "ব\u09a1\u09bcশি"  # ড + nukta: NFKC's form of U+09DC


def test_nfkc_makes_the_precomposed_and_decomposed_letter_one() -> None:
    assert PRECOMPOSED != DECOMPOSED
    assert normalize_answer(PRECOMPOSED) == DECOMPOSED
    assert exact_match(DECOMPOSED, PRECOMPOSED)


def test_whitespace_runs_collapse_and_ends_are_stripped() -> None:
    assert normalize_answer(" মাছ \t\n ধরছে\u00a0 ") == "মাছ ধরছে"
    assert exact_match("মাছ ধরছে", "মাছ  ধরছে")  # culture_060's reference has two spaces
    assert exact_match(" আরবি ভাষা।", "আরবি ভাষা।")  # food_131's reference starts with a space


def test_punctuation_case_and_joiners_are_not_normalised() -> None:
    assert not exact_match("বাহা পরব।", "বাহা পরব")  # a danda is part of the answer
    assert not exact_match("Dhaka", "dhaka")
    assert not exact_match("র\u200dযাব", "রযাব")  # ZWJ is neither whitespace nor removed by NFKC
    assert not exact_match("মাছধরছে", "মাছ ধরছে")  # whitespace collapses, never vanishes


def test_clean_extraction_reads_the_answer_and_raw_keeps_the_reply() -> None:
    assert extract_answer("উত্তর: বাহা পরব") == "বাহা পরব"
    assert extract_answer("**বাহা পরব**\n") == "বাহা পরব"
    assert extract_answer("Answer: \"বাহা পরব\"") == "বাহা পরব"
    assert extract_answer("\n\nবাহা পরব\nকারণ এটি একটি উৎসব") == "বাহা পরব"
    cot = "Reasoning_En:\nStep 1: Final answer is near.\nStep 2: x\n\nFinal Answer: বাহা পরব"
    assert extract_answer(cot) == "বাহা পরব"  # the last `Final Answer`
    assert extract_answer("চূড়ান্ত উত্তর: গৌড়") == "গৌড়"
    assert extract_answer("উত্তর: বাহা পরব", "raw") == "উত্তর: বাহা পরব"
    assert extract_answer("  **বাহা পরব**\n", "raw") == "**বাহা পরব**"


def test_abstention_phrase_is_recognised_only_whole() -> None:
    assert is_abstention(ABSTENTION)
    assert is_abstention("অনুমান  করা যাচ্ছে না।")
    assert is_abstention("\"অনুমান করা যাচ্ছে না\"")
    assert not is_abstention("অনুমান করা যাচ্ছে না, তবে সম্ভবত বাহা পরব")
    assert not is_abstention("")
    assert is_abstention("I cannot tell", ["I cannot tell", ABSTENTION])
    assert not is_abstention("I cannot tell")


def _row(domain: str, answer: str, reference: str, *, status: str = "ok", abstentions: str = "wrong",
         failed: str = "excluded", strategy: str = "zero_shot") -> dict[str, Any]:
    """A csu_rows row made by the same rules as csu_rows."""
    ok = status == "ok"
    abstained = ok and is_abstention(answer)
    counted = ok or failed == "wrong"
    answer = answer if ok else (FAILED_PLACEHOLDER if counted else "")
    return {"model": "m", "variant": "standard", "strategy": strategy, "domain": domain, "status": status,
            "answer": answer, "reference": reference, "counted": counted, "abstained": abstained,
            "in_n": counted and not (abstained and abstentions == "excluded"),
            "exact_match": counted and exact_match(answer, reference)}


def _cases(**kw: Any) -> list[dict[str, Any]]:
    return [_row("culture", "বাহা পরব", "বাহা পরব", **kw),  # match
            _row("culture", DECOMPOSED, PRECOMPOSED, **kw),  # match after NFKC
            _row("culture", ABSTENTION, "বাহা পরব", **kw),  # abstained
            _row("culture", "ভুল", "বাহা পরব", **kw),  # wrong
            _row("food", "অনুমান করা যাচ্ছে না।", "খিচুড়ি", **kw),  # abstained
            _row("food", "খিচুড়ি", "খিচুড়ি", **kw),  # match
            _row("food", "", "খিচুড়ি", status="failed", **kw)]  # a failed request


def _table(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["domain"]: r for r in score_table(rows).to_dict("records")}


def test_abstentions_are_wrong_and_in_n_by_default() -> None:
    t = _table(_cases())
    assert (t["culture"]["n"], t["culture"]["exact_match"], t["culture"]["abstained"]) == (4, 50.0, 1)
    assert (t["food"]["n"], t["food"]["exact_match"], t["food"]["abstained"]) == (2, 50.0, 1)
    assert (t["all"]["n"], t["all"]["answers"], t["all"]["abstained"]) == (6, 6, 2)
    assert t["all"]["exact_match"] == pytest.approx(300 / 6)
    assert t["all"]["abstained_share"] == pytest.approx(2 / 6)


def test_abstentions_excluded_leave_n_and_stay_counted() -> None:
    t = _table(_cases(abstentions="excluded"))
    assert (t["culture"]["n"], t["culture"]["exact_match"]) == (3, pytest.approx(200 / 3))
    assert (t["food"]["n"], t["food"]["exact_match"], t["food"]["abstained"]) == (1, 100.0, 1)
    assert (t["all"]["n"], t["all"]["answers"], t["all"]["exact_match"]) == (4, 6, 75.0)


def test_failed_requests_as_wrong_enter_n_like_the_released_scripts() -> None:
    t = _table(_cases(failed="wrong"))
    assert (t["food"]["n"], t["food"]["answers"], t["food"]["exact_match"]) == (3, 3, pytest.approx(100 / 3))
    assert (t["all"]["n"], t["all"]["exact_match"]) == (7, pytest.approx(300 / 7))


def test_metric_means_cover_exactly_n() -> None:
    rows = _cases(abstentions="excluded")
    add_metric(rows, "bertscore_f1", lambda preds, refs: [float(len(p)) for p in preds])
    t = _table(rows)
    culture = [len("বাহা পরব"), len(DECOMPOSED), len("ভুল")]  # the abstention is out of n: no value
    assert t["culture"]["bertscore_f1"] == pytest.approx(sum(culture) / 3)
    assert rows[2]["bertscore_f1"] is None and rows[6]["bertscore_f1"] is None
    assert t["food"]["bertscore_f1"] == pytest.approx(len("খিচুড়ি"))


def test_no_metric_gives_an_empty_column() -> None:
    rows = _cases()
    for r in rows:
        r["bertscore_f1"] = None
    assert all(math.isnan(v) for v in score_table(rows)["bertscore_f1"])


def test_csu_entry_refuses_a_vqa_entry_and_blank_answers() -> None:
    item = Item(id="x", variants={"standard": {"question": "কী?", "options": ["a", "b"], "answer": "a"},
                                  "sylhet": {"question": "কী?", "answer": "  "},
                                  "rangpur": {"question": "কী?", "answer": "ধান", "is_human_validated": False}})
    with pytest.raises(DataError, match="item 'x' variant 'standard': has 'options'"):
        csu_variant(item, "standard")
    with pytest.raises(DataError, match="item 'x' variant 'sylhet'"):
        csu_variant(item, "sylhet")
    entry = csu_variant(item, "rangpur")
    assert (entry.question, entry.answer, entry.human_validated) == ("কী?", "ধান", False)
