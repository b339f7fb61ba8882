"""Re-runs with unchanged inputs reuse the compiled request set; any changed input rebuilds it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dialectbias.api import run_experiment
from dialectbias.tasks.qa_bias import QABiasTask


@pytest.fixture
def counted_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = QABiasTask._generation_requests

    def counting(self: QABiasTask, store: Any, model: Any) -> Any:
        calls.append(model.id)
        return original(self, store, model)

    monkeypatch.setattr(QABiasTask, "_generation_requests", counting)
    return calls


def test_unchanged_rerun_reuses_the_compiled_requests(qa: Any, qa_server: Any, tmp_path: Path,
                                                      counted_builds: list[str]) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url)
    first = run_experiment(project.yaml_path, progress=False)
    assert counted_builds == ["model-a", "model-b"]
    again = run_experiment(project.yaml_path, progress=False)
    assert counted_builds == ["model-a", "model-b"]  # no rebuild
    assert again.calls_made == 0
    assert [(s.stage, s.model_id, s.total, s.already_done) for s in again.stages] == \
        [(s.stage, s.model_id, s.total, s.total) for s in first.stages]


def test_edited_data_file_rebuilds_and_sends_only_the_new_requests(qa: Any, qa_server: Any, tmp_path: Path,
                                                                   counted_builds: list[str]) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=3)
    run_experiment(project.yaml_path, progress=False)
    items = tmp_path / "items.jsonl"
    with items.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(qa.qa_item(3), ensure_ascii=False) + "\n")
    again = run_experiment(project.yaml_path, progress=False)
    assert len(counted_builds) == 4
    generated = {s.model_id: s.calls for s in again.stages if s.stage == "generate"}
    assert generated == {"model-a": 3, "model-b": 3}  # the new item in its 3 variants
    assert sum(s.calls for s in again.stages if s.stage == "judge") == 2 * 2  # 2 models × 2 dialects


def test_edited_template_rebuilds(qa: Any, qa_server: Any, tmp_path: Path, counted_builds: list[str]) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    templates = tmp_path / "templates" / "qa_bias"
    templates.mkdir(parents=True)
    (templates / "answer_sylhet.j2").write_text("সিলেটি: {{ question }}", encoding="utf-8")
    project.rewrite(options={"templates_dir": "templates"})
    run_experiment(project.yaml_path, progress=False)
    (templates / "answer_sylhet.j2").write_text("সিলেটি ভাষায়: {{ question }}", encoding="utf-8")
    st = (templates / "answer_sylhet.j2").stat()
    os.utime(templates / "answer_sylhet.j2", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    again = run_experiment(project.yaml_path, progress=False)
    assert len(counted_builds) == 4
    assert {s.model_id: s.calls for s in again.stages if s.stage == "generate"} == {"model-a": 2, "model-b": 2}
