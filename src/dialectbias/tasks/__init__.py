"""Task definitions, looked up by the name used in experiment files."""

from __future__ import annotations

import importlib

from dialectbias.config import Experiment
from dialectbias.errors import ConfigError
from dialectbias.tasks._base import ReviewsTranslations, ShowsJudgments, StageYield, Task
from dialectbias.tasks._items_file import ItemsExport

#: name -> "module:Class" (imported when first used) or the class itself; adding a task = one line here
_TASKS: dict[str, str | type[Task]] = {
    "qa_bias": "dialectbias.tasks.qa_bias:QABiasTask",
    "association": "dialectbias.tasks.probes.association:AssociationTask",
    "translate": "dialectbias.tasks.translate:TranslateTask",
    "decision": "dialectbias.tasks.probes.decision:DecisionTask",
    "vqa": "dialectbias.tasks.vlm:VQATask",
    "caption": "dialectbias.tasks.vlm:CaptionTask",
    "translation_quality": "dialectbias.tasks.translation_quality:TranslationQualityTask",
}


def register_task(name: str, task: str | type[Task]) -> None:
    """Make `task: NAME` in an experiment file select this task (a class, or "module:Class")."""
    _TASKS[name] = task


def unregister_task(name: str) -> None:
    _TASKS.pop(name, None)


def task_names() -> list[str]:
    return sorted(_TASKS)


def get_task(name: str) -> type[Task]:
    """The task class registered under `name`."""
    if name not in _TASKS:
        raise ConfigError(f"unknown task {name!r}; expected one of {task_names()}")
    target = _TASKS[name]
    if isinstance(target, str):
        module, cls = target.split(":")
        target = getattr(importlib.import_module(module), cls)
    assert isinstance(target, type) and issubclass(target, Task)
    return target


def load_task(experiment: Experiment) -> Task:
    """The experiment's task, checked: its name, options (each bad key with its line), roles and settings."""
    try:
        task_cls = get_task(experiment.task)
    except ConfigError as exc:
        raise ConfigError(f"{experiment.where('task')}: task: {exc}") from None
    task = task_cls(experiment)
    task.check_roles()
    task.check()
    return task


__all__ = ["ItemsExport", "ReviewsTranslations", "ShowsJudgments", "StageYield", "Task", "get_task",
           "load_task", "register_task", "task_names", "unregister_task"]
