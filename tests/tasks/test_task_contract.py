"""The task contract (issue 20 item 1): a task that implements only the abstract `stages` and `report` goes through
every command that calls an optional hook (export of tables and items, the review queues) with an empty result,
never an AttributeError; the optional protocols are the ones the built-in tasks implement."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectbias.api import open_experiment, run_experiment
from dialectbias.plugins import unregister
from dialectbias.providers import ModelConfig
from dialectbias.report import ReportContent
from dialectbias.run import RequestSpec, Skipped, Stage
from dialectbias.store import Store
from dialectbias.tasks import ReviewsTranslations, ShowsJudgments, Task, register_task


class Minimal(Task):
    """Only what `Task` makes abstract: each model answers each item's standard question."""

    name = "minimal_contract"
    item_format = "qa_bias items"

    def stages(self) -> list[Stage]:
        return [Stage("generate", self.exp.models, self._answers)]

    def _answers(self, store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        for item in store.iter_items():
            yield RequestSpec(stage="generate", model=model, item_id=item.id, variant="standard",
                              template="demo/answer", messages=[{"role": "user",
                                                                 "content": f"প্রশ্ন: {item.variants['standard']}"}])

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        return ReportContent(title="minimal", sections=[])


@pytest.fixture
def minimal(qa: Any, qa_server: Any, tmp_path: Path) -> Iterator[Any]:
    register_task(Minimal.name, Minimal)
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=2)
    project.config.pop("judges")
    project.rewrite(task=Minimal.name)
    yield project
    unregister("tasks", Minimal.name)


def test_the_default_hooks_say_nothing_to_add(minimal: Any) -> None:
    _, task = open_experiment(minimal.yaml_path)
    assert task.rubrics == {} and task.review_model_ids() == []
    assert not isinstance(task, ReviewsTranslations) and not isinstance(task, ShowsJudgments)


def test_export_of_a_minimal_task_writes_the_store_tables_and_no_task_table(minimal: Any, cli: Any,
                                                                              tmp_path: Path) -> None:
    run_experiment(minimal.yaml_path, progress=False)
    out = tmp_path / "out"
    result = cli("export", minimal.yaml_path, "--out", out, "--format", "csv")
    assert result.exit_code == 0, result.output
    with (out / "generations.csv").open(encoding="utf-8", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 2 * 2  # two models × two items
    assert sorted(p.stem for p in out.iterdir()) == ["annotations", "generations", "judgments", "reasks"]


def test_export_items_of_a_minimal_task_before_and_after_a_run(minimal: Any, cli: Any, tmp_path: Path) -> None:
    before = tmp_path / "before.jsonl"
    result = cli("export", minimal.yaml_path, "--items", before)
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["id"] for line in before.read_text(encoding="utf-8").splitlines()] == ["q01", "q02"]
    run_experiment(minimal.yaml_path, progress=False)
    after = tmp_path / "after.jsonl"
    assert cli("export", minimal.yaml_path, "--items", after).exit_code == 0
    def rows(path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    assert rows(after) == rows(before)  # the stored items, as they were read


def test_a_review_queue_of_a_minimal_task_is_empty(minimal: Any, cli: Any, tmp_path: Path) -> None:
    run_experiment(minimal.yaml_path, progress=False)
    out = tmp_path / "scores.csv"
    result = cli("review", "export", minimal.yaml_path, "--queue", "translation_score", "--out", out)
    assert result.exit_code == 0, result.output
    with out.open(encoding="utf-8", newline="") as fh:
        assert list(csv.DictReader(fh)) == []


def test_the_built_in_tasks_opt_into_the_protocols_they_implement() -> None:
    from dialectbias.tasks import get_task

    reviews = {n for n in ("qa_bias", "association", "decision", "translate", "vqa", "caption", "translation_quality")
               if issubclass(get_task(n), ReviewsTranslations)}
    shows = {n for n in ("qa_bias", "caption", "translation_quality") if issubclass(get_task(n), ShowsJudgments)}
    assert reviews == {"translate", "translation_quality"} and shows == {"caption", "translation_quality"}
