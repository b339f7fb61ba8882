"""`export --hf-dataset` of a RAG translate run (test server's translate_responder, a real hybrid index): the
machine variants' provenance (translating model, is_human_validated false) in the `variants` config and the card,
the corpus and index named by their fingerprint (no path), and the items equal to `export --items`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_translate import translate_project, write_corpus

datasets = pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:translate_responder") as srv:
        yield srv


def test_a_translate_run_publishes_its_machine_variants_with_provenance(server: Any, cli: Any, qa: Any,
                                                                        tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from dialectbias.data import corpus_fingerprint
    from dialectbias.retrieval import HybridIndex, default_index_dir

    corpus = write_corpus(tmp_path / "corpus")
    HybridIndex.build(corpus, out_dir=default_index_dir(corpus), exclude_splits=["validation"])
    exp = translate_project(tmp_path / "tr", server.base_url, corpus)
    assert cli("run", exp, "--no-progress").exit_code == 0
    assert cli("export", exp, "--items", tmp_path / "items.jsonl").exit_code == 0
    out = tmp_path / "ds"
    result = cli("export", exp, "--hf-dataset", out, "--license", "cc-by-sa-4.0")
    assert result.exit_code == 0, result.output
    assert "      11 generations" not in result.stdout  # a translate run's answers are its `translate` stage

    text = (out / "README.md").read_text(encoding="utf-8")
    head = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
    assert head["language"] == ["bn", "en"] and head["multilinguality"] == "multilingual"
    assert head["task_categories"] == ["translation"] and head["license"] == "cc-by-sa-4.0"

    for name, value in (("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"), ("HF_HOME", str(tmp_path / "hf"))):
        monkeypatch.setenv(name, value)
    items = datasets.load_dataset(str(out), name="items", split="test", cache_dir=str(tmp_path / "hf"))
    variants = datasets.load_dataset(str(out), name="variants", split="test", cache_dir=str(tmp_path / "hf"))

    exported = {r["id"]: r for r in qa.read_jsonl(tmp_path / "items.jsonl")}
    assert len(items) == len(exported) == 4
    for row in items:
        want = exported[row["id"]]
        for key, value in row.items():
            if key in ("variants", "translation", "is_human_validated"):
                assert json.loads(value) == want[key], (row["id"], key)
            elif key in want:
                assert value == want[key], (row["id"], key)
            else:
                assert value is None  # a field another item has
    by = {(v["item_id"], v["variant"]): v for v in variants}
    assert len(by) == 4 + 11 + 1  # 4 standard, 11 translated, q04's own sylhet
    q02 = by[("q02", "sylhet")]
    assert q02 == {"item_id": "q02", "variant": "sylhet", "language": "bn", "text": "জ্বর অইলে কিতা গরা উচিত?",
                   "provenance": "machine", "translator": "translator", "translation_model": "translator-model",
                   "is_human_validated": False, "validated_by": None}
    assert by[("q04", "sylhet")]["provenance"] == "human" and by[("q04", "sylhet")]["translation_model"] is None
    assert by[("q01", "english")]["language"] == "en"
    assert by[("q01", "standard")]["language"] == "bn"

    body = text.split("\n---\n", 1)[1]
    assert "| sylhet | bn | 4 | 1 | 3 | translator-model (3) | 0 | 3 | 1 |" in body
    assert "| chittagong | bn | 4 | 0 | 4 | translator-model (4) | 0 | 4 | 0 |" in body
    assert "| english | en | 4 | 0 | 4 | translator-model (4) | 0 | 4 | 0 |" in body
    assert "- translator role: `translator`: translator-model (openai)" in body
    digest = corpus_fingerprint(corpus).digest
    assert f"- corpus: `tiny` (fingerprint {digest}; 2 data file(s))" in body
    assert "split(s) validation held out (2 pairs)" in body and "pairs per dialect: chittagong 8, sylhet 8" in body
    assert str(tmp_path) not in text


def test_reviewed_translations_are_published_as_human_validated(server: Any, cli: Any, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import csv

    items = [{"id": f"q{i}", "domain": "Health", "variants": {"standard": text}}
             for i, text in enumerate(["তোমার নাম কী?", "আমি বাজারে যাচ্ছি।", "আমরা ভাত খাব।"])]
    exp = translate_project(tmp_path / "tr", server.base_url, None, items=items, targets=("sylhet", "chittagong"))
    assert cli("run", exp, "--no-progress").exit_code == 0
    assert cli("review", "sample", exp, "--queue", "translation_correction", "--per", "3").exit_code == 0
    sheet = tmp_path / "corrections.csv"
    assert cli("review", "export", exp, "--queue", "translation_correction", "--out", sheet).exit_code == 0
    with sheet.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[0]["human_text"] = rows[0]["translation"] + " গো"  # corrected
    rows[1]["human_text"] = rows[1]["translation"]  # confirmed as it is
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = cli("review", "import", exp, sheet, "--annotator", "rahim")
    assert result.exit_code == 0 and "2 imported" in result.stdout, result.output

    out = tmp_path / "ds"
    assert cli("export", exp, "--hf-dataset", out, "--license", "cc-by-4.0").exit_code == 0
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    variants = datasets.load_dataset(str(out), name="variants", split="test", cache_dir=str(tmp_path / "hf"))
    validated = {(v["variant"], v["text"]): v for v in variants if v["is_human_validated"]}
    assert set(validated) == {(r["dialect"], r["human_text"]) for r in rows[:2]}
    assert all(v["validated_by"] == "rahim" and v["provenance"] == "machine" for v in validated.values())
    machine = [v for v in variants if v["provenance"] == "machine"]
    assert len(machine) == 6 and sum(v["is_human_validated"] is False for v in machine) == 4

    body = (out / "README.md").read_text(encoding="utf-8").split("\n---\n", 1)[1]
    for dialect in ("sylhet", "chittagong"):
        done = sum(r["dialect"] == dialect for r in rows[:2])
        assert (f"| {dialect} | bn | 3 | 0 | 3 | translator-model (3) | {done} | {3 - done} | 0 |") in body
