"""Executors behind one interface, looked up by the `executor:` name of an experiment (SPEC §5).

An executor sends a stage's pending requests and hands every answer to `PostCall` (validation, repair,
re-ask, records), so adding one = one module plus one entry point in the group `dialectbias.executors` (the
built-ins are declared in pyproject.toml; code may `register_executor`); see docs/extending.md."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from dialectbias import plugins
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


def register_executor(name: str, executor: str | type[Executor]) -> None:
    """Make `executor: NAME` select this executor (a class, or "module:Class" imported when used); the same as
    `dialectbias.plugins.register("executors", name, executor)`."""
    plugins.register("executors", name, executor)


def executor_names() -> list[str]:
    return sorted(plugins.names("executors"))


def check_executor(experiment: Experiment) -> None:
    """ConfigError naming the line and the known executors when the experiment's `executor:` is unknown
    (without importing the executor's module)."""
    try:
        plugins.entry("executors", experiment.executor)
    except ConfigError as exc:
        raise ConfigError(f"{experiment.where('executor')}: executor: {exc}") from None


def get_executor(experiment: Experiment) -> type[Executor]:
    """The executor class the experiment names (see `check_executor` for an unknown name)."""
    check_executor(experiment)
    return plugins.resolve_class("executors", experiment.executor, Executor)
