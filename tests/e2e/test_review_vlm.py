"""The review app's VLM queues over a real `vqa` run on BanglaVerse sample images (the local test server's
vlm responder): every model answer to an image is an error-coding target showing the item's own image (not
a few-shot example's), and machine VQA variants are 3-point validation and correction targets, field by
field. Skips until the `vqa` task is merged, or without ../shared/data/banglaverse."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.store import Store
from shared_data import BANGLAVERSE, find_shared, missing

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")


def _vqa_available() -> bool:
    from dialectbias.tasks import task_names

    return "vqa" in task_names()


DATA = find_shared(*BANGLAVERSE)
if not _vqa_available():
    pytest.skip("the `vqa` task is not in this build", allow_module_level=True)
if DATA is None:
    pytest.skip(missing(*BANGLAVERSE, why="the VLM review test needs its sample images"), allow_module_level=True)


@pytest.fixture(scope="module")
def vlm_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:vlm_responder") as server:
        yield server


def _items(target: Path, per_domain: int = 2, domains: tuple[str, ...] = ("food", "culture")) -> dict[str, bytes]:
    """A flat JSONL of sample items (images copied next to it) with a machine `sylhet` variant; returns
    item id -> its image bytes."""
    assert DATA is not None
    rows, images_of = [], {}
    for domain in domains:
        qa = json.loads((DATA / domain / "annotations" / f"{domain}_qa_pairs.json").read_text(encoding="utf-8"))
        images = {p.stem: p for p in (DATA / domain / "images").iterdir()}
        for entry in [q for q in qa if q["image_id"] in images][:per_domain]:
            image = images[entry["image_id"]]
            (target / "images").mkdir(parents=True, exist_ok=True)
            shutil.copy(image, target / "images" / image.name)
            base = {"question": entry["question"], "options": entry["options"], "answer": entry["answer"]}
            rows.append({"id": entry["image_id"], "domain": domain, "image": f"images/{image.name}",
                         "variants": {"standard": base, "sylhet": {**base, "is_human_validated": False}}})
            images_of[entry["image_id"]] = image.read_bytes()
    (target / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                                        encoding="utf-8")
    return images_of


def test_vqa_answers_and_machine_variants_are_review_targets(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    from dialectbias.api import open_experiment
    from dialectbias.cli._review import _review_config
    from dialectbias.review import queue_kind

    images = _items(tmp_path)
    common = {"provider": "openai", "base_url": vlm_server.base_url, "max_concurrency": 4}
    path = tmp_path / "bv.yaml"
    path.write_text(yaml.safe_dump({"name": "bv", "task": "vqa", "data": "items.jsonl",
                                    "models": [{"id": "vlm-a", "model": "vlm-a", **common}],
                                    "options": {"strategies": ["zero_shot", "few_shot"], "few_shot_k": 1}},
                                   allow_unicode=True), encoding="utf-8")
    result = cli("run", path, "--no-progress")
    assert result.exit_code == 0, result.output
    exp, task = open_experiment(path)
    with Store.open(exp.store_path, create=False) as store:
        config = _review_config(exp, task, store)
        coding = list(queue_kind("error_coding").targets(config, store))
        answers = store.query("SELECT count(*) FROM current_requests c JOIN requests q ON q.rid = c.rid "
                              "JOIN results s ON s.rid = q.rid WHERE q.stage = 'generate' "
                              "AND s.status = 'ok'")[0][0]
        validation = list(queue_kind("validation").targets(config, store))
        correction = queue_kind("translation_correction")
        fields = correction.fields(config, validation[0])
    assert coding and len(coding) == answers
    for target in coding:  # the item's own image, also in few-shot prompts that carry example images first
        assert target.image == hashlib.sha256(images[target.item_id]).hexdigest()
        assert target.panels[0].text.startswith("question: ")
    assert {t.dialect for t in validation} == {"sylhet"} and len(validation) == len(images)
    assert [f.name for f in fields][:2] == ["text.question", "text.options"]
