"""`dialectbias train-dialect-id` and `dialectbias dialect-id`: train a character n-gram dialect identifier and
label texts with it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dialectbias.cli import _app
from dialectbias.cli._app import clear_errors

if TYPE_CHECKING:
    from dialectbias.dialectid import LabelScore


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
        eval_corpus: Annotated[list[Path] | None, typer.Option(
            "--eval-corpus", help="a corpus YAML to score the trained model on as well, every unit (e.g. "
                                  "Vashantor's Test split; repeatable)")] = None,
        eval_transcripts: Annotated[list[Path] | None, typer.Option(
            "--eval-transcripts", help="a transcript file to score the trained model on as well (repeatable)")] = None,
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
                        test_size=test_size, min_chars=min_chars, max_per_label=max_per_label,
                        eval_corpora=eval_corpus or [], eval_transcripts=eval_transcripts or [])
    for source in summary.sources:
        kept = sum(source.kept.values())
        skipped = ", ".join(f"{n:,} {SKIP_KINDS[k]}" for k, n in source.skipped.items() if n)
        what = "pairs" if source.kind == "corpus" else "transcripts"
        aside = f"; set aside: {escape(skipped)}" if skipped else ""
        _app.console.print(f"{escape(source.source)}: {source.read:,} {what} → {kept:,} units{aside}",
                           highlight=False, soft_wrap=True)
    _app.console.print(_table(f"held-out scores (seed {seed}, {test_size:.0%} of each label, grouped)",
                              summary.scores, summary.macro_f1, summary.train_units))
    for source_path, cells in summary.held_out_by_source.items():
        correct, total = sum(c for c, _ in cells.values()), sum(n for _, n in cells.values())
        recalls = ", ".join(f"{label} {c / n:.2f}" for label, (c, n) in cells.items() if n)
        _app.console.print(f"held out from {escape(Path(source_path).name)}: accuracy {correct / total:.3f} "
                           f"(recall {recalls})", highlight=False, soft_wrap=True)
    ext = summary.external
    if ext is not None:
        names = ", ".join(Path(s.source).name for s in ext.sources)
        _app.console.print(_table(f"evaluation sources ({escape(names)}): every unit", ext.scores, ext.macro_f1,
                                  summary.train_units))
        if ext.overlap or ext.not_covered:
            missing = ", ".join(f"{n:,} {label}" for label, n in ext.not_covered.items())
            _app.console.print(f"left out of the evaluation: {ext.overlap:,} units also in training"
                               + (f"; labels the model lacks: {missing}" if missing else ""), highlight=False)
    if summary.capped:
        _app.console.print("--max-per-label left out: " + ", ".join(f"{n:,} {label}" for label, n in
                                                                    summary.capped.items()), highlight=False)
    if summary.not_held_out:
        _app.err_console.print(f"[yellow]note:[/] no held-out units for {', '.join(summary.not_held_out)} (too few "
                               "transcripts or sentences): trained, not evaluated", highlight=False)
    _app.console.print(f"accuracy {summary.accuracy:.3f} · macro-F1 {summary.macro_f1:.3f} · {summary.features:,} "
                       f"n-grams · {summary.seconds:.1f} s → {escape(str(out))}", highlight=False, soft_wrap=True)


def _table(title: str, scores: Sequence[LabelScore], macro: float, train_units: dict[str, int]) -> Table:
    """Per-label precision, recall, F1, units scored and units trained on, then the macro-F1 row."""
    table = Table(title=title)
    for name in ("label", "precision", "recall", "F1", "scored", "trained on"):
        table.add_column(name, justify="left" if name == "label" else "right")
    for s in scores:
        if s.support or s.predicted:  # a label with no unit scored: only its false positives say something
            table.add_row(s.label, f"{s.precision:.3f}", f"{s.recall:.3f}" if s.support else "—",
                          f"{s.f1:.3f}" if s.support else "—", f"{s.support:,}", f"{train_units.get(s.label, 0):,}")
    table.add_row("macro", "", "", f"{macro:.3f}", f"{sum(s.support for s in scores):,}",
                  f"{sum(train_units.values()):,}", style="bold")
    return table


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
    from dialectbias.errors import ConfigError

    ident = DialectIdentifier.load(model)
    wordless = [f"text {i} ({text!r})" for i, text in enumerate(texts, 1) if not ident.has_words(text)]
    if wordless:
        raise ConfigError(f"{', '.join(wordless)}: no words to label (an empty or punctuation-only text says "
                          "nothing about its dialect)")
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
