"""Task definitions, looked up by the name used in experiment files."""

from __future__ import annotations

from dialectbias import plugins
from dialectbias.config import Experiment
from dialectbias.errors import ConfigError
from dialectbias.tasks._base import ReviewsTranslations, ShowsJudgments, StageYield, Task
from dialectbias.tasks._items_file import ItemsExport


def register_task(name: str, task: str | type[Task]) -> None:
    """Make `task: NAME` in an experiment file select this task (a class, or "module:Class"); the same as
    `dialectbias.plugins.register("tasks", name, task)`. An installed package declares an entry point in the
    group `dialectbias.tasks` instead (docs/extending.md)."""
    plugins.register("tasks", name, task)


def task_names() -> list[str]:
    return sorted(plugins.names("tasks"))


def get_task(name: str) -> type[Task]:
    """The task class registered under `name` (an entry point of `dialectbias.tasks`, or `register_task`)."""
    return plugins.resolve_class("tasks", name, Task)


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
           "load_task", "register_task", "task_names"]
