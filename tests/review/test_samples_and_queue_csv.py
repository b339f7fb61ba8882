"""Stratified queue samples, the CSV round trip of the translation queues, gold labelling of exported items
and the human_validated table, over a store with known translation targets."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from dialectbias.data import Item, iter_items
from dialectbias.errors import ConfigError, DataError
from dialectbias.review import (
    ReviewConfig,
    Sample,
    add_annotator,
    assign,
    clear_sample,
    draw_sample,
    human_validated_rows,
    import_queue_csv,
    is_queue_csv,
    latest_annotations,
    queue_kind,
    queue_targets,
    sample_queue,
    save_annotation,
    stored_sample,
    tasks_of,
    write_queue_csv,
)
from dialectbias.review._annotators import annotator_named
from dialectbias.store import Store, dumps

#: sylhet: 8 items translated (4 Health, 4 without a domain); chittagong: 3 (Health)
SYLHET, CHITTAGONG = [f"t{i:02d}" for i in range(8)], ["t00", "t01", "t02"]


def _translation(store: Store, item: str, dialect: str, text: str) -> str:
    rid = f"tr-{item}-{dialect}"
    store.write([("requests", {"request_id": rid, "stage": "translate", "model_id": "translator", "item_id": item,
                               "variant": dialect, "refs": "[]", "template": "t", "prompt_hash": "h",
                               "messages": "[]", "params": "{}", "json_schema": None, "cache_key": rid,
                               "meta": dumps({"source": [f"প্রমিত {item}"]}), "created_at": 0.0}),
                 ("results", {"request_id": rid, "status": "ok", "output": text, "completed_at": 0.0})])
    return rid


def build_store(path: Path) -> Path:
    with Store.open(path) as store:
        items = [Item(id=f"t{i:02d}", domain="Health" if i < 4 else None, variants={"standard": f"প্রমিত t{i:02d}"})
                 for i in range(8)]
        # an item with its own machine variants: a text and a VQA entry (corrected field by field)
        items.append(Item(id="m1", domain="food", variants={
            "standard": "ভাত খাও", "sylhet": "ভাত খাও গো",
            "chittagong": {"question": "কিয়া খা?", "options": ["ভাত", "মাছ"], "is_human_validated": False}},
            metadata={"is_human_validated": {"sylhet": False}}))
        store.save_items(items)
        for item in SYLHET:
            _translation(store, item, "sylhet", f"সিলেটি {item}")
        for item in CHITTAGONG:
            _translation(store, item, "chittagong", f"চাটগাঁইয়া {item}")
    return path


@pytest.fixture
def tstore(tmp_path: Path) -> Path:
    return build_store(tmp_path / "tr.sqlite")


def config() -> ReviewConfig:
    return ReviewConfig(judge_ids=[], model_ids=[])


def target_ids(store: Store, queue: str) -> list[str]:
    return [t.target_id for t in queue_targets(queue_kind(queue), config(), store)]


# -- samples ---------------------------------------------------------------------------------------------


def test_a_stratified_sample_takes_n_per_dialect_and_all_of_a_short_stratum(tstore: Path) -> None:
    with Store.open(tstore) as store:
        everything = target_ids(store, "translation_score")
        assert len(everything) == 8 + 3 + 2  # translate requests + m1's two machine variants
        sample, previous = sample_queue(store, config(), queue_kind("translation_score"), per=5, seed=7)
        assert previous is None
        counts = {s.key["dialect"]: (len(s.ids), s.available) for s in sample.strata}
        assert counts == {"sylhet": (5, 9), "chittagong": (4, 4)}
        assert [s.key["dialect"] for s in sample.short] == ["chittagong"]
        listed = target_ids(store, "translation_score")
        assert sorted(listed) == sorted(sample.ids) and len(listed) == 5 + 4
        assert stored_sample(store, "translation_score").ids == sample.ids
        assert target_ids(store, "validation") == everything  # other queues are not sampled


def test_the_sample_is_reproducible_stratum_by_stratum(tstore: Path) -> None:
    with Store.open(tstore) as store:
        kind = queue_kind("translation_score")
        targets = list(kind.targets(config(), store))
    a = draw_sample(targets, "translation_score", 3, ("dialect",), 1, {})
    b = draw_sample(list(reversed(targets)), "translation_score", 3, ("dialect",), 1, {})
    assert a.ids == b.ids  # the order targets come in does not matter
    other_seeds = {draw_sample(targets, "translation_score", 3, ("dialect",), s, {}).ids for s in range(2, 8)}
    assert len(other_seeds | {a.ids}) > 1  # the seed matters
    # a stratum's sample does not change when another stratum loses targets
    fewer = draw_sample([t for t in targets if not (t.dialect == "chittagong" and t.item_id == "t00")],
                        "translation_score", 3, ("dialect",), 1, {})
    sylhet = {s.key["dialect"]: s.ids for s in a.strata}["sylhet"]
    assert {s.key["dialect"]: s.ids for s in fewer.strata}["sylhet"] == sylhet
    # and the stored form reads back the same
    assert Sample.from_json(a.to_json()).ids == a.ids


def test_validation_defaults_to_ten_per_domain_and_variant(tstore: Path) -> None:
    with Store.open(tstore) as store:
        sample, _ = sample_queue(store, config(), queue_kind("validation"), seed=0)
    assert sample.per == 10 and sample.by == ("domain", "dialect")
    got = {(s.key["domain"], s.key["dialect"]): (len(s.ids), s.available) for s in sample.strata}
    assert got == {("Health", "sylhet"): (4, 4), ("", "sylhet"): (4, 4), ("Health", "chittagong"): (3, 3),
                   ("food", "sylhet"): (1, 1), ("food", "chittagong"): (1, 1)}


def test_other_queues_need_per_and_known_keys(tstore: Path) -> None:
    with Store.open(tstore) as store:
        with pytest.raises(ConfigError, match="--per"):
            sample_queue(store, config(), queue_kind("translation_correction"))
        with pytest.raises(ConfigError, match="--by: 'model'"):
            sample_queue(store, config(), queue_kind("translation_score"), by=["model"])


def test_resampling_replaces_and_clear_removes(tstore: Path) -> None:
    with Store.open(tstore) as store:
        first, _ = sample_queue(store, config(), queue_kind("translation_score"), per=2, seed=1)
        second, previous = sample_queue(store, config(), queue_kind("translation_score"), per=1, seed=1)
        assert previous is not None and previous.ids == first.ids and len(second.ids) == 2
        assert clear_sample(store, "translation_score").ids == second.ids
        assert len(target_ids(store, "translation_score")) == 13 and clear_sample(store, "translation_score") is None


def test_assignments_and_tasks_follow_the_sample(tstore: Path) -> None:
    with Store.open(tstore) as store:
        add_annotator(store, "rahim", ["sylhet", "chittagong"], ["translation_score"])
        assign(store, config())
        rahim = annotator_named(store, "rahim")
        assert len(tasks_of(store, rahim)) == 13
        sample, _ = sample_queue(store, config(), queue_kind("translation_score"), per=2, seed=3)
        assert {t.target_id for t in tasks_of(store, rahim)} == set(sample.ids)  # earlier tasks are hidden
        clear_sample(store, "translation_score")
        assert len(tasks_of(store, rahim)) == 13  # and come back
        add_annotator(store, "karim", ["sylhet"], ["translation_score"])
        sample, _ = sample_queue(store, config(), queue_kind("translation_score"), per=2, seed=3)
        assign(store, ReviewConfig(judge_ids=[], model_ids=[], overlap=2))
        karim = annotator_named(store, "karim")
        got = {t.target_id for t in tasks_of(store, karim)}
        assert got == {t for t in sample.ids if "sylhet" in t}  # the sampled sylhet targets (overlap 2)


def test_the_app_api_lists_only_the_sample(tstore: Path, rv: Any) -> None:
    pytest.importorskip("fastapi")
    with Store.open(tstore) as store:
        token = add_annotator(store, "rahim", ["sylhet", "chittagong"], ["translation_score"])
        sample, _ = sample_queue(store, config(), queue_kind("translation_score"), per=2, seed=5)
    with rv.serve_app(tstore, config()) as url:
        tasks = rv.http("GET", f"{url}/api/tasks", token=token).json()
        assert {t["target_id"] for t in tasks} == set(sample.ids)
        reply = rv.http("POST", f"{url}/api/tasks/{tasks[0]['id']}/annotation", token=token, body={"score": 7})
        assert reply.status == 200, reply.text
        assert reply.json()["value"] == {"score": 7}
        home = rv.http("GET", f"{url}/", opener=rv.login(url, token))  # the queue says it is a sample
        assert home.status == 200 and '<span class="sample">a sample: 2 per dialect (seed 5)</span>' in home.text


# -- the CSV round trip ------------------------------------------------------------------------------------


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_translation_score_export_fill_import(tstore: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores.csv"
    with Store.open(tstore) as store:
        sample_queue(store, config(), queue_kind("translation_score"), per=2, seed=2)
        written = write_queue_csv(queue_kind("translation_score"), config(), store, out, excel=True)
    assert written.rows == 4 and written.sampled
    rows = read_csv(out)
    assert list(rows[0]) == ["queue", "target_id", "item_id", "dialect", "domain", "source", "translation",
                             "reference", "human_score", "comment"]
    assert out.read_bytes().startswith(b"\xef\xbb\xbf")
    readme = (tmp_path / "scores.README.txt").read_text(encoding="utf-8")
    assert "human_score: an integer 0–10" in readme and "    10 = " in readme
    for r in rows:
        assert r["source"] == ("ভাত খাও" if r["item_id"] == "m1" else f"প্রমিত {r['item_id']}")
        assert r["domain"] == {"m1": "food"}.get(r["item_id"], "Health" if r["item_id"] < "t04" else "")
        assert r["translation"] and r["human_score"] == ""
    assert {r["dialect"] for r in rows} == {"sylhet", "chittagong"}
    rows[0]["human_score"], rows[1]["human_score"], rows[1]["comment"] = "8", "৩", "ভালো না"  # Bengali digit
    rows[2]["human_score"] = "10.0"  # as a spreadsheet writes it
    write_csv(out, rows)
    assert is_queue_csv(out)
    with Store.open(tstore) as store:
        summary = import_queue_csv(store, config(), out, "rahim", now=100.0)
        assert (summary.imported, summary.skipped_empty, summary.unchanged, summary.rows) == (3, 1, 0, 4)
        stored = latest_annotations(store, "translation_score")
        assert stored[(rows[1]["target_id"], "rahim")] == ({"score": 3}, "ভালো না", 100.0)
        assert stored[(rows[2]["target_id"], "rahim")][0] == {"score": 10}
        again = import_queue_csv(store, config(), out, "rahim", now=200.0)
        assert (again.imported, again.unchanged) == (0, 3)
        assert store.query("SELECT count(*) FROM annotations")[0][0] == 3
        # the export now leaves out what is annotated, --all keeps it
        assert write_queue_csv(queue_kind("translation_score"), config(), store, out).rows == 1
        assert write_queue_csv(queue_kind("translation_score"), config(), store, out, include_done=True).rows == 4


def test_an_invalid_file_stores_nothing_and_names_every_row_and_column(tstore: Path, tmp_path: Path) -> None:
    out = tmp_path / "v.csv"
    with Store.open(tstore) as store:
        write_queue_csv(queue_kind("validation"), config(), store, out)
    rows = read_csv(out)
    assert "human_label" in rows[0]
    rows[0]["human_label"] = "2"
    rows[1]["human_label"] = "3"  # out of range: CSV line 3
    rows[2]["human_label"] = "x"  # line 4
    rows[3]["comment"] = "only a comment"  # line 5
    rows[4]["target_id"], rows[4]["human_label"] = "nope", "1"  # line 6
    rows[5]["target_id"], rows[5]["human_label"] = rows[0]["target_id"], "1"  # line 7: a duplicate
    write_csv(out, rows)
    with Store.open(tstore) as store, pytest.raises(DataError) as err:
        import_queue_csv(store, config(), out, "rahim")
    message = str(err.value)
    assert "5 invalid rows; nothing was imported" in message
    assert f"{out}:3: column human_label: '3' is not an integer 0–2" in message
    assert f"{out}:4: column human_label: 'x' is not an integer" in message
    assert f"{out}:5: column human_label: empty, but the row has a comment" in message
    assert f"{out}:6: column target_id: unknown target 'nope'" in message
    assert f"{out}:7: column target_id: {rows[0]['target_id']!r} is also on line 2" in message
    with Store.open(tstore) as store:
        assert store.query("SELECT count(*) FROM annotations")[0][0] == 0


def test_corrections_by_csv_and_by_the_app_are_the_same_record(tstore: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.csv"
    cfg = config()
    kind = queue_kind("translation_correction")
    with Store.open(tstore) as store:
        write_queue_csv(kind, cfg, store, out)
    rows = read_csv(out)
    header = list(rows[0])
    assert {"human_text", "human_text.question", "human_text.options"} <= set(header)
    by_id = {r["target_id"]: r for r in rows}
    vqa = by_id["item:m1:chittagong"]
    assert vqa["human_text"] == "" and vqa["translation"].startswith("question: কিয়া খা?")
    vqa["human_text.question"], vqa["human_text.options"] = "কিতা খাইবায়?", "ভাত\nমাছ"
    by_id["item:m1:sylhet"]["human_text"] = "ভাত খাও গো"  # kept as the machine wrote it
    by_id["tr-t00-sylhet"]["human_text"] = "সিলেটি t00 ঠিক"
    write_csv(out, rows)
    with Store.open(tstore) as store:
        summary = import_queue_csv(store, cfg, out, "csv-annotator", now=50.0)
        assert summary.imported == 3
        # the same answers through the app's path (save_annotation of kind.annotation's value)
        targets = {t.target_id: t for t in kind.targets(cfg, store)}
        app_data = {"item:m1:chittagong": {"text.question": "কিতা খাইবায়?", "text.options": "ভাত\nমাছ"},
                    "item:m1:sylhet": {"text": "ভাত খাও গো"}, "tr-t00-sylhet": {"text": "সিলেটি t00 ঠিক"}}
        for target_id, data in app_data.items():
            save_annotation(store, target_id, "app-annotator", kind.annotation_kind,
                            kind.annotation(cfg, store, targets[target_id], data), now=50.0)
        stored = latest_annotations(store, kind.annotation_kind)
        for target_id in app_data:
            assert stored[(target_id, "csv-annotator")][0] == stored[(target_id, "app-annotator")][0]
        assert stored[("item:m1:chittagong", "csv-annotator")][0]["text"] == {"question": "কিতা খাইবায়?",
                                                                               "options": "ভাত\nমাছ"}
        assert stored[("item:m1:sylhet", "csv-annotator")][0]["changed"] is False


def test_a_judgments_csv_is_not_a_queue_csv(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("judgment_id,judge,human_relevance\n", encoding="utf-8")
    assert not is_queue_csv(path)
    assert not is_queue_csv(tmp_path / "missing.csv")


# -- gold labelling and the human_validated table ---------------------------------------------------------


def test_export_items_applies_corrections_and_records_validation(tstore: Path, tmp_path: Path) -> None:
    from dialectbias.tasks.translate._export import export_store_items

    cfg = config()
    kind = queue_kind("translation_correction")
    with Store.open(tstore) as store:
        targets = {t.target_id: t for t in kind.targets(cfg, store)}

        def correct(target_id: str, who: str, data: dict[str, str], at: float) -> None:
            value = kind.annotation(cfg, store, targets[target_id], data)
            save_annotation(store, target_id, who, kind.annotation_kind, value, now=at)

        correct("item:m1:sylhet", "rahim", {"text": "ভাত খাইও"}, 1_700_000_000.0)
        correct("item:m1:sylhet", "karim", {"text": "ভাত খাইও গো"}, 1_700_000_100.0)  # later: wins, a conflict
        correct("item:m1:chittagong", "rahim", {"text.question": "কিয়া খা?", "text.options": "ভাত\nমাছ"},
                1_700_000_200.0)  # kept as is
        for who, label in (("rahim", 1), ("karim", 2)):
            save_annotation(store, "item:m1:sylhet", who, "validation_3pt", {"label": label}, now=1.0)

    class Exp:  # the two things export_store_items reads of an experiment
        data = None

        def resolve(self, p: str) -> Path:
            return Path(p)

    out = tmp_path / "items.jsonl"
    with Store.open(tstore) as store:
        written = export_store_items(Exp(), store, out)  # type: ignore[arg-type]
    rows = {json.loads(line)["id"]: json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()}
    m1 = rows["m1"]
    assert m1["variants"]["sylhet"] == "ভাত খাইও গো"
    assert m1["validated_by"] == {"sylhet": "karim", "chittagong": "rahim"}
    assert m1["is_human_validated"] == {"sylhet": True, "chittagong": True}
    assert m1["variants"]["chittagong"]["is_human_validated"] is True
    assert m1["variants"]["chittagong"]["options"] == ["ভাত", "মাছ"]
    assert m1["validation"]["sylhet"] == {"annotator": "karim", "at": "2023-11-14T22:15:00Z", "corrected": True,
                                          "labels": [2, 1]}
    assert m1["validation"]["chittagong"]["corrected"] is False
    g = written.gold
    assert (g.corrected, g.kept, g.validated, g.conflicts, g.machine) == (1, 1, 2, 1, 0)
    assert written.items == 9 and any("2 variants human-validated" in line for line in written.lines())

    # the exported items as another experiment's items: the table counts them
    with Store.open(tmp_path / "qa.sqlite") as store:
        store.save_items(iter_items(out))
        table = {r["variant"]: r for r in human_validated_rows(store)}
    assert table["sylhet"] == {"variant": "sylhet", "items": 1, "human_validated": 1, "machine": 0,
                               "corrected_in_review": 1, "labels_0": 0, "labels_1": 1, "labels_2": 1,
                               "labels_n": 2, "label_mean": 1.5}
    assert table["chittagong"]["human_validated"] == 1 and table["chittagong"]["corrected_in_review"] == 0
    assert table["standard"]["items"] == 9 and table["standard"]["human_validated"] == 0


def test_the_table_counts_machine_variants_and_the_stores_own_review(tstore: Path) -> None:
    with Store.open(tstore) as store:
        save_annotation(store, "tr-t01-sylhet", "rahim", "translation_correction",
                        {"text": "x", "original": "সিলেটি t01", "changed": True}, now=1.0)
        save_annotation(store, "tr-t01-sylhet", "rahim", "validation_3pt", {"label": 0}, now=1.0)
        save_annotation(store, "item:m1:sylhet", "rahim", "validation_3pt", {"label": 2}, now=1.0)
        table = {r["variant"]: r for r in human_validated_rows(store)}
    # sylhet: m1's machine variant (in the items) and t01's translation (only in review so far)
    assert table["sylhet"] == {"variant": "sylhet", "items": 1, "human_validated": 0, "machine": 1,
                               "corrected_in_review": 1, "labels_0": 1, "labels_1": 0, "labels_2": 1,
                               "labels_n": 2, "label_mean": 1.0}
    assert table["chittagong"]["machine"] == 1 and table["chittagong"]["label_mean"] is None


def test_error_coding_round_trips_through_the_csv(review_store: Any, rv: Any, tmp_path: Path) -> None:
    out = tmp_path / "errors.csv"
    cfg = rv.review_config()
    with review_store.open() as store:
        written = write_queue_csv(queue_kind("error_coding"), cfg, store, out)
    assert written.rows == 1
    rows = read_csv(out)
    assert rows[0]["target_id"] == review_store.image_request and rows[0]["translation"].startswith("جواب")
    assert "human_categories" in rows[0]
    rows[0]["human_categories"] = "entity_misrecognition, language_violation"
    write_csv(out, rows)
    with review_store.open() as store:
        assert import_queue_csv(store, cfg, out, "karim").imported == 1
        rows[0]["human_categories"] = "none"
        write_csv(out, rows)
        assert import_queue_csv(store, cfg, out, "karim").imported == 1
        stored = latest_annotations(store, "error_coding")
        assert stored[(review_store.image_request, "karim")][0] == {"categories": []}
        rows[0]["human_categories"] = "wrong_thing"
        write_csv(out, rows)
        with pytest.raises(DataError, match=r":2: column human_categories: unknown category 'wrong_thing'"):
            import_queue_csv(store, cfg, out, "karim")


def test_a_list_field_correction_must_keep_the_number_of_lines(tstore: Path) -> None:
    from dialectbias.review import Gold

    with Store.open(tstore) as store:
        for rid, text in (("tr-options", "ক\nখ\n\nগ"), ("tr-short", "ক\nখ"), ("tr-text", "নতুন লেখা")):
            save_annotation(store, rid, "rahim", "translation_correction", {"text": text, "changed": True}, now=1.0)
        gold = Gold(store)
    assert gold.corrected_field("tr-options", True, ["a", "b", "c"]) == ["ক", "খ", "গ"]  # blank lines dropped
    assert gold.corrected_field("tr-text", False, "পুরনো") == "নতুন লেখা"
    assert gold.corrected_field("tr-none", False, "পুরনো") is None
    assert gold.corrected_field("tr-short", True, ["a", "b", "c"]) is None
    assert gold.summary.not_applied == ["target tr-short: 2 lines for a list of 3 (by rahim); the machine's list is "
                                        "kept"]
    assert "warning: correction not applied: target tr-short" in gold.summary.lines()[-1]
