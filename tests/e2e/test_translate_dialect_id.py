"""`translate` with `options.dialect_id`, end to end against the local test server (translate_responder): a dialect
identifier trained on a small synthetic corpus whose Sylhet side uses the responder's dialect words checks every
translation into a dialect; verdicts reach the run summary, the report (dialect_id.csv, translate_translations.csv)
and the exported items' provenance, and flagged variants are still exported."""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("sklearn")

RESPONDER = "dialectbias.testing:translate_responder"
NEUTRAL = ("ঢাকা", "নাম", "বোরো", "ধান", "মাঠ", "গ্রাম", "শহর", "স্কুল", "বই", "গাছ", "আকাশ", "পাখি", "মাছ", "ভাত",
           "রাস্তা", "নৌকা", "পুকুর", "ফুল")
# the responder's dialect words (the same for every target), the standard words they replace, and Chittagong ones
SYLHET = ("কিতা", "জিলার", "গাঙর", "বড়", "কারে", "কয়", "অইলে", "গরা")
STANDARD = ("কী", "জেলার", "নদীর", "প্রধান", "কাকে", "বলে", "হলে", "করা", "আমি", "আজ", "বাজারে", "যাব")
CHITTAGONG = ("আঁই", "গরির", "হডে", "ন", "তোঁয়ার", "বউত", "অর", "হিতে")
ITEMS = [
    {"id": "q1", "variants": {"standard": "ঢাকা জেলার প্রধান নদীর নাম কী?"}},  # → ঢাকা জিলার বড় গাঙর নাম কিতা?
    {"id": "q2", "variants": {"standard": "বোরো ধান কাকে বলে?"}},  # → বোরো ধান কারে কয়?
    {"id": "q3", "variants": {"standard": "আমি আজ বাজারে যাব।"}},  # nothing to swap: the source plus গো
]


def train_identifier(directory: Path) -> Path:
    rng = random.Random(0)
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "pairs.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["standard_text", "dialect_text", "dialect"])
        for i in range(80):
            words = rng.sample(NEUTRAL, 2)
            dialect, markers = ("sylhet", SYLHET) if i % 2 else ("chittagong", CHITTAGONG)
            writer.writerow([" ".join([*words, *rng.sample(STANDARD, 3)]), " ".join([*words, *rng.sample(markers, 3)]),
                             dialect])
    (directory / "corpus.yaml").write_text(yaml.safe_dump({"name": "synthetic", "files": [{
        "path": "pairs.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    from dialectbias.dialectid import train_dialect_id

    summary = train_dialect_id([directory / "corpus.yaml"], [], directory / "model", seed=0)
    assert summary.macro_f1 == 1.0
    return directory / "model"


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder=RESPONDER) as srv:
        yield srv


def project(directory: Path, base_url: str, **options: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                           encoding="utf-8")
    config = {"name": "tr", "task": "translate", "data": "items.jsonl",
              "roles": {"translator": {"provider": "openai", "base_url": base_url, "model": "translator-model",
                                       "max_concurrency": 2, "max_retries": 1, "timeout_s": 10}},
              "options": {"targets": ["sylhet", "chittagong", "rangpur", "english"], **options}}
    path = directory / "tr.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_translations_are_flagged_everywhere(server: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    train_identifier(tmp_path / "exp" / "dialect-id")
    exp = project(tmp_path / "exp", server.base_url, dialect_id="dialect-id/model")  # relative to the experiment
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "translate: 12 translated · 0 failed" in result.stdout, result.stdout
    assert ("dialect id: sylhet 2 ok, 1 standard · chittagong 2 other dialect, 1 standard · rangpur 3 not covered "
            "(flags, not failures: flagged variants are still exported)") in result.stdout, result.stdout

    result = cli("report", exp, "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    with (tmp_path / "report" / "dialect_id.csv").open(encoding="utf-8") as fh:
        table = {(r["target"], r["verdict"]): (int(r["n"]), float(r["share"])) for r in csv.DictReader(fh)}
    assert table == {("sylhet", "ok"): (2, 0.6667), ("sylhet", "standard"): (1, 0.3333),
                     ("chittagong", "other_dialect"): (2, 0.6667), ("chittagong", "standard"): (1, 0.3333),
                     ("rangpur", "not_covered"): (3, 1.0)}
    with (tmp_path / "report" / "translate_translations.csv").open(encoding="utf-8") as fh:
        rows = {(r["item_id"], r["target"]): r for r in csv.DictReader(fh)}
    assert rows[("q1", "chittagong")]["dialect_verdict"] == "other_dialect"
    assert rows[("q1", "chittagong")]["dialect_predicted"] == "sylhet"
    assert float(rows[("q1", "chittagong")]["dialect_probability"]) >= 0.5
    assert rows[("q1", "english")]["dialect_verdict"] == ""  # a language target: not checked
    assert "Dialect identification" in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")

    out = tmp_path / "exp" / "items.translated.jsonl"
    result = cli("export", exp, "--items", out)
    assert result.exit_code == 0, result.output
    assert "12 machine variants added" in result.stdout  # flagged variants too
    exported = {r["id"]: r for r in qa.read_jsonl(out)}
    q1 = exported["q1"]["translation"]
    assert q1["sylhet"]["dialect_id"]["verdict"] == "ok" and q1["sylhet"]["dialect_id"]["predicted"] == "sylhet"
    assert q1["chittagong"]["dialect_id"]["verdict"] == "other_dialect"
    assert q1["chittagong"]["dialect_id"]["expected"] == "chittagong"
    assert q1["chittagong"]["dialect_id"]["expected_probability"] < 0.5
    assert q1["rangpur"]["dialect_id"] == {"verdict": "not_covered", "predicted": q1["rangpur"]["dialect_id"][
        "predicted"], "probability": q1["rangpur"]["dialect_id"]["probability"], "expected": "rangpur",
        "expected_probability": None}
    assert "dialect_id" not in q1["english"]
    assert exported["q3"]["translation"]["sylhet"]["dialect_id"]["verdict"] == "standard"
    assert exported["q3"]["variants"]["chittagong"]  # flagged, still exported


def test_missing_model_is_a_clear_error(server: Any, cli: Any, tmp_path: Path) -> None:
    exp = project(tmp_path / "exp", server.base_url, dialect_id="no-such-model")
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 1
    assert "options.dialect_id:" in result.stderr and "no-such-model: no dialect-identification model here" in \
        result.stderr
    assert "Traceback" not in result.output
