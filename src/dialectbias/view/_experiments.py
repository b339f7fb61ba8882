"""An experiment as the explorer holds it: the checked experiment file, its task, and its store opened
read-only. Opening never writes: no migration, no re-scoring, no run lock (`store.open_read_only`); a store
whose derived scores predate the file's settings is refused with the command that brings it up to date."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dialectbias.api import open_experiment
from dialectbias.config import Experiment
from dialectbias.data import file_digest
from dialectbias.errors import StoreError
from dialectbias.judges import scoring_fingerprint
from dialectbias.store import Store, judgments_to_rescore, open_read_only, overrides_to_rescore
from dialectbias.tasks import Task
from dialectbias.tasks._judgment_row import JudgedTask


@dataclass
class LoadedExperiment:
    """One experiment of the explorer: `key` names it in URLs (its `name:`, made unique)."""

    key: str
    exp: Experiment
    task: Task
    language: str = "bn"
    #: the experiment file's bytes as read (the explorer reads it once, when it starts)
    file_digest: str = ""

    @contextmanager
    def open(self) -> Iterator[Store]:
        """A read-only connection of its own to the store, closed after use."""
        store = open_read_only(self.exp.store_path)
        try:
            yield store
        finally:
            store.close()

    @property
    def model_ids(self) -> list[str]:
        return [m.id for m in self.exp.models]

    @property
    def judge_ids(self) -> list[str]:
        return [j.id for j in self.exp.judges]

    @property
    def primary_judge(self) -> str | None:
        return self.exp.primary_judge.id if self.exp.primary_judge else None

    def stale_scores(self, store: Store) -> str | None:
        """Why the stored judgment scores cannot be shown as the experiment's (they were derived with other
        settings than the file's now: `report` or `status` re-scores them, no model call), or None."""
        if not isinstance(self.task, JudgedTask):
            return None
        stale = []
        for judge in self.exp.judges:
            fingerprint = self.task.scoring(judge.id)
            if next(judgments_to_rescore(store, judge.id, fingerprint, batch=1), None):
                stale.append(judge.id)
            elif next(overrides_to_rescore(store, judge.id, scoring_fingerprint(self.task.rubrics[judge.id]),
                                           batch=1), None):
                stale.append(f"{judge.id} (human overrides)")
        if not stale:
            return None
        if self.file_digest != _digest(self.exp.path):
            return (f"{self.exp.path.name} changed since the explorer read it, and the stored scores of "
                    f"{', '.join(stale)} follow other settings than those it read: restart `dialectbias view` "
                    "(after `dialectbias report`, which re-scores) to show them.")
        return (f"{self.exp.path.name}: the stored scores of {', '.join(stale)} were derived with other settings "
                f"than the file's now. Run `dialectbias report {self.exp.path.name} --out DIR` (it re-scores, no "
                "model call) and reload: the explorer never writes to the store.")


def _digest(path: Path) -> str:
    """The file's SHA-256, or "" when it cannot be read."""
    try:
        return file_digest(path)
    except OSError:
        return ""


def load_experiment_read_only(path: str | Path, key: str | None = None) -> LoadedExperiment:
    """The experiment file checked (keys, models, store owner) and its store found, opened read-only once to
    check it; StoreError when there is no store yet."""
    from dialectbias.review import store_language

    exp, task = open_experiment(path, rescore=False)
    if not exp.store_path.is_file():
        raise StoreError(f"{exp.path}: no results yet at {exp.store_path} (run `dialectbias run {exp.path.name}` "
                         "first)")
    loaded = LoadedExperiment(key or exp.name, exp, task, file_digest=_digest(exp.path))
    with loaded.open() as store:
        loaded.language = store_language(store, exp.dialects)
    return loaded
