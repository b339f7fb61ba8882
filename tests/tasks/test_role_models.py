"""A task can send requests to a model named for a role (`roles: {extractor: …}`): here a test-only task
whose extractor processes each generation, end to end against the test server, cached and resumed."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectbias.api import run_experiment
from dialectbias.plugins import unregister
from dialectbias.providers import ModelConfig
from dialectbias.report import ReportContent
from dialectbias.run import RequestSpec, Skipped, Stage
from dialectbias.store import Store
from dialectbias.tasks import Task, register_task


class ExtractDemo(Task):
    """Every model answers the standard question; the extractor reads each answer."""

    name = "extract_demo"
    item_format = "qa_bias items"
    required_roles = ("extractor",)

    def stages(self) -> list[Stage]:
        return [Stage("generate", self.exp.models, self._answers),
                Stage("extract", [self.exp.role("extractor")], self._extractions)]

    def _answers(self, store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        for item in store.iter_items():
            yield RequestSpec(stage="generate", model=model, item_id=item.id, variant="standard",
                              template="demo/answer", messages=[{"role": "user",
                                                                 "content": f"প্রশ্ন: {item.variants['standard']}"}])

    def _extractions(self, store: Store, extractor: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        for model in self.exp.models:
            for answer in store.stage_results("generate", model.id):
                yield RequestSpec(stage="extract", model=extractor, item_id=answer.item_id, variant=answer.variant,
                                  template="demo/extract", refs=[answer.request_id], meta={"model_id": model.id},
                                  messages=[{"role": "user", "content": f"প্রশ্ন: {answer.output}"}])

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        return ReportContent(title="extract demo", sections=[])


@pytest.fixture
def extract_demo() -> Iterator[None]:
    register_task("extract_demo", ExtractDemo)
    yield
    unregister("tasks", "extract_demo")


def test_a_role_model_processes_each_generation_and_is_resumed_like_the_rest(
        qa: Any, qa_server: Any, tmp_path: Path, extract_demo: None) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=3)
    project.config.pop("judges")
    project.rewrite(task="extract_demo", roles={"extractor": {
        "provider": "openai", "model": "extractor-model", "base_url": qa_server.base_url, "max_concurrency": 2}})
    summary = run_experiment(project.yaml_path, progress=False)
    assert {(s.stage, s.model_id): s.calls for s in summary.stages} == {
        ("generate", "model-a"): 3, ("generate", "model-b"): 3, ("extract", "extractor"): 6}
    assert qa_server.stats()["chat_by_model"]["extractor-model"] == 6
    with sqlite3.connect(project.store_path) as conn:
        pairs = conn.execute(
            "SELECT g.model_id, g.item_id, s.status FROM requests e JOIN requests g "
            "ON g.request_id = json_extract(e.refs, '$[0]') JOIN results s ON s.request_id = e.request_id "
            "WHERE e.stage = 'extract' AND e.model_id = 'extractor' ORDER BY 1, 2").fetchall()
    assert pairs == [(m, f"q0{i}", "ok") for m in ("model-a", "model-b") for i in (1, 2, 3)]
    again = run_experiment(project.yaml_path, progress=False)
    assert again.calls_made == 0 and qa_server.stats()["chat_by_model"]["extractor-model"] == 6
