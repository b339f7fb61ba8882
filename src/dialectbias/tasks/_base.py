"""What a task is: its stages (requests to send), how results become records, and its report."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from dialectbias.config import Experiment
from dialectbias.data import Item, iter_items, known_variants, unknown_variant_message
from dialectbias.errors import ConfigError
from dialectbias.run._stage import Stage
from dialectbias.store import Store


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Task(ABC):
    """A task is a value built from an experiment. Adding one = one module + one registry line."""

    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]] = NoOptions
    required_variants: ClassVar[tuple[str, ...]] = ()
    #: what `data:` must hold, shown by `dialectbias tasks` (set it on every task)
    item_format: ClassVar[str] = ""

    def __init__(self, experiment: Experiment) -> None:
        self.exp = experiment
        try:
            self.options: Any = self.Options.model_validate(experiment.options)
        except ValidationError as exc:
            details = "; ".join(f"options.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"{experiment.path}: {details}") from None

    @classmethod
    def validate_experiment(cls, experiment: Experiment) -> None:
        """Raise ConfigError when the experiment cannot run this task (called when the file is loaded)."""
        task = cls(experiment)
        task.check()

    def check(self) -> None:
        if self.exp.data is None:
            raise ConfigError(f"{self.exp.path}: task {self.name!r} needs `data:` (a file or hf://name)")
        known = known_variants(self.exp.dialects)
        for name in self.exp.variants or []:
            if name.lower() not in known:
                raise ConfigError(f"{self.exp.path}: variants: {unknown_variant_message(name, known)}")

    def load_items(self) -> Iterator[Item]:
        """Items from `data`, restricted to the experiment's `variants` when given."""
        assert self.exp.data is not None
        wanted = set(self.exp.variants) if self.exp.variants else None
        for item in iter_items(self.exp.data, base_dir=self.exp.base_dir, required_variants=self.required_variants,
                               known=known_variants(self.exp.dialects)):
            if wanted is not None:
                item = item.model_copy(update={"variants": {k: v for k, v in item.variants.items()
                                                            if k in wanted}})
            yield item

    def input_files(self) -> list[Path]:
        """Files the requests are built from (data, templates, word lists): their size and mtime go
        into the compile fingerprint, so editing one rebuilds the requests."""
        return [self.exp.resolve(self.exp.data)] if self.exp.data else []

    def input_identity(self) -> list[Any] | None:
        """What identifies the task's external inputs; None when it cannot be told (e.g. hf:// data),
        in which case requests are always rebuilt."""
        if self.exp.data and self.exp.data.startswith("hf://"):
            return None
        identity: list[Any] = []
        for path in self.input_files():
            files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            for f in files:
                try:
                    st = f.stat()
                except OSError:
                    return None
                identity.append([str(f), st.st_size, st.st_mtime_ns])
        return identity

    @abstractmethod
    def stages(self) -> list[Stage]:
        """The passes of a run, in order (e.g. generate, then judge)."""

    @abstractmethod
    def report(self, store: Store, out_dir: Path) -> dict[str, Any]:
        """Write the task's tables (CSV) and return what the HTML report shows."""

    def summary_lines(self, store: Store) -> list[str]:
        """What the task made of the results (rejected answers, unscored judgments…), for the run summary."""
        return []
