"""`data: hf://…` goes through Hugging Face `datasets` (here a dataset folder on disk, offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialectbias.data import iter_items
from dialectbias.errors import DataError

pytest.importorskip("datasets")


def test_hf_uri_loads_a_local_dataset_folder(tmp_path: Path) -> None:
    folder = tmp_path / "bn_qa"
    folder.mkdir()
    rows = [{"id": f"q{i}", "domain": "Technology", "variants": {"standard": f"প্রশ্ন {i}", "sylhet": f"প্রশ্ন {i} কিতা"},
             "source": "test"} for i in range(3)]
    (folder / "test.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    items = list(iter_items(f"hf://{folder}?split=test", required_variants=("standard",)))
    assert [i.id for i in items] == ["q0", "q1", "q2"]
    assert items[1].variants["sylhet"] == "প্রশ্ন 1 কিতা" and items[1].metadata == {"source": "test"}


def test_hf_uri_that_cannot_load_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(DataError, match=r"hf://no-such-org/no-such-dataset\?split=test: cannot load the dataset"):
        list(iter_items("hf://no-such-org/no-such-dataset?split=test"))
