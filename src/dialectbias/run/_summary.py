"""Counts of what a run did, per stage and model, for the summary table and exit code."""

from __future__ import annotations

from pydantic import BaseModel


class StageStats(BaseModel):
    stage: str
    model_id: str
    total: int = 0
    already_done: int = 0
    calls: int = 0
    cached: int = 0
    retries: int = 0
    failed: int = 0
    parse_failed: int = 0
    repaired: int = 0
    reasked: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    skipped: int = 0
    cost: float | None = None
    errors: dict[str, int] = {}
    stopped: str | None = None
    #: requests of a stopped model left unsent (pending; the next run sends them)
    unsent: int = 0

    def note(self, error: str) -> None:
        """Count an error message; distinct messages are kept (up to 20), repeats are counted."""
        if error in self.errors or len(self.errors) < 20:
            self.errors[error] = self.errors.get(error, 0) + 1


class RunSummary(BaseModel):
    experiment: str
    store: str
    stages: list[StageStats] = []
    outcome: list[str] = []
    seconds: float = 0.0
    #: problems short of an error, each with its count: refused or oversized items, missing variants,
    #: a model or judge with no usable result
    warnings: list[str] = []
    #: one line per stage that produced no usable result for any model (the run exits with EXIT_EMPTY)
    empty: list[str] = []

    @property
    def calls_made(self) -> int:
        return sum(s.calls for s in self.stages)

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.stages)

    @property
    def stopped(self) -> list[str]:
        return [f"{s.stage} · {s.model_id} stopped: {s.stopped}" + (f" [{s.unsent} request(s) left unsent]"
                                                                     if s.unsent else "")
                for s in self.stages if s.stopped]

    @property
    def parse_failed(self) -> int:
        return sum(s.parse_failed for s in self.stages)
