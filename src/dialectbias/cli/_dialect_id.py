"""`dialectbias train-dialect-id` and `dialectbias dialect-id`: train a character n-gram dialect identifier and
label texts with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dialectbias.cli import _app
from dialectbias.cli._app import clear_errors


@clear_errors
def train_dialect_id(
        corpora: Annotated[list[Path] | None, typer.Argument(
            help="corpus YAML files (as for `dialectbias index build`): dialect sides → their dialect, standard "
                 "sides → standard", show_default=False)] = None,
        transcripts: Annotated[list[Path] | None, typer.Option(
            "--transcripts", help="dialect transcripts (.csv or .xlsx with a district and a transcript column, "
                                  "e.g. RegSpeech12), split into sentences (repeatable)")] = None,
        out: Annotated[Path, typer.Option("--out", help="folder for the model and its evaluation",
                                          show_default=False)] = ...,  # type: ignore[assignment]
        seed: Annotated[int, typer.Option("--seed", help="seed of the held-out split")] = 0,
        test_size: Annotated[float, typer.Option("--test-size", min=0.01, max=0.9,
                                                 help="held-out share of each label")] = 0.2,
        min_chars: Annotated[int, typer.Option("--min-chars", min=0, help="units with fewer letters are set "
                                                                          "aside")] = 8,
        max_per_label: Annotated[int | None, typer.Option(
            "--max-per-label", min=1, help="keep at most this many units per label (seeded sample); default: all, "
                                           "labels balanced by class weights")] = None) -> None:
    """Train a dialect identifier (character n-grams, logistic regression) and evaluate it on held-out rows.

    A transcript's sentences stay together, and a standard sentence and its dialect versions stay together, on
    one side of the split. Writes model.json + model.npz, dialect_id.json, dialect_id_eval.csv and confusion.csv.

    Example: dialectbias train-dialect-id vashantor-train.yaml --transcripts regspeech12.csv --out dialect-id/
    """
    from dialectbias.dialectid import SKIP_KINDS
    from dialectbias.dialectid import train_dialect_id as train

    with _app.console.status("training…"):
        summary = train(corpora=corpora or [], transcripts=transcripts or [], out=out, seed=seed,
                        test_size=test_size, min_chars=min_chars, max_per_label=max_per_label)
    for source in summary.sources:
        kept = sum(source.kept.values())
        skipped = ", ".join(f"{n:,} {SKIP_KINDS[k]}" for k, n in source.skipped.items() if n)
        what = "pairs" if source.kind == "corpus" else "transcripts"
        aside = f"; set aside: {escape(skipped)}" if skipped else ""
        _app.console.print(f"{escape(source.source)}: {source.read:,} {what} → {kept:,} units{aside}",
                           highlight=False, soft_wrap=True)
    table = Table(title=f"held-out scores (seed {seed}, {test_size:.0%} of each label, grouped)")
    for name in ("label", "precision", "recall", "F1", "held out", "trained on"):
        table.add_column(name, justify="left" if name == "label" else "right")
    for s in summary.scores:
        table.add_row(s.label, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", f"{s.support:,}",
                      f"{summary.train_units.get(s.label, 0):,}")
    table.add_row("macro", "", "", f"{summary.macro_f1:.3f}", f"{sum(summary.test_units.values()):,}",
                  f"{sum(summary.train_units.values()):,}", style="bold")
    _app.console.print(table)
    if summary.capped:
        _app.console.print("--max-per-label left out: " + ", ".join(f"{n:,} {label}" for label, n in
                                                                    summary.capped.items()), highlight=False)
    if summary.not_held_out:
        _app.err_console.print(f"[yellow]note:[/] no held-out units for {', '.join(summary.not_held_out)} (too few "
                               "transcripts or sentences): trained, not evaluated", highlight=False)
    _app.console.print(f"accuracy {summary.accuracy:.3f} · macro-F1 {summary.macro_f1:.3f} · {summary.features:,} "
                       f"n-grams · {summary.seconds:.1f} s → {escape(str(out))}", highlight=False, soft_wrap=True)


@clear_errors
def dialect_id(
        model: Annotated[Path, typer.Argument(help="model folder written by `dialectbias train-dialect-id`",
                                              show_default=False)],
        texts: Annotated[list[str], typer.Argument(help="texts to label", show_default=False)],
        as_json: Annotated[bool, typer.Option("--json", help="print only a JSON list: text, label, probability, "
                                                             "and the probability of every label")] = False) -> None:
    """Label texts with the dialect (or standard) they read as, and its probability.

    Example: dialectbias dialect-id dialect-id/ "তুমি কিতা খাইছো?" "আমি বাজারে যাচ্ছি।"
    """
    from dialectbias.dialectid import DialectIdentifier

    ident = DialectIdentifier.load(model)
    proba = ident.probabilities(texts)
    best = ident.predict(texts)
    if as_json:
        typer.echo(json.dumps([{"text": t, "label": label, "probability": round(p, 6),
                                "probabilities": {name: round(float(q), 6) for name, q in zip(ident.labels, row,
                                                                                              strict=True)}}
                               for t, (label, p), row in zip(texts, best, proba, strict=True)],
                              ensure_ascii=False, indent=2))
        return
    for text, (label, p), row in zip(texts, best, proba, strict=True):
        runner_up = sorted(zip(row, ident.labels, strict=True), reverse=True)[1:3]
        others = ", ".join(f"{name} {q:.2f}" for q, name in runner_up)
        _app.console.print(f"{label} {p:.2f}\t{escape(text)}\t(next: {others})", highlight=False, soft_wrap=True)
