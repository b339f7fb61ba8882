"""The chain a BanglaVerse study follows (issue 19.9): a folder in the release layout → `export --items` (the
flat JSONL, image paths relative to the file) → `translate` → `export --items` → `vqa` on the new variants,
through the CLI against the local test servers (the VLM responder decodes every image it gets).

One chain runs on a layout made by the test (two domains, generated images); the other on a copy of part
of the real release sample in ../shared/data/banglaverse (skipped with a message without it).
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.store import Store
from dialectbias.testing._vlm_responder import IMAGE_CHECK_FAILED
from shared_data import BANGLAVERSE, find_shared, missing

REAL = find_shared(*BANGLAVERSE)
QUESTIONS = {"food": ("এই খাবারটির নাম কী?", ["ভুনা খিচুড়ি", "পান্তা ভাত", "চাপ", "পোলাও"]),
             "sports": ("এই খেলাটির নাম কী?", ["ক্রিকেট", "ফুটবল", "হকি", "কাবাডি"])}


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Any, Any]]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:translate_responder") as translator, \
            TestServer(responder="dialectbias.testing:vlm_responder") as vlm:
        yield translator, vlm


def write_yaml(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def made_layout(root: Path) -> int:
    """<root>/data/<domain>/annotations/<domain>_qa_pairs.json and images/, as in the release; the answer is
    the option text. Returns the number of QA pairs."""
    from PIL import Image

    n = 0
    for d, (domain, (question, options)) in enumerate(QUESTIONS.items()):
        (root / "data" / domain / "images").mkdir(parents=True)
        (root / "data" / domain / "annotations").mkdir()
        pairs = []
        for i in range(1, 3):
            image_id = f"{domain}_{i:03d}"
            image = Image.new("RGB", (32, 24), (60 * i, 90 * d, 120))
            image.save(root / "data" / domain / "images" / f"{image_id}.jpg")
            pairs.append({"image_id": image_id, "question": question, "options": options, "answer": options[i]})
        (root / "data" / domain / "annotations" / f"{domain}_qa_pairs.json").write_text(
            json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
        n += len(pairs)
    return n


def copied_layout(root: Path, per_domain: int = 2, domains: tuple[str, ...] = ("food", "sports")) -> int:
    """The first QA pairs with an image of a few domains of the real release sample, copied with their images."""
    assert REAL is not None
    n = 0
    for domain in domains:
        qa = json.loads((REAL / domain / "annotations" / f"{domain}_qa_pairs.json").read_text(encoding="utf-8"))
        images = {p.stem: p for p in (REAL / domain / "images").iterdir()}
        pairs = [q for q in qa if q["image_id"] in images][:per_domain]
        (root / "data" / domain / "images").mkdir(parents=True)
        (root / "data" / domain / "annotations").mkdir()
        for q in pairs:
            shutil.copy(images[q["image_id"]], root / "data" / domain / "images" / images[q["image_id"]].name)
        (root / "data" / domain / "annotations" / f"{domain}_qa_pairs.json").write_text(
            json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
        n += len(pairs)
    return n


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def chain(tmp_path: Path, servers: tuple[Any, Any], cli: Any, n_items: int) -> None:
    translator, vlm = servers
    # 1. the folder as a flat items file, written next to it (no run needed)
    write_yaml(tmp_path / "release.yaml", {"name": "release", "task": "vqa", "data": "BanglaVerse"})
    result = cli("export", tmp_path / "release.yaml", "--items", tmp_path / "items.jsonl")
    assert result.exit_code == 0, result.output
    rows = read_jsonl(tmp_path / "items.jsonl")
    assert len(rows) == n_items
    for row in rows:  # relative to the items file's folder, through the layout's data/ folder
        assert row["image"].startswith("BanglaVerse/data/") and (tmp_path / row["image"]).is_file(), row["image"]

    # 2. translate the items into a dialect and a language
    write_yaml(tmp_path / "translate.yaml", {
        "name": "bv-translate", "task": "translate", "data": "items.jsonl",
        "roles": {"translator": {"provider": "openai", "base_url": translator.base_url, "model": "translator"}},
        "options": {"targets": ["sylhet", "english"], "fields": ["question", "options"]}})
    result = cli("run", tmp_path / "translate.yaml", "--no-progress")
    assert result.exit_code == 0, result.output
    result = cli("export", tmp_path / "translate.yaml", "--items", tmp_path / "translated.jsonl")
    assert result.exit_code == 0, result.output
    translated = read_jsonl(tmp_path / "translated.jsonl")
    assert all({"standard", "sylhet", "english"} <= set(r["variants"]) for r in translated)

    # 3. vqa on every variant: every item is asked, with its image
    vlm.reset_stats()
    write_yaml(tmp_path / "vqa.yaml", {
        "name": "bv-vqa", "task": "vqa", "data": "translated.jsonl",
        "models": [{"id": "vlm-a", "provider": "openai", "base_url": vlm.base_url, "model": "vlm-a"}]})
    result = cli("run", tmp_path / "vqa.yaml", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "image" not in result.stderr, result.stderr  # no item refused for its image
    assert vlm.stats()["chat_by_model"] == {"vlm-a": 3 * n_items}  # items × variants, zero-shot
    with Store.open(tmp_path / "bv-vqa.sqlite", create=False) as store:
        outputs = [r.output or "" for r in store.stage_results("generate")]
    assert len(outputs) == 3 * n_items and not [o for o in outputs if o.startswith(IMAGE_CHECK_FAILED)]
    assert cli("report", tmp_path / "vqa.yaml", "--out", tmp_path / "report").exit_code == 0
    with (tmp_path / "report" / "vqa_accuracy.csv").open(encoding="utf-8", newline="") as f:
        overall = {r["variant"]: r["n"] for r in csv.DictReader(f) if r["domain"] == "all"}
    assert overall == {"standard": str(n_items), "sylhet": str(n_items), "english": str(n_items)}


def test_a_made_layout_goes_through_translate_to_vqa(servers: tuple[Any, Any], cli: Any, tmp_path: Path) -> None:
    chain(tmp_path, servers, cli, made_layout(tmp_path / "BanglaVerse"))


@pytest.mark.skipif(REAL is None, reason=missing(*BANGLAVERSE, why="this chain runs on a copy of the real release "
                                                                 "sample"))
def test_the_release_sample_goes_through_translate_to_vqa(servers: tuple[Any, Any], cli: Any,
                                                          tmp_path: Path) -> None:
    chain(tmp_path, servers, cli, copied_layout(tmp_path / "BanglaVerse"))


def test_translate_given_the_folder_says_how_to_get_an_items_file(cli: Any, tmp_path: Path) -> None:
    made_layout(tmp_path / "BanglaVerse")
    write_yaml(tmp_path / "translate.yaml", {
        "name": "bv-translate", "task": "translate", "data": "BanglaVerse",
        "roles": {"translator": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "t"}},
        "options": {"targets": ["sylhet"]}})
    result = cli("run", tmp_path / "translate.yaml", "--no-progress")
    assert result.exit_code == 1
    assert f"{tmp_path / 'BanglaVerse'}: a folder, not a data file" in result.stderr
    assert "dialectbias export EXP --items OUT.jsonl" in result.stderr


def test_export_items_after_a_run_on_the_folder_points_at_the_images(servers: tuple[Any, Any], cli: Any,
                                                                     tmp_path: Path) -> None:
    _, vlm = servers
    n = made_layout(tmp_path / "BanglaVerse")
    model = {"id": "vlm-a", "provider": "openai", "base_url": vlm.base_url, "model": "vlm-a"}
    write_yaml(tmp_path / "release.yaml", {"name": "release", "task": "vqa", "data": "BanglaVerse",
                                           "models": [model]})
    assert cli("run", tmp_path / "release.yaml", "--no-progress").exit_code == 0
    result = cli("export", tmp_path / "release.yaml", "--items", tmp_path / "items.jsonl")
    assert result.exit_code == 0, result.output
    rows = read_jsonl(tmp_path / "items.jsonl")
    assert sorted(r["image"] for r in rows) == [f"BanglaVerse/data/{d}/images/{d}_{i:03d}.jpg"
                                                for d in sorted(QUESTIONS) for i in (1, 2)]
    write_yaml(tmp_path / "flat.yaml", {"name": "flat", "task": "vqa", "data": "items.jsonl", "models": [model]})
    vlm.reset_stats()
    result = cli("run", tmp_path / "flat.yaml", "--no-progress")
    assert result.exit_code == 0, result.output
    assert vlm.stats()["chat_by_model"] == {"vlm-a": n}  # every item asked, with its image
