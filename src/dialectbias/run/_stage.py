"""A stage is one pass over the store: build requests for some models, send them, record results."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from dialectbias.data import Item
from dialectbias.judges._structured import StructuredParse
from dialectbias.providers import ModelConfig
from dialectbias.run._specs import RequestSpec
from dialectbias.store import Store

Write = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Skipped:
    """A request a stage could not build (e.g. its generation failed); counted in the summary.

    Without `kind`, `reason` is one summary note of its own (distinct notes are listed). With `kind`, a
    short reason shared by many items (e.g. "no successful generation to judge"), the summary folds them
    into one counted note per stage × model, keeping the first `reason` (then just what was skipped,
    e.g. "model-a/q01/sylhet") as its example."""

    reason: str
    kind: str | None = None


@dataclass
class Outcome:
    """What came back for one request, after structured parsing (and the one re-ask) if any.

    `output` is the text that was parsed: the re-ask's answer when there was a re-ask, else the request's
    own; `source_request_id` is the request whose result holds it (the re-ask's own request row, stage
    "<stage>:reask", or the request itself), so a judgment points at what it was parsed from."""

    output: str
    source_request_id: str
    parsed: StructuredParse | None = None


@dataclass
class Stage:
    """`build` yields the stage's requests for one model; `rubric`, when set, is the pydantic model
    structured outputs are validated against, `rubrics` the model of each model id that has its own
    (judges with different rubrics); `finalize` turns an outcome into derived rows (e.g. a judgment)
    written in the same transaction as the result."""

    name: str
    models: list[ModelConfig]
    build: Callable[[Store, ModelConfig], Iterator[RequestSpec | Skipped]]
    rubric: type[BaseModel] | None = None
    finalize: Callable[[Store, sqlite3.Row, Outcome], list[Write]] | None = None
    rubrics: dict[str, type[BaseModel]] = field(default_factory=dict)

    def validator(self, model_id: str) -> type[BaseModel] | None:
        """The pydantic model a structured answer of `model_id` is validated against (its own in `rubrics`,
        else the stage's `rubric`); None: its answers are not parsed."""
        return self.rubrics.get(model_id, self.rubric)


@dataclass(frozen=True)
class StageYield:
    """How many usable results one stage produced for one model (among the experiment's current requests):
    a stage whose every model has none makes the run fail; `detail` says what was counted and why the rest
    is unusable, e.g. "0 of 12 judgments scored (12 unscored: parse failed)"."""

    stage: str
    model_id: str
    usable: int
    detail: str


def yield_problems(yields: Iterable[StageYield]) -> tuple[list[str], list[str]]:
    """(empty, warnings): one line per stage with no usable result for any model (nothing of it can be
    reported: the run and `report` fail), one per model without any in a stage that has some."""
    by_stage: dict[str, list[StageYield]] = {}
    for y in yields:
        by_stage.setdefault(y.stage, []).append(y)
    empty: list[str] = []
    warnings: list[str] = []
    for stage, rows in by_stage.items():
        if not any(y.usable for y in rows):
            empty.append(f"stage {stage} produced no usable result: "
                         + "; ".join(f"{y.model_id}: {y.detail}" for y in rows))
        else:
            warnings += [f"{stage} · {y.model_id}: no usable result: {y.detail}" for y in rows if not y.usable]
    return empty, warnings


class StagedTask(Protocol):
    """What the run machinery needs from a task (`dialectbias.tasks.Task` is one): the runner is given it,
    it never looks a task up itself."""

    def stages(self) -> list[Stage]: ...

    def load_items(self) -> Iterable[Item]: ...

    def input_warnings(self) -> list[str]: ...

    def input_identity(self) -> list[Any] | None: ...

    def stage_yields(self, store: Store) -> list[StageYield]: ...

    def summary_lines(self, store: Store) -> list[str]: ...
