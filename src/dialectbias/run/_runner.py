"""`dialectbias run`: compile each stage's requests into the store, execute what is pending, summarise."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Collection
from typing import Any

from rich.console import Console

from dialectbias import __version__
from dialectbias.config import Experiment
from dialectbias.providers import ModelConfig
from dialectbias.run._executors import Executor, get_executor
from dialectbias.run._progress import ProgressView
from dialectbias.run._specs import REQUEST_RULES, RequestSpec, content_hash, engine_seed_note, retry_row
from dialectbias.run._stage import Skipped, Stage, StagedTask, yield_problems
from dialectbias.run._summary import RunSummary, StageStats
from dialectbias.store import (
    REQUEST_SETS_SCHEMA,
    RunLock,
    Store,
    claim_store,
    earlier_stores,
    ok_results_mark,
    retry_attempts,
    retry_counts,
    retry_targets,
)


def _fingerprint(exp: Experiment, inputs: list[Any] | None, stage: Stage, model: ModelConfig,
                 upstream: tuple[Any, ...], attempts: dict[str, int] | None = None) -> str | None:
    """Everything a stage's request set for one model depends on; None = unknown (always rebuild).
    `attempts`: the retried requests' attempts (`run --retry`), folded in only when there are some."""
    if inputs is None:
        return None
    return content_hash({"version": __version__, "schema": REQUEST_SETS_SCHEMA, "rules": REQUEST_RULES,
                         "stage": stage.name, "model": model.model_dump(mode="json"),
                         "experiment": exp.model_dump(mode="json"), "inputs": inputs, "upstream": upstream,
                         "departures": exp.departure_rows(),
                         **({"retries": sorted(attempts.items())} if attempts else {})})


def _compile(exp: Experiment, task: StagedTask, stage: Stage, earlier: list[str], store: Store,
             model_stats: dict[str, StageStats], retry: Collection[str] = ()) -> None:
    """Build the stage's requests into the store, or reuse the set built by an identical earlier run.

    A request retried by an earlier `run --retry` is built at its stored attempt (`retry_row`); `retry`
    ("unscored", "failed") builds the next attempt of the current requests of those kinds."""
    # later stages are built from earlier stages' results
    upstream = ok_results_mark(store, earlier) if earlier else ()
    inputs = task.input_identity()
    for model in stage.models:
        stats = model_stats[model.id]
        attempts = retry_attempts(store, stage.name, model.id)
        if retry:
            attempts.update(retry_targets(store, stage.name, model.id, retry))
        fingerprint = _fingerprint(exp, inputs, stage, model, upstream, attempts)
        reused = store.use_compiled(fingerprint) if fingerprint else None
        if reused is not None:
            stats.total, stats.skipped = reused["n_requests"], reused["n_skipped"]
            stats.errors = json.loads(reused["notes"])
        else:
            def rows(model: Any = model, stats: StageStats = stats, attempts: dict[str, int] = attempts) -> Any:
                folded: dict[str, str] = {}  # kind -> its note, with the first case as the example
                said = False  # the seed note, once
                for spec in stage.build(store, model):
                    if isinstance(spec, Skipped):
                        stats.skipped += 1
                        if spec.kind is None:
                            stats.note(f"skipped: {spec.reason}")
                        else:
                            stats.note(folded.setdefault(spec.kind, f"skipped: {spec.kind} (e.g. {spec.reason})"))
                        continue
                    assert isinstance(spec, RequestSpec)
                    if spec.draw is not None and not model.takes_seed() and not said:
                        said = True
                        stats.note(engine_seed_note(model))
                    row = spec.to_row()
                    attempt = attempts.get(row["request_id"])
                    yield retry_row(row, attempt) if attempt else row

            stats.total = store.add_requests(rows(), fingerprint=fingerprint, current=(stage.name, model.id))
            if fingerprint:
                store.save_compiled(fingerprint, stage.name, model.id, stats.total, stats.skipped, stats.errors)
    pending = store.pending_counts(stage.name)
    for model in stage.models:
        model_stats[model.id].already_done = model_stats[model.id].total - pending.get(model.id, 0)


async def _run_stages(exp: Experiment, task: StagedTask, stages: list[Stage], store: Store, view: ProgressView,
                      summary: RunSummary, executor: Executor, retry: Collection[str] = ()) -> None:
    try:
        for stage in stages:
            stats = {m.id: StageStats(stage=stage.name, model_id=m.id) for m in stage.models}
            _compile(exp, task, stage, [s.name for s in stages[:stages.index(stage)]], store, stats, retry)
            summary.stages.extend(stats.values())
            await executor.prepare(stage, store)
            view.add(stage.name, stats)
            await executor.run_stage(stage, store, stats, view.hook)
            stopped = any(stats[m.id].stopped for m in stage.models)
            pending = store.pending_counts(stage.name) if stopped else {}  # one sweep, not one per model
            for m in stage.models:
                stats[m.id].cost = m.cost(stats[m.id].tokens_in, stats[m.id].tokens_out)
                if stats[m.id].stopped:
                    stats[m.id].unsent = pending.get(m.id, 0) - stats[m.id].failed
    finally:
        await executor.aclose()


def _save_items(exp: Experiment, task: StagedTask, store: Store) -> list[str]:
    """Load and store the items, unless the same inputs were stored by the previous run; return the
    warnings loading them gave (kept in the store, so a run that reuses the items repeats them)."""
    inputs = task.input_identity()
    key = None if inputs is None else content_hash(
        {"version": __version__, "experiment": exp.model_dump(mode="json"), "inputs": inputs})
    if key is None or store.get_meta("items_fingerprint") != key:
        store.save_items(task.load_items())
        store.set_meta("input_warnings", json.dumps(task.input_warnings(), ensure_ascii=False))
        if key is not None:
            store.set_meta("items_fingerprint", key)
    return list(json.loads(store.get_meta("input_warnings") or "[]"))


def _prompt_only(exp: Experiment) -> list[str]:
    """One warning per judge on `structured_output: none` (issue 24 item 1: prompt-only output is a choice the
    user must know the cost of): nothing constrains its answers to the rubric's format."""
    return [f"judge {j.id!r}: `structured_output: none`: the rubric's JSON format is asked in the prompt only "
            f"and nothing constrains the answer, so more judgments may be unusable (parse failed); "
            f"`json_schema`, or `json_object` with `server:` set, constrains it (docs/servers.md)"
            for j in exp.judges if j.structured_output == "none"]


def _check_yields(task: StagedTask, store: Store, summary: RunSummary) -> None:
    """A stage with no usable result for any model empties the run; one model without any is a warning."""
    empty, warnings = yield_problems(task.stage_yields(store))
    summary.empty += empty
    summary.warnings += warnings


def run_task(exp: Experiment, task: StagedTask, *, progress: bool = True,
             console: Console | None = None, take_over: bool = False, retry: Collection[str] = ()) -> RunSummary:
    """Run (or resume) an experiment's task (`dialectbias.api.run_experiment` loads both from the file): only
    requests without a stored result are sent, by the experiment's executor. `retry` ("unscored", "failed":
    `run --retry`, `store/_retries.py`) also asks again unscored judgments and judgments whose re-ask failed."""
    started = time.perf_counter()
    executor_cls = get_executor(exp)
    earlier = [f"{exp.store_path.name} is a new store: {exp.path.name}'s results under `name: {name}` are in "
               f"{other}; `store: {os.path.relpath(other, exp.base_dir)}` uses them"
               for other, name in earlier_stores(exp.store_path, exp.path)]
    with RunLock(exp.store_path, "run"), Store.open(exp.store_path) as store:
        claim_store(store, exp.name, exp.path, take_over=take_over)  # one store, one experiment
        store.save_experiment(exp.name, exp.task, exp.model_dump(mode="json"))
        store.set_meta("departures", json.dumps(exp.departure_rows(), ensure_ascii=False))  # docs/departures.md
        input_warnings = _save_items(exp, task, store)
        stages = task.stages()
        store.retire_current((stage.name, m.id) for stage in stages for m in stage.models)
        summary = RunSummary(experiment=exp.name, store=str(exp.store_path),
                             warnings=[*earlier, *input_warnings, *_prompt_only(exp)])
        with ProgressView(console, progress) as view:
            asyncio.run(_run_stages(exp, task, stages, store, view, summary, executor_cls(exp), retry))
        summary.outcome = task.summary_lines(store)
        counts = retry_counts(store)
        summary.retry_unscored, summary.retry_failed = counts.unscored, counts.failed
        _check_yields(task, store, summary)
    summary.seconds = time.perf_counter() - started
    return summary
