"""The review app's translation queues over a real `translate` run: the translate task's cleaned answers are
the targets (never its raw output), a correction goes through the JSON API, and the items it exports
(machine variants marked is_human_validated: false) are targets of a qa_bias experiment's review."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")


def _translate_available() -> bool:
    from dialectbias.tasks import task_names

    return "translate" in task_names()


if not _translate_available():
    pytest.skip("the `translate` task is not in this build", allow_module_level=True)

ITEMS = [{"id": "q1", "variants": {"standard": "তোমার নাম কী?"}},
         {"id": "q2", "variants": {"standard": "আমি বাজারে যাচ্ছি।"}}]


@pytest.fixture(scope="module")
def translate_server() -> Any:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:translate_responder") as srv:
        yield srv


def test_the_translate_tasks_cleaned_answers_are_reviewed(translate_server: Any, cli: Any, qa: Any,
                                                          tmp_path: Path) -> None:
    from dialectbias.api import open_experiment
    from dialectbias.cli._review import _review_config
    from dialectbias.review import queue_kind
    from dialectbias.store import Store

    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                          encoding="utf-8")
    exp_path = tmp_path / "tr.yaml"
    exp_path.write_text(yaml.safe_dump({
        "name": "tr", "task": "translate", "data": "items.jsonl",
        "roles": {"translator": {"provider": "openai", "base_url": translate_server.base_url,
                                 "model": "translator-model"}},
        "options": {"targets": ["sylhet"]}}, allow_unicode=True), encoding="utf-8")
    assert cli("run", exp_path, "--no-progress").exit_code == 0
    exp, task = open_experiment(exp_path)
    with Store.open(exp.store_path, create=False) as store:
        cleaned = {(t.item_id, t.target): t.text for t in task.translations(store)}
        config = _review_config(exp, task, store)
        kind = queue_kind("translation_correction")
        targets = list(kind.targets(config, store))
        value = kind.annotation(config, store, targets[0], {"text": "তুমার নাম কিতা গো?"})
    shown = {(t.item_id, t.dialect): t.panels[1].text for t in targets}
    assert shown == {k: v for k, v in cleaned.items() if v}
    assert all("Note:" not in text and "Here is" not in text for text in shown.values())
    assert value["original"] == shown[(targets[0].item_id, "sylhet")] and value["changed"] is True

    out = tmp_path / "items.translated.jsonl"
    assert cli("export", exp_path, "--items", out).exit_code == 0
    project = qa.make_project(tmp_path / "qa", translate_server.base_url, items=[])
    project.rewrite(data=str(out))
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0  # stores the exported items
    qa_exp, qa_task = open_experiment(project.yaml_path)
    with Store.open(project.store_path, create=False) as store:
        ids = [t.target_id for t in queue_kind("validation").targets(_review_config(qa_exp, qa_task, store), store)]
    assert sorted(ids) == ["item:q1:sylhet", "item:q2:sylhet"]
