"""`dialectbias import-generations` and `dialectbias build questions`: getting data into an experiment."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dialectbias.cli import _app
from dialectbias.cli._app import ExperimentArg, clear_errors


@clear_errors
def import_generations(
        experiment: ExperimentArg,
        file: Annotated[Path, typer.Argument(help="JSONL: one {item_id, variant, model, output} per line; "
                                             "with --from, that harness's log", show_default=False)],
        take_over: _app.TakeOverOpt = False,
        source: Annotated[str, typer.Option("--from", help="dialectbias (our JSONL), inspect (an inspect_ai "
                                            ".eval/.json log) or lm-eval (--log_samples JSONL)")] = "dialectbias",
        model: Annotated[str | None, typer.Option("--model", help="with --from inspect/lm-eval: the model id to "
                                                  "store the answers under")] = None) -> None:
    """Store model outputs produced elsewhere as generations; `dialectbias run` then only judges them.

    One JSON object per line: item_id, variant, model (a model id of the experiment), output; optional
    finish_reason, tokens_in, tokens_out, latency_s, metadata; and the task's request keys that pick one of
    its requests (strategy, scenario, prefix …: `dialectbias tasks NAME` lists them). An experiment may list
    no models when every generation is imported. All or nothing; re-importing the same
    file is a no-op; an output that differs from a stored one is an error.

    With --from inspect or lm-eval, FILE is another harness's output on the prompts `dialectbias export
    --inspect-dataset / --lm-eval-task` wrote, and --model ID names the model (docs/other-harnesses.md).

    Example: dialectbias import-generations bn-qa.yaml outputs/qwen3-8b.jsonl
    Example: dialectbias import-generations bn-qa.yaml logs/run.eval --from inspect --model qwen3-8b
    """
    from dialectbias.api import open_experiment
    from dialectbias.interop import foreign_records
    from dialectbias.run import import_generations as run_import

    records = foreign_records(source, file, model)  # None: our own JSONL
    exp, task = open_experiment(experiment, take_over=take_over)
    summary = run_import(exp, task, file, take_over=take_over, records=records)
    unit = "line(s)" if records is None else "sample(s)"
    _app.console.print(f"{file}: {summary.lines} {unit}: {summary.imported} imported, {summary.unchanged} "
                       f"unchanged (already stored) → {exp.store_path}", highlight=False)


@clear_errors
def questions(
        out: Annotated[Path, typer.Option("--out", help="items JSONL to write")],
        topics: Annotated[Path | None, typer.Option(
            "--topics", help="topic file (.yaml or .csv); default: the packaged topics.yaml")] = None,
        per_type: Annotated[int | None, typer.Option(
            "--per-type", min=1, help="at most N questions per domain × question type (seeded sample)")
        ] = None,
        seed: Annotated[int, typer.Option(help="seed for --per-type sampling")] = 0) -> None:
    """Generate standard-Bengali question items (qa_bias JSONL) from templates over topic lists.

    Four question types (definitional, contrasting, factual, functional) per domain; each item keeps
    its domain and question_type; ids are stable. Without --topics the packaged topics.yaml is used.

    The items hold only the `standard` variant: qa_bias compares it with dialect versions of the same
    question, so add them to each item's `variants` before running (e.g. "chittagong": "…", written or
    checked by native speakers), or with a `translate` experiment and `dialectbias export EXP --items OUT`.
    `dialectbias tasks qa_bias` shows the item format.

    Example: dialectbias build questions --topics topics.yaml --out items.jsonl --per-type 10
    """
    from dialectbias.build import build_questions, load_topics

    domains = load_topics(topics)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[tuple[str, str]] = Counter()
    with out.open("w", encoding="utf-8") as fh:
        for q in build_questions(domains, per_type=per_type, seed=seed):
            fh.write(json.dumps(q.item(), ensure_ascii=False) + "\n")
            counts[(q.domain, q.question_type)] += 1
    table = Table(title=f"{sum(counts.values())} questions → {out}")
    types = ("definitional", "contrasting", "factual", "functional")
    for col in ("domain", *types):
        table.add_column(col, justify="left" if col == "domain" else "right")
    for domain in domains:
        table.add_row(domain, *(str(counts[(domain, t)]) for t in types))
    _app.console.print(table)
    _app.console.print(f"{out} holds standard-Bengali questions only: add dialect variants to each item's "
                       '"variants" (e.g. "chittagong": "…", written or checked by native speakers) before a '
                       "qa_bias run; `dialectbias tasks qa_bias` shows the item format.", highlight=False)
