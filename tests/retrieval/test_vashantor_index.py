"""On real Vashantor rows: a pair's standard side retrieves its own dialect text, in the asked dialect."""

from __future__ import annotations

import csv
from typing import Any

import pytest
from retrieval_corpus import write_pairs

from dialectbias.retrieval import HybridIndex
from shared_data import VASHANTOR, shared_path

ROWS = 60  # the first rows of two test files: a few seconds of embedding


@pytest.fixture(scope="module")
def vashantor_index(tmp_path_factory: pytest.TempPathFactory, e5: Any) -> tuple[Any, dict[str, list[dict]]]:
    vashantor = shared_path(*VASHANTOR)
    folder = tmp_path_factory.mktemp("vashantor")
    rows = {}
    for dialect in ("Sylhet", "Chittagong"):
        with (vashantor / "Test" / f"{dialect} Test Translation.csv").open(encoding="utf-8-sig") as fh:
            rows[dialect.lower()] = list(csv.DictReader(fh))[:ROWS]
        write_pairs(folder / f"{dialect} Test.csv", [(r["standard_text"], r["dialect_text"]) for r in
                                                     rows[dialect.lower()]], dialect)
    (folder / "v.yaml").write_text("name: v\nfiles:\n  - path: '*.csv'\n    standard: standard_text\n"
                                   "    dialect_text: dialect_text\n    dialect: dialect\n", encoding="utf-8")
    return HybridIndex.build(folder / "v.yaml", embedder=e5, out_dir=folder / "v.index"), rows


@pytest.mark.parametrize("dialect", ["sylhet", "chittagong"])
def test_own_dialect_text_is_the_top_hit(vashantor_index: tuple[Any, dict], dialect: str) -> None:
    index, rows = vashantor_index
    for row in rows[dialect][:15]:
        hits = index.search(row["standard_text"], dialect=dialect, k=5)
        assert hits[0].dialect_text == row["dialect_text"], row["standard_text"]
        assert {h.dialect for h in hits} == {dialect}
