"""Task definitions, looked up by the name used in experiment files."""

from __future__ import annotations

import importlib

from dialectbias.errors import ConfigError

_TASKS: dict[str, str] = {
    "qa_bias": "dialectbias.tasks.qa_bias:QABiasTask",
    "association": "dialectbias.tasks.association:AssociationTask",
}


def task_names() -> list[str]:
    return sorted(_TASKS)


def get_task(name: str) -> type:
    """The task class registered under `name`."""
    if name not in _TASKS:
        raise ConfigError(f"unknown task {name!r}; expected one of {task_names()}")
    module, cls = _TASKS[name].split(":")
    return getattr(importlib.import_module(module), cls)


__all__ = ["get_task", "task_names"]
