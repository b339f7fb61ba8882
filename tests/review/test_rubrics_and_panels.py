"""Review is rubric- and task-agnostic (issue 20 item 5): a judgment is read with its judge's rubric as the
task declares it, or not at all (a ConfigError naming the judge, never a silent RLAIF); the judgments CSV's
text columns are the judgment panels: by default both questions and both answers (the historical layout,
unchanged), a task's own panels otherwise."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dialectbias.errors import ConfigError
from dialectbias.judges import load_rubric
from dialectbias.review import Panel, ReviewQueue, judge_rubric, queue_kind, write_review_csv
from dialectbias.review._judgment_panels import panel_cells
from dialectbias.store import JudgmentRecord, Store, latest_annotations

RLAIF = load_rubric("rlaif")

#: the qa_bias layout of a judgments CSV on RLAIF, as it has always been written
HISTORICAL_HEADER = (
    "judgment_id", "judge", "rubric", "model", "item_id", "dialect", "standard_question", "dialect_question",
    "standard_response", "dialect_response", "judge_reasoning", "judge_dialect_comprehension",
    "judge_factual_correctness", "judge_content_completeness", "judge_response_clarity", "judge_appropriate_length",
    "judge_score", "confidence", "flagged", "reason", "human_dialect_comprehension", "human_factual_correctness",
    "human_content_completeness", "human_response_clarity", "human_appropriate_length", "human_script_valid",
    "comment")


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


# -- one rubric resolution ------------------------------------------------------------------------------------


def test_a_judge_gets_the_rubric_its_task_declares() -> None:
    fidelity = load_rubric("translation_fidelity")
    assert judge_rubric({"a": RLAIF, "b": fidelity}, "b") is fidelity


def test_a_judge_without_a_declared_rubric_is_an_error_naming_it() -> None:
    with pytest.raises(ConfigError) as info:
        judge_rubric({"judge-1": RLAIF}, "judge-9")
    assert "judge 'judge-9'" in str(info.value) and "judge-1 (rlaif)" in str(info.value)


def test_the_queue_and_the_app_refuse_a_judge_without_a_rubric(review_store: Any, rv: Any) -> None:
    """Before: the CSV queue and the app's form fell back to RLAIF's fields for such a judge."""
    config = replace(rv.review_config(), rubrics={})
    with review_store.open() as store:
        with pytest.raises(ConfigError, match="judge 'judge-1'"):
            ReviewQueue(store, rv.JUDGE, rv.MODELS)
        with pytest.raises(ConfigError, match="judge 'judge-1'"):
            queue_kind("judgments").target(config, store, review_store.judgments["c2"])


def test_the_form_is_the_judges_rubric_whatever_the_judgment_records(review_store: Any, rv: Any) -> None:
    """A judgment records its rubric's name; the form follows the rubric the task declares for its judge."""
    fidelity = load_rubric("translation_fidelity")
    kind = queue_kind("judgments")
    with review_store.open() as store:
        config = replace(rv.review_config(), rubrics={rv.JUDGE: fidelity})
        target = kind.target(config, store, review_store.judgments["c2"])
    assert target is not None and target.details["judge"] == rv.JUDGE and target.details["rubric"] == fidelity.name
    fields = kind.fields(config, target)
    assert [f.name for f in fields] == [f.name for f in fidelity.numeric_fields]


# -- CSV columns from the judgment panels -------------------------------------------------------------------


def test_the_default_panels_keep_the_historical_header(review_store: Any, rv: Any, tmp_path: Path) -> None:
    with review_store.open() as store:
        queue = ReviewQueue(store, rv.JUDGE, rv.MODELS, rubrics={rv.JUDGE: RLAIF})
        rows = list(queue.pending())
        write_review_csv(rows, tmp_path / "q.csv", columns=queue.columns_for(rows))
    header, read = _read(tmp_path / "q.csv")
    assert tuple(header) == HISTORICAL_HEADER == queue.columns
    first = next(r for r in read if r["judgment_id"] == review_store.judgments["c2"])
    assert first["standard_question"] == "প্রশ্ন 2?" and first["dialect_question"] == "চাটগাঁইয়া প্রশ্ন 2?"
    assert first["standard_response"] == "প্রমিত উত্তর" and first["dialect_response"] == "আঞ্চলিক উত্তর"


def _task_panels(store: Store, record: JudgmentRecord) -> list[Panel]:
    """A task's own view of a judgment (as translation_quality shows its rows): source, reference, candidate."""
    return [Panel(label="standard source", text=f"source of {record.item_id}", variant="standard", role="source"),
            Panel(label="human reference", text=f"reference of {record.item_id}", variant=record.variant,
                  role="reference"),
            Panel(label=f"translation by {record.model_id}", text=f"{record.model_id} on {record.item_id}",
                  variant=record.variant, role="candidate")]


def test_a_tasks_panels_are_its_csv_columns_and_the_csv_round_trips(review_store: Any, rv: Any,
                                                                    tmp_path: Path) -> None:
    with review_store.open() as store:
        queue = ReviewQueue(store, rv.JUDGE, rv.MODELS, rubrics={rv.JUDGE: RLAIF}, judgment_panels=_task_panels)
        rows = list(queue.pending())
        columns = queue.columns_for(rows)
        write_review_csv(rows, tmp_path / "q.csv", columns=columns)
        header, read = _read(tmp_path / "q.csv")
        assert header[6:10] == ["source", "reference", "candidate", "judge_reasoning"]
        assert not {"standard_question", "dialect_question", "standard_response", "dialect_response"} & set(header)
        assert [c for c in header if c not in ("source", "reference", "candidate")] == list(HISTORICAL_HEADER[:6]) \
            + list(HISTORICAL_HEADER[10:])
        row = next(r for r in read if r["judgment_id"] == review_store.judgments["c2"])
        assert (row["source"], row["candidate"]) == ("source of q2", "model-a on q2")
        row.update({f"human_{f.name}": "4" for f in RLAIF.numeric_fields})
        with (tmp_path / "q.csv").open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=header)
            writer.writeheader()
            writer.writerows(read)
        summary = queue.import_csv(tmp_path / "q.csv", "lead")
        stored = latest_annotations(store, "judgment_override")
    assert summary.imported == 1 and (review_store.judgments["c2"], "lead") in stored


def test_the_app_shows_the_tasks_panels(review_store: Any, rv: Any) -> None:
    with review_store.open() as store:
        target = queue_kind("judgments").target(rv.review_config(judgment_panels=_task_panels), store,
                                                review_store.judgments["c2"])
    assert target is not None
    assert [p.role for p in target.panels] == ["source", "reference", "candidate", "reasoning"]


def test_panels_are_named_by_their_name_else_their_role() -> None:
    panels = [Panel(label="a", text="1", role="answer"), Panel(label="b", text="2", role="answer"),
              Panel(label="c", text="3", role="answer", name="best")]
    assert panel_cells(panels) == {"answer": "1", "answer_2": "2", "best": "3"}
