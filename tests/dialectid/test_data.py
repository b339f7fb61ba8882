"""Training units: transcripts split into sentences, corpus sides labelled, and every unit set aside counted."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from dialectbias.dialectid import split_sentences
from dialectbias.dialectid._train import collect_units
from dialectbias.errors import DataError


def test_split_sentences() -> None:
    text = "গরম লাগে <> কী আছে? কই দেহি। ও পড়বে <noise> হোনেন না?\nনা এতে গরম লাগে তো <>"
    assert split_sentences(text) == ["গরম লাগে কী আছে?", "কই দেহি।", "ও পড়বে হোনেন না?", "না এতে গরম লাগে তো"]
    assert split_sentences("এক!! দুই ॥ তিন") == ["এক!!", "দুই ॥", "তিন"]
    assert split_sentences("<> ") == []


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_corpus_units_and_what_is_set_aside(tmp_path: Path) -> None:
    write_csv(tmp_path / "pairs.csv", ["standard_text", "dialect_text", "dialect"], [
        ["আমি ভাত খাই।", "আমি ভাত খাইয়ের।", "sylhet"],
        ["আমি ভাত খাই।", "আমি ভাত খাইয়ের।", "sylhet"],  # the same pair again: duplicate
        ["আমি ভাত খাই।", "আঁই ভাত হাই।", "chittagong"],  # standard side shared: kept once
        ["তুমি কোথায় যাও?", "তুমি কোথায় যাও?", "Sylhet"],  # dialect text = standard text
        ["", "কিছু একটা", "sylhet"],  # empty
        ["সে আসে।", "হে আহে।", "chittagong"],  # both sides shorter than 8 letters
        ["আমরা বাড়ি যাব।", "আমি ভাত খাইয়ের।", "chittagong"],  # a sylhet text labelled chittagong: ambiguous
    ])
    corpus = tmp_path / "c.yaml"
    corpus.write_text(yaml.safe_dump({"name": "c", "files": [{"path": "pairs.csv", "standard": "standard_text",
                                                              "dialect_text": "dialect_text", "dialect": "dialect"}]}),
                      encoding="utf-8")
    units, sources = collect_units([corpus], [], min_chars=8)
    assert sorted((u.label, u.text) for u in units) == [
        ("chittagong", "আঁই ভাত হাই।"), ("standard", "আমরা বাড়ি যাব।"), ("standard", "আমি ভাত খাই।"),
        ("standard", "তুমি কোথায় যাও?")]
    (counts,) = sources
    assert counts.read == 5 and counts.kept == {"standard": 3, "chittagong": 1}
    assert counts.skipped == {"empty": 1, "duplicate": 1, "shared_standard": 1, "identical": 1, "too_short": 2,
                              "ambiguous": 2}
    # a standard sentence and its dialect versions share one group
    group = {u.text: u.group for u in units}
    assert group["আমি ভাত খাই।"] == group["আঁই ভাত হাই।"] != group["তুমি কোথায় যাও?"]


def test_transcript_units(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "t.csv", ["file_name", "district", "transcript"], [
        ["a.wav", "Rangpur", "কেমন আছেন বাহে? মুই ভালো আছোং। হয়"],
        ["b.wav", "Barisal", "মোরা বাড়ি যামু <> এহন। মোরা বাড়ি যামু <> এহন।"],  # a duplicate sentence
        ["c.wav", "Rangpur", "<>"],
    ])
    units, (counts,) = collect_units([], [path], min_chars=8)
    assert [(u.label, u.text) for u in units] == [("rangpur", "কেমন আছেন বাহে?"), ("rangpur", "মুই ভালো আছোং।"),
                                                  ("barishal", "মোরা বাড়ি যামু এহন।")]
    assert units[0].group == units[1].group != units[2].group
    assert counts.read == 3 and counts.skipped == {"too_short": 1, "duplicate": 1, "empty": 1}


def test_transcripts_from_xlsx(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["file_name", "transcripts", "district"])  # RegSpeech12's own column names
    sheet.append(["x.wav", "কেমন আছেন বাহে? মুই ভালো আছোং।", "Rangpur"])
    book.save(tmp_path / "t.xlsx")
    units, _ = collect_units([], [tmp_path / "t.xlsx"], min_chars=8)
    assert [u.label for u in units] == ["rangpur", "rangpur"]


@pytest.mark.parametrize(("header", "row", "message"), [
    (["district", "words"], ["Rangpur", "x"], "needs a district column .* found: district, words"),
    (["district", "transcript"], ["Atlantis", "কেমন আছেন বাহে"], r"t\.csv:2: district 'Atlantis' is not in the "
                                                               "dialect registry"),
    (["district", "transcript"], ["", "কেমন আছেন বাহে"], r"t\.csv:2: column 'district' is empty"),
])
def test_transcript_file_errors(tmp_path: Path, header: list[str], row: list[str], message: str) -> None:
    path = write_csv(tmp_path / "t.csv", header, [row])
    with pytest.raises(DataError, match=message):
        collect_units([], [path], min_chars=8)


def test_missing_and_unsupported_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"none\.csv: transcript file not found"):
        collect_units([], [tmp_path / "none.csv"], min_chars=8)
    (tmp_path / "t.txt").write_text("x", encoding="utf-8")
    with pytest.raises(DataError, match=r"unsupported transcript format '\.txt'"):
        collect_units([], [tmp_path / "t.txt"], min_chars=8)
    with pytest.raises(DataError, match="corpus file not found"):
        collect_units([tmp_path / "none.yaml"], [], min_chars=8)
