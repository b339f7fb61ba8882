"""A small synthetic corpus with known character signatures: every sentence is a few shared neutral words plus
its label's marker words (standard কী/করছি, sylhet কিতা/কররাম, chittagong কিয়া/গরির), and a transcript file
of a fourth dialect (rangpur, marker বাহে) whose utterances are several sentences with `<>` markers."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest
import yaml

NEUTRAL = ("আমার", "বাড়ি", "নদী", "মাঠ", "গ্রাম", "শহর", "বাজার", "স্কুল", "বই", "গাছ", "আকাশ", "মেঘ",
           "পাখি", "মাছ", "ভাত", "দুধ", "চাল", "ডাল", "রাস্তা", "গাড়ি", "নৌকা", "পুকুর", "ফুল", "ফল")
MARKERS = {"standard": "কী করছি", "sylhet": "কিতা কররাম", "chittagong": "কিয়া গরির", "rangpur": "কেমন বাহে"}
N_PAIRS, N_TRANSCRIPTS = 60, 30


def sentence(rng: random.Random, label: str) -> str:
    return " ".join(rng.sample(NEUTRAL, 3)) + " " + MARKERS[label] + "।"


@pytest.fixture
def synthetic(tmp_path: Path) -> dict[str, Path]:
    """corpus.yaml (standard/sylhet/chittagong pairs) and transcripts.csv (rangpur) in tmp_path."""
    rng = random.Random(7)
    with (tmp_path / "pairs.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["standard_text", "dialect_text", "dialect"])
        for _ in range(N_PAIRS):
            words = " ".join(rng.sample(NEUTRAL, 3))
            for dialect in ("sylhet", "chittagong"):
                writer.writerow([f"{words} {MARKERS['standard']}।", f"{words} {MARKERS[dialect]}।", dialect])
    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(yaml.safe_dump({"name": "synthetic", "files": [
        {"path": "pairs.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    transcripts = tmp_path / "transcripts.csv"
    with transcripts.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["file_name", "district", "transcript"])
        for i in range(N_TRANSCRIPTS):
            text = " ".join(sentence(rng, "rangpur") for _ in range(3)).replace("।", " <> ।", 1)
            writer.writerow([f"test_rangpur_{i:04d}.wav", "Rangpur", text])
    return {"dir": tmp_path, "corpus": corpus, "transcripts": transcripts}
