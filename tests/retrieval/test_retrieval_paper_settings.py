"""The retrieval departures (docs/departures.md; Bengali paper §3.1.2): candidates from every dialect ranked with
the target-dialect bonus (`dialect_filter: false`, translate's `cross_dialect_candidates`), and the `[[SHORT]]`
tag appended to a short query's BM25 tokens (`short_tag_in_query`, translate's `short_tag_in_bm25`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from retrieval_corpus import SYLHET, write_pairs

from dialectbias.retrieval import HybridIndex


def test_cross_dialect_candidates_let_another_dialects_close_match_in(tiny_index: Any, e5: Any) -> None:
    query = "আজকে আমার মন ভালো নেই"
    ours = tiny_index.search(query, dialect="sylhet", k=5)
    assert {h.dialect for h in ours} == {"sylhet"}  # the target dialect has 8 pairs: no other is a candidate
    paper = HybridIndex.load(tiny_index.out_dir, embedder=e5)
    paper.config = paper.config.model_copy(update={"dialect_filter": False})
    hits = paper.search(query, dialect="sylhet", k=5)
    other = [h for h in hits if h.dialect == "chittagong"]
    assert other and other[0].standard == query and other[0].dialect_bonus == 0  # the same sentence, no bonus
    assert hits[0].dialect == "sylhet" and hits[0].standard == query  # the bonus still puts the target's first
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_short_tag_in_the_bm25_query_scores_only_a_pair_holding_the_word(tmp_path: Path, e5: Any) -> None:
    write_pairs(tmp_path / "data" / "Sylhet Train.csv", [*SYLHET, ("short খবর আজ", "short খবর আইজ"),
                                                          ("খবর আজ ভালো", "খবর আইজ ভালা")], "Sylhet")
    corpus = tmp_path / "c.yaml"
    corpus.write_text(yaml.safe_dump({"name": "c", "files": [{"path": "data/*.csv", "standard": "standard_text",
                                      "dialect_text": "dialect_text", "dialect": "dialect"}]}), encoding="utf-8")
    index = HybridIndex.build(corpus, embedder=e5, out_dir=tmp_path / "idx")
    query = "খবর"  # one token: a [[SHORT]] query
    before = {h.standard: h.sparse for h in index.search(query, dialect="sylhet", k=3)}
    index.config = index.config.model_copy(update={"short_tag_in_query": True})
    after = {h.standard: h.sparse for h in index.search(query, dialect="sylhet", k=3)}
    assert after["short খবর আজ"] > before["short খবর আজ"]  # the tag's token "short" matches this pair only
    assert after["খবর আজ ভালো"] == pytest.approx(before["খবর আজ ভালো"])


def test_translate_passes_the_paper_settings_to_its_retriever(tmp_path: Path, tiny_index: Any) -> None:
    from dialectbias.api import load_experiment
    from dialectbias.tasks import load_task

    (tmp_path / "items.jsonl").write_text('{"id": "1", "variants": {"standard": "আমি ভাত খাই"}}\n', encoding="utf-8")
    role = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "t"}
    for replicate, expected in (("toolkit", {"dialect_filter": True, "short_tag_in_query": False}),
                                ("paper", {"dialect_filter": False, "short_tag_in_query": True})):
        path = tmp_path / f"{replicate}.yaml"
        path.write_text(yaml.safe_dump({"name": replicate, "task": "translate", "data": "items.jsonl",
                                        "replicate": replicate, "roles": {"translator": role},
                                        "options": {"targets": ["sylhet"], "index": str(tiny_index.out_dir)}}),
                        encoding="utf-8")
        task = load_task(load_experiment(path))
        assert task.retriever is not None and task.retriever.settings == expected
        config = task.retriever.index.config  # the experiment's settings over the index's own
        assert (config.dialect_filter, config.short_tag_in_query) == tuple(expected.values())
