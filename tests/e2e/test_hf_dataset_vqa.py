"""`export --hf-dataset` of a vqa run on the real BanglaVerse sample (test server's VLM responder): the items'
images are embedded as the Hub's `Image` feature (`datasets` returns the very image file), no local path is in
the folder, and the generations equal `export --format parquet`. Needs ../shared/data/banglaverse."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import BANGLAVERSE, find_shared, missing

datasets = pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")
DATA = find_shared(*BANGLAVERSE)
pytestmark = pytest.mark.skipif(DATA is None, reason=missing(
    *BANGLAVERSE, why="the vqa dataset export test needs the BanglaVerse sample images"))


@pytest.fixture(scope="module")
def vlm_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:vlm_responder") as server:
        yield server


def test_a_vqa_run_publishes_its_images_as_the_image_feature(vlm_server: Any, cli: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    config = {"name": "bv-vqa", "task": "vqa", "data": str(DATA),
              "models": [{"id": "vlm-a", "model": "vlm-a", "provider": "openai", "base_url": vlm_server.base_url,
                          "max_concurrency": 4, "max_retries": 2, "timeout_s": 30}],
              "options": {"strategies": ["zero_shot"], "only_with_images": True, "max_items_per_domain": 1}}
    exp = tmp_path / "bv-vqa.yaml"
    exp.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    assert cli("run", exp, "--no-progress").exit_code == 0
    assert cli("export", exp, "--format", "parquet", "--out", tmp_path / "flat").exit_code == 0
    out = tmp_path / "ds"
    result = cli("export", exp, "--hf-dataset", out, "--license", "cc-by-nc-sa-4.0")
    assert result.exit_code == 0, result.output
    assert "       9 image files embedded in the items (Image feature)" in result.stdout

    text = (out / "README.md").read_text(encoding="utf-8")
    head = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
    assert head["task_categories"] == ["visual-question-answering"] and head["language"] == ["bn"]
    assert "9 image file(s) are embedded in the `items` config" in text
    for f in out.rglob("*"):  # no local path anywhere: not the data folder, not the experiment's
        if f.is_file():
            blob = f.read_bytes()
            assert str(DATA).encode() not in blob and str(tmp_path).encode() not in blob, f

    for name, value in (("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"), ("HF_HOME", str(tmp_path / "hf"))):
        monkeypatch.setenv(name, value)
    items = datasets.load_dataset(str(out), name="items", split="test", cache_dir=str(tmp_path / "hf"))
    assert items.features["image"].__class__.__name__ == "Image" and len(items) == 9
    sources = {p.name: p for p in Path(str(DATA)).rglob("*") if p.is_file() and p.suffix.lower() in
               (".jpg", ".jpeg", ".png", ".webp")}
    raw = pq.read_table(out / "data/items/test-00000-of-00001.parquet").column("image").to_pylist()
    for row, stored in zip(items, raw, strict=True):
        assert stored["bytes"] == sources[stored["path"]].read_bytes()  # the very file
        assert row["image"].size == Image.open(io.BytesIO(stored["bytes"])).size
        assert json.loads(row["variants"])["standard"]  # a question text

    generations = datasets.load_dataset(str(out), name="generations", split="test", cache_dir=str(tmp_path / "hf"))
    flat = pq.read_table(tmp_path / "flat" / "generations.parquet")
    assert len(generations) == flat.num_rows == 9
    assert generations.to_list() == flat.to_pylist()
