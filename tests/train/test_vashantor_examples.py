"""Training examples and the grouped held-out split on the real Vashantor pairs (needs ../shared/data): its
files are row-parallel across 5 dialects, so the grouping must keep each standard sentence, with its 5
dialect versions, on one side."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectbias.data import load_corpus
from dialectbias.train import pair_examples, split_examples
from shared_data import VASHANTOR, shared_path


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vashantor = shared_path(*VASHANTOR, why="this test reads the Vashantor pairs")
    path = tmp_path_factory.mktemp("vashantor") / "vashantor.yaml"
    path.write_text(f"name: vashantor\nfiles:\n  - {{path: \"{vashantor}/Train/*.csv\", standard: standard_text, "
                    "dialect_text: dialect_text, dialect: dialect}\n", encoding="utf-8")
    return path


def test_vashantor_train_pairs_split_by_sentence(corpus_file: Path) -> None:
    corpus = load_corpus(corpus_file)
    sylhet = pair_examples(corpus, dialects=["sylhet"], splits=["train"])
    # 1,875 Sylhet train rows: 6 whose dialect text equals the standard text are counted and left out
    assert corpus.report.duplicates == 0 and len(corpus.pairs) == 5 * 1875
    assert len(sylhet.examples) == 1869 and dict(sylhet.skipped) == {
        "dialect text = standard text": 6, "other dialect (--dialect)": 4 * 1875}
    every = pair_examples(corpus).examples
    train, held = split_examples(every, 0.2, seed=0)
    groups = {e.group for e in every}
    held_groups = {e.group for e in held}
    assert len(held_groups) == round(0.2 * len(groups))
    assert held_groups.isdisjoint(e.group for e in train)
    # the row-parallel files: most held-out sentences come with all 5 dialect versions
    per_group: dict[str, set[str]] = {}
    for e in held:
        per_group.setdefault(e.group, set()).add(e.dialect)
    assert sum(len(d) == 5 for d in per_group.values()) > 0.9 * len(per_group)
