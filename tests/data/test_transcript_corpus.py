"""Dialect-only transcripts in a corpus file (`transcripts:`; Bengali paper §3.1, Pipeline 1): the real
RegSpeech12 test split read from its CSV and its XLSX, every district counted with the dialect it maps to or
why it was skipped, unknown districts an error naming file and row (or counted with `unmapped: skip`), and the
corpus fingerprint an index records changing with the transcripts."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import shared_path

REGSPEECH = ("regspeech12_test_transcripts",)
#: rows per district of the RegSpeech12 test split (its PROVENANCE.md)
DISTRICTS = {"Sylhet": 762, "Kishoreganj": 205, "Narail": 186, "Chittagong": 176, "Narsingdi": 137, "Sandwip": 131,
             "Rangpur": 130, "Tangail": 127, "Habiganj": 117, "Barishal": 101, "Comilla": 32, "Noakhali": 28}
PAIRS = [("তুমি কী খেয়েছো?", "তুমি কিতা খাইছো?"), ("আমি বাজারে যাচ্ছি।", "আমি বাজারো যাইরাম।")]


def corpus(folder: Path, transcripts: list[dict[str, Any]] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "pairs.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["standard_text", "dialect_text", "dialect"])
        writer.writerows([(s, d, "sylhet") for s, d in PAIRS])
    spec: dict[str, Any] = {"name": "c", "files": [{"path": "pairs.csv", "standard": "standard_text",
                                                    "dialect_text": "dialect_text", "dialect": "dialect"}]}
    if transcripts is not None:
        spec["transcripts"] = transcripts
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def regspeech_csv() -> Path:
    return shared_path(*REGSPEECH, "regspeech12_test_transcripts.csv", why="the RegSpeech12 transcripts")


def district_counts(loaded: Any) -> dict[str, tuple[str | None, int, str | None]]:
    return {d.value: (d.dialect, d.rows, d.skipped) for f in loaded.report.transcript_files for d in f.districts}


def test_every_regspeech12_district_maps_to_its_registered_dialect(tmp_path: Path) -> None:
    from dialectbias.data import load_corpus

    path = corpus(tmp_path, [{"path": str(regspeech_csv()), "text": "transcript", "dialect": "district"}])
    loaded = load_corpus(path)
    assert len(loaded.transcripts) == 2132 and len(loaded.pairs) == 2
    assert district_counts(loaded) == {d: (d.lower(), n, None) for d, n in DISTRICTS.items()}
    per_dialect: dict[str, int] = {}
    for t in loaded.transcripts:
        per_dialect[t.dialect] = per_dialect.get(t.dialect, 0) + 1
    assert per_dialect == {d.lower(): n for d, n in DISTRICTS.items()}
    assert {t.split for t in loaded.transcripts} == {"test"}  # from the file name
    first = loaded.transcripts[0]
    assert first.district == "Barishal" and first.row == 2 and first.text.startswith("অরে বিশটা টাহা দিছি")
    assert loaded.report.warnings() == []


def test_a_district_mapped_to_null_is_skipped_and_counted_and_a_map_merges_districts(tmp_path: Path) -> None:
    from dialectbias.data import load_corpus

    path = corpus(tmp_path, [{"path": str(regspeech_csv()), "text": "transcript", "dialect": "district",
                              "dialect_map": {"narail": None, "Sandwip": "chittagong", "Dhaka": None}}])
    loaded = load_corpus(path)
    counts = district_counts(loaded)
    assert counts["Narail"] == (None, 186, "dialect_map: null")
    assert counts["Sandwip"] == ("chittagong", 131, None)
    assert len(loaded.transcripts) == 2132 - 186
    assert sum(t.dialect == "chittagong" for t in loaded.transcripts) == 176 + 131
    assert not any(t.dialect == "sandwip" for t in loaded.transcripts)
    report = loaded.report
    assert report.transcript_files[0].skipped == 186 and report.transcript_files[0].transcripts == 1946
    warnings = report.warnings()
    assert "186 transcript row(s) skipped: dialect not mapped (see the district lines): " \
           "regspeech12_test_transcripts.csv 186" in warnings
    assert any("dialect_map 'Dhaka': matched no row" in w for w in warnings)  # a typo never maps silently
    lines = loaded.report.transcript_lines()
    assert "Sylhet → sylhet 762" in lines[1] and "Sandwip → chittagong 131" in lines[1]
    assert lines[2] == "  skipped: Narail 186 (dialect_map: null)"


def test_the_xlsx_release_reads_as_the_csv(tmp_path: Path) -> None:
    """PX12_finetuned_inference.xlsx (the upstream file; column `transcripts`) gives the same transcripts, ids
    and districts as the derived CSV."""
    from dialectbias.data import load_corpus

    xlsx = shared_path(*REGSPEECH, "PX12_finetuned_inference.xlsx", why="the RegSpeech12 release")
    from_xlsx = load_corpus(corpus(tmp_path / "x", [{"path": str(xlsx), "text": "transcripts", "dialect": "district",
                                                     "split": "test"}]))
    from_csv = load_corpus(corpus(tmp_path / "c", [{"path": str(regspeech_csv()), "text": "transcript",
                                                    "dialect": "district"}]))
    assert [(t.id, t.dialect) for t in from_xlsx.transcripts] == [(t.id, t.dialect) for t in from_csv.transcripts]
    assert district_counts(from_xlsx) == district_counts(from_csv)


def test_an_unknown_district_is_an_error_naming_file_and_row_or_counted_when_skipped(tmp_path: Path) -> None:
    from dialectbias.data import load_corpus
    from dialectbias.errors import DataError

    rows = [{"text": "হেতে কইছে আইজ বাজারত যাইতো", "region": "Noakhali"},
            {"text": "অনে কডে যাইবেন", "region": "Dhaka"},
            {"text": "   ", "region": "Noakhali"},
            {"text": "হেতে কইছে আইজ  বাজারত যাইতো", "region": "Noakhali"}]  # the first, spaced otherwise
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    path = corpus(tmp_path, [{"path": "t.jsonl", "text": "text", "dialect": "region"}])
    with pytest.raises(DataError, match=r"t\.jsonl:2: dialect 'Dhaka' is not a registered dialect: map it with "
                                        r"`dialect_map: \{Dhaka: <dialect or null>\}`"):
        load_corpus(path)
    path = corpus(tmp_path, [{"path": "t.jsonl", "text": "text", "dialect": "region", "unmapped": "skip"}])
    loaded = load_corpus(path)
    f = loaded.report.transcript_files[0]
    assert (f.rows, f.transcripts, f.skipped, f.empty, f.duplicates) == (4, 1, 1, 1, 1)
    assert district_counts(loaded) == {"Noakhali": ("noakhali", 3, None), "Dhaka": (None, 1, "unmapped")}
    with pytest.raises(DataError, match=r"transcripts\[0\]: dialect_map 'Dhaka': 'dhaka_city' is not a registered"):
        load_corpus(corpus(tmp_path, [{"path": "t.jsonl", "text": "text", "dialect": "region",
                                       "dialect_map": {"Dhaka": "dhaka_city"}}]))
    with pytest.raises(DataError, match=r"t\.jsonl:1: missing column\(s\) 'transcript'; found: text, region"):
        load_corpus(corpus(tmp_path, [{"path": "t.jsonl", "text": "transcript", "dialect": "region"}]))


def test_transcripts_change_the_corpus_fingerprint_and_say_what_changed(tmp_path: Path) -> None:
    from dialectbias.data import corpus_fingerprint

    (tmp_path / "t.csv").write_text("transcript,district\nআইজকু আমার মন ভালা নায়,Sylhet\n", encoding="utf-8")
    path = corpus(tmp_path)
    before = corpus_fingerprint(path)
    assert "transcripts" not in before.spec  # an index of a corpus without transcripts keeps its fingerprint
    corpus(tmp_path, [{"path": "t.csv", "text": "transcript", "dialect": "district"}])
    with_t = corpus_fingerprint(path)
    assert with_t.digest != before.digest
    assert before.changes(with_t) == ["transcripts[0] added ('t.csv')", "t.csv now read"]
    with (tmp_path / "t.csv").open("a", encoding="utf-8") as fh:
        fh.write("তুমি কই যাইরায়,Sylhet\n")
    edited = corpus_fingerprint(path)
    assert edited.digest != with_t.digest and with_t.changes(edited) == ["t.csv content changed"]
    corpus(tmp_path, [{"path": "t.csv", "text": "transcript", "dialect": "district",
                       "dialect_map": {"Sylhet": None}}])
    assert edited.changes(corpus_fingerprint(path)) == ["transcripts[0].dialect_map {} → {'Sylhet': None}"]
