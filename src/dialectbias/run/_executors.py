"""Executors behind one interface, looked up by the `executor:` name of an experiment (SPEC §5).

An executor sends a stage's pending requests and hands every answer to `PostCall` (validation, repair,
re-ask, records), so adding one = one module + one line in `_EXECUTORS` (or `register_executor`)."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import ClassVar

from dialectbias.config import Experiment
from dialectbias.errors import ConfigError
from dialectbias.run._postcall import ProgressHook
from dialectbias.run._stage import Stage
from dialectbias.run._summary import StageStats
from dialectbias.store import Store


class Executor(ABC):
    """One instance per run: it owns its model clients (opened when first needed, closed by `aclose`)."""

    name: ClassVar[str]

    def __init__(self, experiment: Experiment) -> None:
        self.exp = experiment

    async def prepare(self, stage: Stage, store: Store) -> None:
        """Open what the stage's models with pending requests need (clients, loaded models), before its
        progress starts; by default nothing."""
        return None

    @abstractmethod
    async def run_stage(self, stage: Stage, store: Store, stats: dict[str, StageStats],
                        progress: ProgressHook) -> None:
        """Send every pending request of the stage (`store.pending_requests`, per model of the stage) and write
        what `PostCall` makes of each answer; `stats` is per model id."""

    async def aclose(self) -> None:
        """Release the clients (connections, loaded models); by default nothing."""
        return None


#: name -> "module:Class", imported when first used (an executor's heavy dependencies stay optional)
_EXECUTORS: dict[str, str | type[Executor]] = {
    "local": "dialectbias.run._executor:LocalExecutor",
    "ray": "dialectbias.run._ray:RayExecutor",
}


def register_executor(name: str, executor: str | type[Executor]) -> None:
    """Make `executor: NAME` select this executor (a class, or "module:Class" imported when used)."""
    _EXECUTORS[name] = executor


def executor_names() -> list[str]:
    return sorted(_EXECUTORS)


def check_executor(experiment: Experiment) -> None:
    """ConfigError naming the line and the known executors when the experiment's `executor:` is unknown
    (without importing the executor's module)."""
    if experiment.executor not in _EXECUTORS:
        raise ConfigError(f"{experiment.where('executor')}: executor: unknown executor {experiment.executor!r}; "
                          f"expected one of: {', '.join(executor_names())}")


def get_executor(experiment: Experiment) -> type[Executor]:
    """The executor class the experiment names (see `check_executor` for an unknown name)."""
    check_executor(experiment)
    target = _EXECUTORS[experiment.executor]
    if isinstance(target, str):
        module, cls = target.split(":")
        target = getattr(importlib.import_module(module), cls)
    assert isinstance(target, type) and issubclass(target, Executor)
    return target
