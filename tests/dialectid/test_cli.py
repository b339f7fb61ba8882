"""`dialectbias train-dialect-id` and `dialectbias dialect-id`: they run, print what they did, and fail clearly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def test_train_then_label(synthetic: dict[str, Path], cli: Any) -> None:
    out = synthetic["dir"] / "model"
    result = cli("train-dialect-id", synthetic["corpus"], "--transcripts", synthetic["transcripts"], "--out", out,
                 "--seed", "1")
    assert result.exit_code == 0, result.output
    assert "120 pairs → " in result.stdout and "set aside:" in result.stdout
    assert "standard side shared by several pairs (kept once)" in result.stdout
    assert "30 transcripts → 89 units; set aside: 1 duplicate (same text and label)" in result.stdout
    for label in ("chittagong", "rangpur", "standard", "sylhet", "macro"):
        assert label in result.stdout
    assert "macro-F1 1.000" in result.stdout and (out / "model.npz").is_file()
    assert "held out from corpus.yaml: accuracy 1.000 (recall chittagong 1.00, standard 1.00, sylhet 1.00)" in \
        result.stdout

    result = cli("train-dialect-id", synthetic["corpus"], "--out", synthetic["dir"] / "m2",
                 "--eval-transcripts", synthetic["transcripts"])
    assert result.exit_code == 0, result.output
    assert "evaluation sources (transcripts.csv): every unit" in result.stdout
    assert "left out of the evaluation: 0 units also in training; labels the model lacks: 89 rangpur" in result.stdout

    result = cli("dialect-id", out, "নতুন কথা কিতা কররাম", "মাঠ ফুল কেমন বাহে")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("sylhet ") and lines[1].startswith("rangpur ")
    result = cli("dialect-id", out, "বই গাছ কী করছি", "--json")
    (row,) = json.loads(result.stdout)
    assert row["label"] == "standard" and set(row["probabilities"]) == {"chittagong", "rangpur", "standard", "sylhet"}
    assert abs(sum(row["probabilities"].values()) - 1) < 1e-5


def test_failures_are_one_clear_message(synthetic: dict[str, Path], cli: Any, tmp_path: Path) -> None:
    result = cli("dialect-id", tmp_path / "nothing", "text")
    assert result.exit_code == 1 and "nothing: no dialect-identification model here" in result.stderr
    assert "Traceback" not in result.output
    result = cli("train-dialect-id", "--out", tmp_path / "m")
    assert result.exit_code == 1 and "give at least one corpus file or transcript file" in result.stderr
    result = cli("train-dialect-id", synthetic["corpus"], "--out", tmp_path / "m", "--max-per-label", "10",
                 "--test-size", "0.5")
    assert result.exit_code == 0 and "--max-per-label left out: 50 chittagong, 50 standard, 50 sylhet" in result.stdout
    result = cli("train-dialect-id", synthetic["corpus"], "--transcripts", tmp_path / "none.csv", "--out",
                 tmp_path / "m")
    assert result.exit_code == 1 and "none.csv: transcript file not found" in result.stderr
    result = cli("train-dialect-id", tmp_path / "none.yaml", "--out", tmp_path / "m")
    assert result.exit_code == 1 and "none.yaml: corpus file not found" in result.stderr


def test_an_empty_or_wordless_text_is_an_error_not_a_label(synthetic: dict[str, Path], cli: Any) -> None:
    out = synthetic["dir"] / "model"
    assert cli("train-dialect-id", synthetic["corpus"], "--out", out).exit_code == 0
    result = cli("dialect-id", out, "")
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.strip() == ("error: text 1 (''): no words to label (an empty or punctuation-only text "
                                     "says nothing about its dialect)")
    result = cli("dialect-id", out, "নতুন কথা কিতা কররাম", "  …?  ", "--json")
    assert result.exit_code == 1 and "text 2 ('  …?  '): no words to label" in result.stderr
