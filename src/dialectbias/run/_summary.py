"""Counts of what a run did, per stage and model, for the summary table and exit code."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

from dialectbias.errors import CONTEXT_FAULT

#: `run --retry` values: what each asks again (`store/_retries.py`)
RETRY_KINDS = {"unscored": ("unscored",), "failed": ("failed",), "all": ("unscored", "failed")}


def retry_hints(unscored: int, failed: int, experiment: Path, width: int = 80) -> list[str]:
    """One line per kind of thing `run --retry` can ask again, naming the exact command (the experiment file
    relative to the working directory when it is under it); a line wider than `width` puts the command on a
    line of its own (never folded inside: it is copied as is)."""
    relative = os.path.relpath(experiment)
    shown = relative if not relative.startswith("..") else str(experiment)
    lines: list[str] = []
    for n, what, kind in ((unscored, "unscored judgment", "unscored"), (failed, "failed request", "failed")):
        if n:
            head, command = f"{n} {what}{'s' if n != 1 else ''}:", f"dialectbias run {shown} --retry {kind}"
            fits = len(head) + 1 + len(command) <= width
            lines += [f"{head} {command}"] if fits else [f"{head} to ask again,", f"  {command}"]
    return lines


def context_note(model_id: str) -> str:
    """The one summary note (counted) for the requests of a model that do not fit its context; each request's
    own error (its token counts) is stored with its result."""
    return (f"model {model_id!r}: {CONTEXT_FAULT}: prompt + max_tokens over the model's context window, not "
            "sent (lower `max_tokens`, shorten the prompt or serve a longer context, then "
            "`run --retry failed`)")


def invalid_values_note(model_id: str) -> str:
    """The one summary note (counted) for a judge's answers whose values failed validation after the re-ask:
    what to change (issue 24: a grammar-based JSON mode, such as llama.cpp's, enforces keys and types but
    not ranges, so a small judge writes 1023984765 for a 1–5 field)."""
    return (f"judge {model_id!r}: answers with invalid values (e.g. out of range) after the re-ask, stored "
            "unscored; `out_of_range: clip` in the rubric clips numbers to their bounds and sends the "
            "judgment to review (docs/judges.md), then `run --retry unscored`")


def cut_note(model_id: str) -> str:
    """The one summary note (counted) for structured answers that did not parse and had been cut at
    `max_tokens` (finish reason "length"): the JSON never closed, so the fix is a longer limit."""
    return (f"model {model_id!r}: answers cut at max_tokens before their JSON closed, unusable; raise its "
            "max_tokens (qa_bias: `judge_max_tokens` in options, or the judge's `params: {max_tokens: N}`), "
            "then `run --retry unscored`")


class StageStats(BaseModel):
    stage: str
    model_id: str
    total: int = 0
    already_done: int = 0
    calls: int = 0
    cached: int = 0
    retries: int = 0
    failed: int = 0
    #: structured answers unusable after repair and re-ask: not JSON, or keys missing (`parse_failed`), or a
    #: JSON object whose values failed validation, e.g. out of range (`invalid_values`; issue 24 item 6)
    parse_failed: int = 0
    invalid_values: int = 0
    #: of `failed`, requests whose prompt plus `max_tokens` does not fit the model's context window (not sent,
    #: or refused by the server as too long; `providers._fit`)
    too_long: int = 0
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
    #: after the run: current unscored judgments and failed requests (`store.retry_counts`: `run --retry`)
    retry_unscored: int = 0
    retry_failed: int = 0

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

    @property
    def too_long(self) -> int:
        """Of `failed`: requests that do not fit their model's context (never retried within the run)."""
        return sum(s.too_long for s in self.stages)
