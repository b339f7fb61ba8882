"""The queue kinds (plug-ins): their targets from the store, their forms, their annotation values; an app
annotation of a judgment is the same record as a CSV import's and overrides the judge the same way."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from dialectbias.judges import rlaif_score
from dialectbias.review import (
    AnnotationError,
    QueueKind,
    ReviewQueue,
    latest_annotations,
    queue_kind,
    queue_kinds,
    register_queue_kind,
    save_annotation,
    write_review_csv,
)
from dialectbias.store import OVERRIDE_KIND, ContentRow
from dialectbias.tasks.qa_bias._report import final_scores

LIKERT = {"dialect_comprehension": 5, "factual_correctness": 4, "content_completeness": 3, "response_clarity": 2,
          "appropriate_length": 1}


def test_the_five_queue_kinds_are_registered_plug_ins() -> None:
    assert list(queue_kinds()) == ["judgments", "translation_score", "translation_correction", "validation",
                                   "error_coding", "judge_consistency"]
    assert all(isinstance(k, QueueKind) for k in queue_kinds().values())
    with pytest.raises(ValueError, match="already registered"):
        register_queue_kind(queue_kind("judgments"))


def test_judgment_targets_are_the_judgments_needing_review(review_store: Any, rv: Any) -> None:
    kind = queue_kind("judgments")
    with review_store.open() as store:
        targets = list(kind.targets(rv.review_config(), store))
        one = kind.target(rv.review_config(), store, review_store.judgments["c1"])
        assert kind.target(rv.review_config(), store, review_store.judgments["sure"]) is None
    assert {t.target_id for t in targets} == {review_store.judgments[k] for k in ("c1", "c2", "c3", "s1", "s2")}
    assert one is not None and one == next(t for t in targets if t.target_id == one.target_id)
    labels = [p.label for p in one.panels]
    assert labels == ["standard question", "chittagong question", "answer to the standard question",
                      "answer to the chittagong question", "the automatic judge's reasoning"]
    assert one.panels[3].text.startswith("আঞ্চলিক") and one.panels[4].text == rv.SCRIPT


def test_a_miscalibrated_dialect_routes_every_judgment_of_it_to_review(review_store: Any, rv: Any) -> None:
    with review_store.open() as store:
        routed = {t.target_id for t in queue_kind("judgments").targets(
            rv.review_config(routed={(rv.JUDGE, "chittagong")}), store)}
    assert review_store.judgments["sure"] in routed


def test_the_judgment_form_is_the_rubric_with_its_anchors(review_store: Any, rv: Any) -> None:
    kind = queue_kind("judgments")
    with review_store.open() as store:
        target = kind.target(rv.review_config(), store, review_store.judgments["c2"])
    fields = kind.fields(rv.review_config(), target)
    scales = [f for f in fields if f.kind == "scale"]
    assert [f.name for f in scales] == list(LIKERT)
    assert scales[0].values == [0, 1, 2, 3, 4, 5] and scales[0].anchors[0] == "strongly disagree"
    assert scales[0].keys == {str(v): str(v) for v in range(6)}
    assert [f.name for f in fields if f.kind == "choice"] == ["script_valid"]


def test_an_app_override_is_the_csv_imports_record_and_replaces_the_judge(review_store: Any, rv: Any,
                                                                          tmp_path: Path) -> None:
    kind = queue_kind("judgments")
    jid = review_store.judgments["c2"]
    with review_store.open() as store:
        target = kind.target(rv.review_config(), store, jid)
        value = kind.annotation(rv.review_config(), store, target, {k: str(v) for k, v in LIKERT.items()})
        assert save_annotation(store, jid, "app-user", OVERRIDE_KIND, value, "ok")
        queue = ReviewQueue(store, rv.JUDGE, rv.MODELS, rubrics=rv.review_config().rubrics)
        rows = [r for r in queue._select() if r["judgment_id"] == jid]
        for r in rows:
            r.update({f"human_{k}": v for k, v in LIKERT.items()}, comment="ok")
        path = write_review_csv(rows, tmp_path / "q.csv", columns=queue.columns) and tmp_path / "q.csv"
        queue.import_csv(path, "csv-user")
        stored = latest_annotations(store, OVERRIDE_KIND)
        scores = final_scores(store, rv.JUDGE, rv.MODELS).set_index("request_id")
    assert stored[(jid, "app-user")][0] == stored[(jid, "csv-user")][0] == value
    assert value["score"] == pytest.approx(rlaif_score(list(LIKERT.values())))
    assert scores.loc[jid, "final_score"] == pytest.approx(value["score"])


def test_script_invalid_without_scores_is_the_lowest_score(review_store: Any, rv: Any) -> None:
    kind = queue_kind("judgments")
    with review_store.open() as store:
        target = kind.target(rv.review_config(), store, review_store.judgments["c2"])
        value = kind.annotation(rv.review_config(), store, target, {"script_valid": "no"})
    assert value["score"] == 0 and value["script_valid"] is False


@pytest.mark.parametrize(("data", "field"), [
    ({**LIKERT, "factual_correctness": 6}, "factual_correctness"),
    ({**LIKERT, "response_clarity": "2.5"}, "response_clarity"),
    ({k: v for k, v in LIKERT.items() if k != "appropriate_length"}, "appropriate_length"),
    ({**LIKERT, "script_valid": "maybe"}, "script_valid"),
])
def test_a_bad_judgment_annotation_names_its_field(review_store: Any, rv: Any, data: dict[str, Any],
                                                   field: str) -> None:
    kind = queue_kind("judgments")
    with review_store.open() as store:
        target = kind.target(rv.review_config(), store, review_store.judgments["c2"])
        with pytest.raises(AnnotationError) as info:
            kind.annotation(rv.review_config(), store, target, data)
    assert field in info.value.problems


def test_machine_variants_are_translation_targets(review_store: Any, rv: Any) -> None:
    with review_store.open() as store:
        for name in ("translation_score", "translation_correction", "validation"):
            targets = list(queue_kind(name).targets(rv.review_config(), store))
            assert [(t.target_id, t.dialect) for t in targets] == [("item:q5:sylhet", "sylhet"),
                                                                   ("item:q6:sylhet", "sylhet")]
        t = targets[0]
    assert [p.text for p in t.panels] == ["প্রশ্ন 5?", "সিলেটি প্রশ্ন 5?"] and t.edit_text == "সিলেটি প্রশ্ন 5?"


def test_translate_stage_results_are_translation_targets(review_store: Any, rv: Any) -> None:
    with review_store.open() as store:
        store.write([("requests", rv._request(store, "tr-1", "translate", "translator", "q2", "sylhet",
                                              meta={"reference": "মানুষের অনুবাদ"})),
                     ("results", {"request_id": "tr-1", "status": "ok", "output": "যন্ত্রের অনুবাদ",
                                  "completed_at": 0.0})])
        targets = list(queue_kind("translation_score").targets(rv.review_config(), store))
    first = targets[0]
    assert first.target_id == "tr-1" and [p.text for p in first.panels] == ["প্রশ্ন 2?", "যন্ত্রের অনুবাদ",
                                                                             "মানুষের অনুবাদ"]


@pytest.mark.parametrize(("queue", "data", "value"), [
    ("translation_score", {"score": "10"}, {"score": 10}),
    ("translation_score", {"score": 0}, {"score": 0}),
    ("validation", {"label": "2"}, {"label": 2}),
    ("translation_correction", {"text": " সিলেটি প্রশ্ন ৫?\r\n"},
     {"text": "সিলেটি প্রশ্ন ৫?", "original": "সিলেটি প্রশ্ন 5?", "changed": True}),
    ("translation_correction", {"text": "সিলেটি প্রশ্ন 5?"},
     {"text": "সিলেটি প্রশ্ন 5?", "original": "সিলেটি প্রশ্ন 5?", "changed": False}),
])
def test_translation_annotations(review_store: Any, rv: Any, queue: str, data: dict[str, Any],
                                 value: dict[str, Any]) -> None:
    kind = queue_kind(queue)
    with review_store.open() as store:
        target = kind.target(rv.review_config(), store, "item:q5:sylhet")
        assert kind.annotation(rv.review_config(), store, target, data) == value


@pytest.mark.parametrize(("queue", "data", "field"), [
    ("translation_score", {"score": "11"}, "score"), ("translation_score", {}, "score"),
    ("translation_score", {"score": True}, "score"), ("validation", {"label": "3"}, "label"),
    ("translation_correction", {"text": "  "}, "text"), ("error_coding", {"categories": ["typo"]}, "categories"),
])
def test_bad_annotations_name_their_field(review_store: Any, rv: Any, queue: str, data: dict[str, Any],
                                          field: str) -> None:
    kind = queue_kind(queue)
    with review_store.open() as store:
        target = next(kind.targets(rv.review_config(), store))
        with pytest.raises(AnnotationError) as info:
            kind.annotation(rv.review_config(), store, target, data)
    assert field in info.value.problems


def test_model_answers_to_images_are_error_coding_targets(review_store: Any, rv: Any) -> None:
    kind = queue_kind("error_coding")
    with review_store.open() as store:
        targets = list(kind.targets(rv.review_config(), store))
        target = kind.target(rv.review_config(), store, review_store.image_request)
        value = kind.annotation(rv.review_config(), store, target,
                                {"categories": ["language_violation", "entity_misrecognition"]})
    assert [t.target_id for t in targets] == [review_store.image_request]
    assert target.image == review_store.image_sha and target.dialect == "urdu"
    assert value == {"categories": ["entity_misrecognition", "language_violation"]}  # the categories' order


def test_two_annotators_never_overwrite_each_other_and_the_latest_answer_wins(review_store: Any) -> None:
    with review_store.open() as store:
        assert save_annotation(store, "t", "a", "validation_3pt", {"label": 1}, now=1.0)
        assert save_annotation(store, "t", "b", "validation_3pt", {"label": 2}, now=2.0)
        assert not save_annotation(store, "t", "a", "validation_3pt", {"label": 1}, now=3.0)  # unchanged
        assert save_annotation(store, "t", "a", "validation_3pt", {"label": 0}, now=4.0)
        assert save_annotation(store, "t", "a", "validation_3pt", {"label": 1}, now=5.0)  # back to 1: wins again
        latest = latest_annotations(store, "validation_3pt")
        rows = store.query("SELECT annotator, value, created_at FROM annotations WHERE target_id='t' "
                           "ORDER BY annotation_id")
    assert latest[("t", "a")][0] == {"label": 1} and latest[("t", "a")][2] == 5.0
    assert latest[("t", "b")][0] == {"label": 2}
    assert [(r[0], r[1]) for r in rows] == [("b", '{"label":2}'), ("a", '{"label":0}'), ("a", '{"label":1}')]


def test_the_csv_queue_still_round_trips(review_store: Any, rv: Any, tmp_path: Path) -> None:
    with review_store.open() as store:
        queue = ReviewQueue(store, rv.JUDGE, rv.MODELS, rubrics=rv.review_config().rubrics)
        out = tmp_path / "queue.csv"
        n = write_review_csv(queue.pending(), out, columns=queue.columns)
        with out.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            r.update({f"human_{k}": "4" for k in LIKERT})
        with out.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(queue.columns))
            writer.writeheader()
            writer.writerows(rows)
        summary = queue.import_csv(out, "lead")
        assert n == 5 and summary.imported == 5 and list(queue.pending()) == []


def test_the_translate_tasks_stored_answers_are_targets(review_store: Any, rv: Any) -> None:
    """The translate task stores `meta.source` as a list of texts and `meta.field` per field group."""
    with review_store.open() as store:
        store.write([("requests", rv._request(store, "tr-vqa", "translate", "translator", "q3", "sylhet",
                                              meta={"source": ["প্রশ্ন?", "ক", "খ"], "field": "options",
                                                    "is_list": True})),
                     ("results", {"request_id": "tr-vqa", "status": "ok", "output": "ক১\nখ১", "completed_at": 0.0}),
                     ("requests", rv._request(store, "tr-empty", "translate", "translator", "q4", "sylhet")),
                     ("results", {"request_id": "tr-empty", "status": "ok", "output": "  ", "completed_at": 0.0})])
        targets = {t.target_id: t for t in queue_kind("validation").targets(rv.review_config(), store)}
    assert "tr-empty" not in targets  # an empty answer is a failed translation, not one to review
    t = targets["tr-vqa"]
    assert t.title == "q3 · sylhet · options" and [p.text for p in t.panels] == ["প্রশ্ন?\nক\nখ", "ক১\nখ১"]


def test_a_task_can_supply_its_own_translations(review_store: Any, rv: Any) -> None:
    from dialectbias.review._kind_translations import Translation

    def cleaned(store: Any) -> list[Translation]:
        return [Translation("tr-clean", "q2", "sylhet", "প্রশ্ন 2?", "পরিষ্কার অনুবাদ")]

    with review_store.open() as store:
        ids = [t.target_id for t in queue_kind("translation_score").targets(rv.review_config(translations=cleaned),
                                                                            store)]
    assert ids == ["tr-clean", "item:q5:sylhet", "item:q6:sylhet"]


def test_object_variants_are_shown_and_corrected_field_by_field(tmp_path: Path, rv: Any) -> None:
    from dialectbias.data import Item
    from dialectbias.store import Store

    vqa = {"question": "এটা কী?", "options": ["ভাত", "রুটি"], "answer_index": 0, "is_human_validated": False}
    with Store.open(tmp_path / "v.sqlite") as store:
        store.save_items([Item(id="food_1", variants={"standard": {"question": "এটি কী?", "options": ["ভাত", "রুটি"],
                                                                   "answer_index": 0}, "sylhet": vqa})])
        kind = queue_kind("translation_correction")
        (target,) = kind.targets(rv.review_config(), store)
        fields = kind.fields(rv.review_config(), target)
        value = kind.annotation(rv.review_config(), store, target, {"text.question": "ইতা কিতা?",
                                                                     "text.options": "ভাত\r\nরুটি"})
        with pytest.raises(AnnotationError) as info:
            kind.annotation(rv.review_config(), store, target, {"text.question": "ইতা কিতা?"})
    assert target.target_id == "item:food_1:sylhet"
    assert target.panels[1].text == "question: এটা কী?\noptions: ভাত\nরুটি"
    assert [(f.name, f.default) for f in fields] == [("text.question", "এটা কী?"), ("text.options", "ভাত\nরুটি")]
    assert value == {"text": {"question": "ইতা কিতা?", "options": "ভাত\nরুটি"},
                     "original": {"question": "এটা কী?", "options": "ভাত\nরুটি"}, "changed": True}
    assert "text.options" in info.value.problems


def test_error_coding_shows_the_items_own_image_after_few_shot_examples(review_store: Any, rv: Any) -> None:
    import hashlib

    with review_store.open() as store:
        example = rv.png_bytes((0, 0, 255))
        ex_sha = hashlib.sha256(example).hexdigest()
        store.add_content([ContentRow(ex_sha, "image", "image/png", len(example), example, 64, 48)])
        messages = [{"role": "user", "content": [{"type": "image", "sha256": ex_sha, "mime": "image/png"},
                                                 {"type": "text", "text": "example"}]},
                    {"role": "assistant", "content": "Index: 1"},
                    {"role": "user", "content": [{"type": "image", "sha256": review_store.image_sha,
                                                  "mime": "image/png"}, {"type": "text", "text": "q"}]}]
        store.write([("requests", rv._request(store, "fewshot", "generate", "model-b", "q6", "urdu",
                                              messages=messages)),
                     ("results", {"request_id": "fewshot", "status": "ok", "output": "Index: 2",
                                  "completed_at": 0.0})])
        target = queue_kind("error_coding").target(rv.review_config(), store, "fewshot")
    assert target.image == review_store.image_sha
