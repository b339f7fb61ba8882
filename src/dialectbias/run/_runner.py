"""`dialectbias run`: compile each stage's requests into the store, execute what is pending, summarise."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from dialectbias.config import Experiment, load_experiment
from dialectbias.providers import ModelAPI, create_model
from dialectbias.run._executor import execute_stage
from dialectbias.run._specs import RequestSpec
from dialectbias.run._stage import Skipped, Stage
from dialectbias.run._summary import RunSummary, StageStats
from dialectbias.store import Store
from dialectbias.tasks import get_task


def _compile(stage: Stage, store: Store, model_stats: dict[str, StageStats]) -> None:
    for model in stage.models:
        stats = model_stats[model.id]

        def rows(model: Any = model, stats: StageStats = stats) -> Any:
            for spec in stage.build(store, model):
                if isinstance(spec, Skipped):
                    stats.skipped += 1
                    stats.note(f"skipped: {spec.reason}")
                    continue
                assert isinstance(spec, RequestSpec)
                yield spec.to_row()

        stats.total = store.add_requests(rows())
        stats.already_done = stats.total - store.count_pending(stage.name, model.id)


class _ProgressView:
    """One rich progress bar per (stage, model): rate, ETA, cache hits, errors."""

    def __init__(self, console: Console | None, enabled: bool) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
            TextColumn("cached {task.fields[cached]} · errors {task.fields[errors]}"),
            console=console, disable=not enabled, refresh_per_second=4)
        self.tasks: dict[str, TaskID] = {}
        self.started: dict[str, float] = {}
        self.done: dict[str, int] = {}
        self.stats: dict[str, StageStats] = {}

    def add(self, stage: str, stats: dict[str, StageStats]) -> None:
        """Show the bars of a new stage; the hook then reports to them (stages run one at a time)."""
        for model_id, s in stats.items():
            self.tasks[model_id] = self.progress.add_task(
                f"{stage} · {model_id}", total=s.total, completed=s.already_done, cached=0, errors=0,
                rate="")
            self.started[model_id] = time.monotonic()
            self.done[model_id] = 0
        self.stats = stats

    def hook(self, model_id: str, advance: int, errors: int) -> None:
        self.done[model_id] += advance
        s = self.stats[model_id]
        elapsed = max(time.monotonic() - self.started[model_id], 1e-6)
        self.progress.update(self.tasks[model_id], advance=advance, cached=s.cached, errors=s.failed,
                             rate=f"{self.done[model_id] / elapsed:,.1f}/s")


async def _run_stages(exp: Experiment, stages: list[Stage], store: Store, view: _ProgressView,
                      summary: RunSummary) -> None:
    clients: dict[str, ModelAPI] = {}
    try:
        for stage in stages:
            stats = {m.id: StageStats(stage=stage.name, model_id=m.id) for m in stage.models}
            _compile(stage, store, stats)
            summary.stages.extend(stats.values())
            for m in stage.models:
                if m.id not in clients and store.count_pending(stage.name, m.id):
                    clients[m.id] = create_model(m)
            view.add(stage.name, stats)
            await execute_stage(stage, store, clients, stats, view.hook, seed=exp.seed)
    finally:
        for client in clients.values():
            await client.aclose()


def run_experiment(experiment_path: str | Path, *, progress: bool = True,
                   console: Console | None = None) -> RunSummary:
    """Run (or resume) an experiment: only requests without a stored result are sent."""
    started = time.perf_counter()
    exp = load_experiment(experiment_path)
    task = get_task(exp.task)(exp)
    with Store.open(exp.store_path) as store:
        store.save_experiment(exp.name, exp.task, exp.model_dump(mode="json"))
        store.save_items(task.load_items())
        summary = RunSummary(experiment=exp.name, store=str(exp.store_path))
        view = _ProgressView(console, progress)
        with view.progress:
            asyncio.run(_run_stages(exp, task.stages(), store, view, summary))
    summary.seconds = time.perf_counter() - started
    return summary
