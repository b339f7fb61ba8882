"""The review queue CSV round trip (SPEC §4 P3 Human fallback) over a hand-built store."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dialectbias.errors import DataError
from dialectbias.judges import RLAIF_CATEGORIES, rlaif_score
from dialectbias.review import HUMAN_COLUMNS, QUEUE_COLUMNS, ReviewQueue, write_review_csv
from dialectbias.store import Store, dumps
from dialectbias.tasks.qa_bias._report import final_scores

JUDGE = "judge-1"
MODELS = ["model-a", "model-b"]
FIELDS = [name for name, _ in RLAIF_CATEGORIES]


def judgment(store: Store, model: str, item: str, variant: str, *, confidence: int | None,
             likert: tuple[int, ...] = (3, 3, 3, 3, 3), needs_review: int | None = None, flagged: int = 0,
             judge: str = JUDGE, answer: str = "উত্তর") -> str:
    """Insert the two generations, the judge request (refs) and the judgment; return its id."""
    def gen(v: str, output: str) -> str:
        rid = f"gen-{model}-{item}-{v}"
        store.write([("requests", {"request_id": rid, "stage": "generate", "model_id": model,
                                   "item_id": item, "variant": v, "refs": "[]", "template": "qa_bias/answer",
                                   "prompt_hash": "h", "messages": "[]", "params": "{}", "json_schema": None,
                                   "cache_key": rid, "meta": "{}", "created_at": 0.0}),
                     ("results", {"request_id": rid, "status": "ok", "output": output, "completed_at": 0.0})])
        return rid

    std, dia = gen("standard", f"প্রমিত {answer}"), gen(variant, f"আঞ্চলিক {answer}")
    rid = f"judge-{judge}-{model}-{item}-{variant}"
    parsed = None if confidence is None else dumps(
        {"chain_of_thought_reasoning": f"যুক্তি {item}", "script_valid": True, "refusal": False,
         **dict(zip(FIELDS, likert, strict=True)), "confidence": confidence})
    store.write([
        ("requests", {"request_id": rid, "stage": "judge", "model_id": judge, "item_id": item,
                      "variant": variant, "refs": dumps([std, dia]), "template": "qa_bias/judge_user",
                      "prompt_hash": "h",
                      "messages": "[]", "params": "{}", "json_schema": None, "cache_key": rid,
                      "meta": dumps({"model_id": model}), "created_at": 0.0}),
        ("results", {"request_id": rid, "status": "ok", "output": "{}", "completed_at": 0.0}),
        ("judgments", {"request_id": rid, "judge_id": judge, "model_id": model, "item_id": item,
                       "variant": variant, "rubric": "rlaif", "parsed": parsed,
                       "score": None if confidence is None else rlaif_score(likert), "confidence": confidence,
                       "parse_status": "failed" if confidence is None else "ok",
                       "needs_review": int(confidence is None or confidence <= 3 or flagged)
                       if needs_review is None else needs_review, "flagged": flagged})])
    return rid


@pytest.fixture
def store(tmp_path: Path) -> Store:
    from dialectbias.data import Item

    s = Store.open(tmp_path / "exp.sqlite")
    s.save_items(Item(id=f"q{i}", variants={"standard": f"প্রশ্ন {i}?", "chittagong": f"চাটগাঁইয়া প্রশ্ন {i}?",
                                             "sylhet": f"সিলেটি প্রশ্ন {i}?"}) for i in range(1, 7))
    yield s
    s.close()


@pytest.fixture
def filled(store: Store) -> dict[str, str]:
    """Six judgments of model-a/model-b: three need review, one is flagged, two are confident."""
    return {
        "low1": judgment(store, "model-a", "q1", "chittagong", confidence=1, likert=(1, 1, 1, 1, 1)),
        "low3": judgment(store, "model-a", "q2", "sylhet", confidence=3, likert=(2, 2, 2, 2, 2)),
        "unparsed": judgment(store, "model-b", "q3", "chittagong", confidence=None),
        "flagged": judgment(store, "model-b", "q4", "sylhet", confidence=5, flagged=1),
        "sure4": judgment(store, "model-a", "q5", "chittagong", confidence=4, likert=(4, 4, 4, 4, 4)),
        "sure5": judgment(store, "model-b", "q6", "sylhet", confidence=5, likert=(5, 5, 5, 5, 5)),
    }


def queue(store: Store) -> ReviewQueue:
    return ReviewQueue(store, JUDGE, MODELS)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=QUEUE_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return path


def fill(row: dict[str, str], likert: list[Any] | None, script: str = "",
         comment: str = "") -> dict[str, str]:
    values = likert if likert is not None else [""] * 5
    return {**row, **dict(zip(HUMAN_COLUMNS, map(str, values), strict=True)), "human_script_valid": script,
            "comment": comment}


def final_table(store: Store) -> dict[str, float | None]:
    df = final_scores(store, JUDGE, MODELS)
    return {r.request_id: None if pd.isna(r.final_score) else r.final_score for r in df.itertuples()}


# -- export ---------------------------------------------------------------------------------------------


def test_export_lists_pending_judgments_with_both_questions_and_answers(store: Store, filled: dict[str, str],
                                                                        tmp_path: Path) -> None:
    judgment(store, "model-a", "q1", "sylhet", confidence=1, judge="judge-2")  # another judge: not listed
    n = write_review_csv(queue(store).pending(), tmp_path / "queue.csv")
    rows = read_csv(tmp_path / "queue.csv")
    assert n == 4 and list(rows[0]) == list(QUEUE_COLUMNS)
    assert {r["judgment_id"] for r in rows} == {filled[k] for k in ("low1", "low3", "unparsed", "flagged")}
    low1 = next(r for r in rows if r["judgment_id"] == filled["low1"])
    assert (low1["model"], low1["item_id"], low1["dialect"]) == ("model-a", "q1", "chittagong")
    assert low1["standard_question"] == "প্রশ্ন 1?" and low1["dialect_question"] == "চাটগাঁইয়া প্রশ্ন 1?"
    assert low1["standard_response"] == "প্রমিত উত্তর" and low1["dialect_response"] == "আঞ্চলিক উত্তর"
    assert low1["judge_reasoning"] == "যুক্তি q1" and low1["judge_dialect_comprehension"] == "1"
    assert (low1["judge_score"], low1["confidence"], low1["flagged"]) == ("2.0", "1", "0")
    assert all(low1[c] == "" for c in (*HUMAN_COLUMNS, "human_script_valid", "comment"))
    unparsed = next(r for r in rows if r["judgment_id"] == filled["unparsed"])
    assert unparsed["judge_score"] == "" and unparsed["confidence"] == ""


def test_overridden_judgments_leave_the_queue(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    rows = list(queue(store).pending())
    path = write_rows(tmp_path / "q.csv", [fill(rows[0], [5, 5, 5, 5, 5]), *rows[1:]])
    queue(store).import_csv(path, "rahim")
    assert rows[0]["judgment_id"] not in {r["judgment_id"] for r in queue(store).pending()}
    assert len(list(queue(store).pending())) == len(rows) - 1


def test_excel_option_writes_a_byte_order_mark(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    write_review_csv(queue(store).pending(), tmp_path / "plain.csv")
    write_review_csv(queue(store).pending(), tmp_path / "excel.csv", excel=True)
    assert not (tmp_path / "plain.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    assert (tmp_path / "excel.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    assert read_csv(tmp_path / "excel.csv") == read_csv(tmp_path / "plain.csv")


# -- import: the round trip -----------------------------------------------------------------------------


def test_round_trip_replaces_judge_scores_exactly_and_twice_changes_nothing(
        store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    before = final_table(store)
    rows = {r["judgment_id"]: r for r in queue(store).pending()}
    human = {filled["low1"]: [0, 1, 5, 4, 5], filled["unparsed"]: [5, 4, 3, 2, 1]}
    out = [fill(rows[filled["low1"]], human[filled["low1"]], comment="ঠিক আছে"),
           fill(rows[filled["unparsed"]], human[filled["unparsed"]], script="yes"),
           fill(rows[filled["flagged"]], None, script="no"),  # invalid script: score 0, Likert 0
           rows[filled["low3"]]]  # left empty: skipped
    path = write_rows(tmp_path / "queue.csv", out)

    summary = queue(store).import_csv(path, "rahim", now=1000.0)
    assert (summary.imported, summary.skipped_empty, summary.unchanged, summary.rows) == (3, 1, 0, 4)
    after = final_table(store)
    expected = dict(before) | {filled["low1"]: 4.7, filled["unparsed"]: rlaif_score([5, 4, 3, 2, 1]),
                               filled["flagged"]: 0.0}
    assert after == pytest.approx(expected)
    ann = store.query("SELECT target_id, annotator, kind, value, comment, created_at FROM annotations "
                      "ORDER BY annotation_id")
    assert [(a["annotator"], a["kind"], a["created_at"]) for a in ann] == [
        ("rahim", "judgment_override", 1000.0)] * 3
    assert json.loads(ann[0]["value"]) == {"rubric": "rlaif", "fields": dict(zip(FIELDS, [0, 1, 5, 4, 5], strict=True)),
                                           "score": pytest.approx(4.7), "script_valid": None}
    assert ann[0]["comment"] == "ঠিক আছে"
    assert json.loads(ann[2]["value"]) == {"rubric": "rlaif", "fields": dict.fromkeys(FIELDS, 0), "score": 0.0,
                                           "script_valid": False}
    df = final_scores(store, JUDGE, MODELS).set_index("request_id")
    assert df.loc[filled["low1"], "annotator"] == "rahim" and df.loc[filled["low1"], "judge_score"] == 2.0

    again = queue(store).import_csv(path, "rahim", now=2000.0)
    assert (again.imported, again.skipped_empty, again.unchanged) == (0, 1, 3)
    assert final_table(store) == pytest.approx(after)
    assert store.query("SELECT count(*) FROM annotations")[0][0] == 3


def test_a_later_different_score_wins(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    row = next(r for r in queue(store).pending() if r["judgment_id"] == filled["low3"])
    queue(store).import_csv(write_rows(tmp_path / "a.csv", [fill(row, [1, 1, 1, 1, 1])]), "rahim")
    queue(store).import_csv(write_rows(tmp_path / "b.csv", [fill(row, [5, 5, 5, 5, 5])]), "karim")
    assert final_table(store)[filled["low3"]] == pytest.approx(10.0)


def test_spreadsheet_forms_are_accepted(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    """A BOM, `;` as delimiter, 3.0 for 3 and Bengali digits: what Excel and Bengali keyboards write."""
    row = next(r for r in queue(store).pending() if r["judgment_id"] == filled["low1"])
    row = fill(row, ["৫", "4.0", "3", " 2 ", "1"], script="হ্যাঁ")
    path = tmp_path / "excel.csv"
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=QUEUE_COLUMNS, delimiter=";")
        w.writeheader()
        w.writerow(row)
    assert queue(store).import_csv(path, "rahim").imported == 1
    assert final_table(store)[filled["low1"]] == pytest.approx(rlaif_score([5, 4, 3, 2, 1]))


# -- import: validation ---------------------------------------------------------------------------------


def import_error(store: Store, path: Path) -> str:
    with pytest.raises(DataError) as info:
        queue(store).import_csv(path, "rahim")
    assert store.query("SELECT count(*) FROM annotations")[0][0] == 0  # all or nothing
    return str(info.value)


@pytest.mark.parametrize(("values", "column", "message"), [
    (["x", 1, 1, 1, 1], "human_dialect_comprehension", "'x' is not an integer 0–5"),
    ([1, 6, 1, 1, 1], "human_factual_correctness", "'6' is not an integer 0–5"),
    ([1, 1, -1, 1, 1], "human_content_completeness", "'-1' is not an integer 0–5"),
    ([1, 1, 1, 2.5, 1], "human_response_clarity", "'2.5' is not an integer 0–5"),
    ([1, 1, 1, 1, ""], "human_appropriate_length", "empty while other human columns are filled"),
])
def test_bad_likert_values_name_file_line_and_column(store: Store, filled: dict[str, str], tmp_path: Path,
                                                     values: list[Any], column: str, message: str) -> None:
    rows = list(queue(store).pending())
    path = write_rows(tmp_path / "queue.csv", [fill(rows[0], [5] * 5), fill(rows[1], values)])
    msg = import_error(store, path)
    assert f"{path}:3: column {column}: {message}" in msg and "nothing was imported" in msg


def test_unknown_judgment_id_is_an_error(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    row = fill(next(iter(queue(store).pending())) | {"judgment_id": "nope"}, [1] * 5)
    path = write_rows(tmp_path / "queue.csv", [row])
    assert f"{path}:2: column judgment_id: unknown judgment 'nope'" in import_error(store, path)


def test_comment_without_scores_and_bad_script_value_are_errors(store: Store, filled: dict[str, str],
                                                                tmp_path: Path) -> None:
    rows = list(queue(store).pending())
    path = write_rows(tmp_path / "queue.csv", [fill(rows[0], None, comment="বুঝিনি"),
                                               fill(rows[1], [1] * 5, script="maybe")])
    msg = import_error(store, path)
    assert f"{path}:2: column human_dialect_comprehension: no human scores, but the row has a comment" in msg
    assert f"{path}:3: column human_script_valid: 'maybe' is not yes/no" in msg


def test_the_same_judgment_twice_is_an_error(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    row = next(iter(queue(store).pending()))
    path = write_rows(tmp_path / "queue.csv", [fill(row, [1] * 5), fill(row, [2] * 5)])
    expected = f"{path}:3: column judgment_id: {row['judgment_id']!r} is also on line 2"
    assert expected in import_error(store, path)


def test_line_numbers_count_multiline_cells(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    rows = list(queue(store).pending())
    first = fill(rows[0], [1] * 5) | {"dialect_response": "প্রথম লাইন\nদ্বিতীয় লাইন\nতৃতীয়"}
    path = write_rows(tmp_path / "queue.csv", [first, fill(rows[1], [1, 1, 9, 1, 1])])
    assert f"{path}:5 (spreadsheet row 3): column human_content_completeness: '9' is not" in import_error(store, path)


def test_a_row_with_five_bad_cells_is_one_invalid_row_naming_each_cell(store: Store, filled: dict[str, str],
                                                                       tmp_path: Path) -> None:
    rows = list(queue(store).pending())
    path = write_rows(tmp_path / "queue.csv", [fill(rows[0], [1] * 5), fill(rows[1], ["x", 6, -1, 2.5, "৯"])])
    assert import_error(store, path) == "\n".join([
        f"{path}: 1 invalid row; nothing was imported",
        f"{path}:3: 5 invalid cells (judgment {rows[1]['judgment_id']!r}):",
        "  - column human_dialect_comprehension: 'x' is not an integer 0–5",
        "  - column human_factual_correctness: '6' is not an integer 0–5",
        "  - column human_content_completeness: '-1' is not an integer 0–5",
        "  - column human_response_clarity: '2.5' is not an integer 0–5",
        "  - column human_appropriate_length: '৯' is not an integer 0–5"])


def test_a_bad_script_cell_and_a_bad_score_in_one_row_are_both_named(store: Store, filled: dict[str, str],
                                                                     tmp_path: Path) -> None:
    rows = list(queue(store).pending())
    path = write_rows(tmp_path / "queue.csv", [fill(rows[0], [1, 1, 1, 1, 7], script="maybe")])
    assert import_error(store, path).splitlines()[2:] == [
        "  - column human_script_valid: 'maybe' is not yes/no (or empty)",
        "  - column human_appropriate_length: '7' is not an integer 0–5"]


def test_missing_columns_and_annotator(store: Store, filled: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("judgment_id,human_dialect_comprehension\nx,1\n", encoding="utf-8")
    assert "bad.csv:1: missing column(s) human_factual_correctness" in import_error(store, path)
    with pytest.raises(DataError, match="--annotator"):
        queue(store).import_csv(path, "  ")
    with pytest.raises(DataError, match="file not found"):
        queue(store).import_csv(tmp_path / "none.csv", "rahim")


# -- calibration ----------------------------------------------------------------------------------------


@pytest.fixture
def graded(store: Store) -> dict[int, set[str]]:
    """Judgments per confidence level: 8 of levels 1–4, 3 of level 5, plus an unparsed one."""
    by_level: dict[int, set[str]] = {lvl: set() for lvl in range(1, 6)}
    for lvl in range(1, 6):
        for i in range(8 if lvl < 5 else 3):
            model, item = MODELS[i % 2], f"q{1 + i // 2}"
            variant = "chittagong" if lvl % 2 else "sylhet"
            by_level[lvl].add(judgment(store, model, f"{item}-{lvl}", variant, confidence=lvl))
    judgment(store, "model-a", "qx", "sylhet", confidence=None)
    return by_level


def test_calibration_sample_is_stratified_by_confidence(store: Store, graded: dict[int, set[str]]) -> None:
    sample = queue(store).calibration_sample(per_level=5, seed=7)
    assert sample.per_level == {1: 5, 2: 5, 3: 5, 4: 5, 5: 3}
    assert sample.available == {1: 8, 2: 8, 3: 8, 4: 8, 5: 3}
    assert len(sample.rows) == 23
    for row in sample.rows:
        assert row["judgment_id"] in graded[int(row["confidence"])]
    assert [int(r["confidence"]) for r in sample.rows] == sorted(int(r["confidence"]) for r in sample.rows)


def test_calibration_sample_is_seeded(store: Store, graded: dict[int, set[str]]) -> None:
    ids = [[r["judgment_id"] for r in queue(store).calibration_sample(3, seed=s).rows] for s in (1, 1, 2)]
    assert ids[0] == ids[1] and ids[0] != ids[2]
