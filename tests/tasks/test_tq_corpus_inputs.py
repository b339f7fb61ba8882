"""translation_quality with a corpus YAML as `data:`: an edit to a data file the corpus reads (not to the YAML
itself) reloads the rows, as an edit to a data table does (issue 19 item 5: what is built from a corpus
follows the corpus)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import yaml

HEADER = ["standard_text", "dialect_text", "dialect"]


def write_pairs(path: Path, rows: list[tuple[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([HEADER, *[(s, d, "barishal") for s, d in rows]])


def references(report: Path) -> list[str]:
    with (report / "translation_quality_items.csv").open(encoding="utf-8", newline="") as fh:
        return sorted(row["reference"] for row in csv.DictReader(fh))


def test_an_edited_corpus_data_file_reloads_the_rows(tmp_path: Path, cli: Any) -> None:
    write_pairs(tmp_path / "pairs_validation.csv", [("আমি যাই", "মুই যাই"), ("তুমি খাও", "তুই খা")])
    (tmp_path / "corpus.yaml").write_text(yaml.safe_dump({"name": "c", "files": [
        {"path": "pairs_*.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    exp = tmp_path / "tq.yaml"
    exp.write_text(yaml.safe_dump({"name": "tq", "task": "translation_quality", "data": "corpus.yaml",
                                   "metrics": ["chrf"], "options": {"baselines": ["source"], "split": "validation",
                                                                    "bootstrap_resamples": 20}}), encoding="utf-8")
    assert cli("run", exp, "--no-progress").exit_code == 0
    assert cli("report", exp, "--out", tmp_path / "r1").exit_code == 0
    assert references(tmp_path / "r1") == ["তুই খা", "মুই যাই"]

    write_pairs(tmp_path / "pairs_validation.csv", [("আমি যাই", "মুই যাইরে"), ("তুমি খাও", "তুই খা")])
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert cli("report", exp, "--out", tmp_path / "r2").exit_code == 0
    assert references(tmp_path / "r2") == ["তুই খা", "মুই যাইরে"]
