"""`roles:` (models a task needs for a role) and `executor:` in experiment files: errors name the key and line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectbias.api import load_experiment
from dialectbias.errors import ConfigError
from dialectbias.plugins import unregister
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.tasks import register_task
from dialectbias.tasks.qa_bias import QABiasTask

HEAD = """\
name: roles
task: {task}
data: items.jsonl
models:
  - {{id: model-a, provider: openai, model: a, base_url: "http://127.0.0.1:1/v1"}}
judges:
  - {{id: judge-a, provider: openai, model: j, base_url: "http://127.0.0.1:1/v1"}}
"""


class NeedsExtractor(QABiasTask):
    name = "needs_extractor"
    required_roles = ("extractor",)


@pytest.fixture(autouse=True)
def task_needing_a_role() -> Iterator[None]:
    register_task("needs_extractor", NeedsExtractor)
    yield
    unregister("tasks", "needs_extractor")


def write(tmp_path: Path, tail: str = "", task: str = "qa_bias") -> Path:
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "variants": {"standard": "ক", "sylhet": "খ"}}\n',
                                          encoding="utf-8")
    path = tmp_path / "exp.yaml"
    path.write_text(HEAD.format(task=task) + tail, encoding="utf-8")
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    return str(info.value)


def test_a_role_is_a_full_model_config_whose_id_defaults_to_the_role_name(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, "roles:\n  extractor: {provider: openai, model: x, "
                                           "base_url: 'http://127.0.0.1:2/v1', rpm: 60}\n", task="needs_extractor"))
    role: Any = exp.role("extractor")
    assert isinstance(role, OpenAIModelConfig) and (role.id, role.rpm) == ("extractor", 60)
    assert exp.model("extractor") is role


def test_a_task_without_its_role_is_an_error_naming_the_task_and_the_role(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, task="needs_extractor"))
    assert "task 'needs_extractor' needs a model for role 'extractor'" in message


def test_a_bad_role_entry_is_named_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "roles:\n  extractor:\n    provider: openai\n    model: x\n"
                           "    base_url: http://127.0.0.1:2/v1\n    max_concurrency: 0\n")
    message = error_of(path)
    assert f"roles.extractor.max_concurrency (line {line_of(path, 'max_concurrency')}):" in message


def test_a_role_with_an_unknown_provider_is_named_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "roles:\n  translator:\n    provider: openia\n    model: x\n")
    message = error_of(path)
    assert f"roles.translator.provider (line {line_of(path, 'openia')}): unknown provider 'openia'" in message


def test_a_role_id_may_not_be_a_model_or_judge_id(tmp_path: Path) -> None:
    path = write(tmp_path, "roles:\n  extractor:\n    id: judge-a\n    provider: openai\n    model: x\n"
                           "    base_url: http://127.0.0.1:2/v1\n")
    message = error_of(path)
    assert (f"roles.extractor.id (line {line_of(path, '    id: judge-a')}): role 'extractor': id 'judge-a' is "
            "already a model or judge id") in message


def test_asking_for_a_role_the_experiment_lacks_names_the_role(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path))
    with pytest.raises(ConfigError, match="no model for role 'extractor'"):
        exp.role("extractor")


def test_the_executor_defaults_to_local(tmp_path: Path) -> None:
    assert load_experiment(write(tmp_path)).executor == "local"


def test_an_unknown_executor_is_named_with_its_line_and_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "executor: rai\n")
    assert error_of(path) == (f"{path}:{line_of(path, 'executor')}: executor: unknown executor 'rai'; "
                              "expected one of: local, ray")
