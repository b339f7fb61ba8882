"""`dialectbias build noise` and `dialectbias build vocabulary`: the noisy-text control's inputs (SPEC §4 P1);
`build pairs`; `build qa-instruction-items` and `build qa-instructions`: machine-made dialect instructions."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dialectbias.cli import _app
from dialectbias.cli._app import clear_errors
from dialectbias.errors import DataError


@clear_errors
def noise(
        items: Annotated[Path, typer.Argument(help="items file (.jsonl, .csv, .parquet) with a standard variant",
                                              show_default=False)],
        vocabulary: Annotated[Path, typer.Option(
            "--vocabulary", help="frequent words of the language, one per line, most frequent first "
            "(`build vocabulary` writes one)")],
        out: Annotated[Path, typer.Option("--out", help="items JSONL to write")],
        p: Annotated[float, typer.Option("--p", min=0.0, max=1.0, help="probability that a word is distorted")] = 0.5,
        seed: Annotated[int, typer.Option(help="seed; each item's noise is seeded by (seed, item id)")] = 0,
        top: Annotated[int, typer.Option("--top", min=1, help="draw new words from the TOP most frequent")] = 2000,
        mode: Annotated[str, typer.Option(
            help="mixed: half character edits, half word edits (German paper §6.2); replace: every distorted "
            "word replaced by a frequent word")] = "mixed",
        language: Annotated[str | None, typer.Option(
            help="language code written into items that name none (default: the language of their dialects)")
        ] = None,
        tokenizer: Annotated[list[Path] | None, typer.Option(
            "--tokenizer", help="Hugging Face tokenizer folder for the token-length parity (repeatable; loaded "
            "offline, needs the hf extra)")] = None) -> None:
    """Add a `noisy` variant to every item: its standard text with each word distorted with probability p.

    The association usage setting reads the output as it is: one run then prompts standard vs each dialect
    and standard vs noisy, and its report compares the dialect bias with the noise bias (German paper §6.2,
    Figure 4). Prints the token-length parity (mean tokens per variant, ratio to standard and to the dialect
    texts) per tokenizer — a whitespace and a word count always, plus each --tokenizer — and writes it to
    OUT's folder as <OUT stem>.token_lengths.csv.

    Example: dialectbias build noise items.jsonl --vocabulary words.txt --p 0.5 --seed 0 --out items_noisy.jsonl
    """
    from dialectbias.build import noise_items, parity_rows
    from dialectbias.text import load_vocabulary

    if mode not in ("mixed", "replace"):
        raise DataError(f"--mode must be 'mixed' or 'replace', got {mode!r}")
    try:
        vocab = load_vocabulary(vocabulary, top)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    result = noise_items(items, out, vocab, p=p, seed=seed, mode=mode,  # type: ignore[arg-type]
                         language=language, vocabulary_name=vocabulary.name)
    rows = list(parity_rows(result.texts, tokenizer or []))
    parity_csv = out.with_name(f"{out.stem}.token_lengths.csv")
    with parity_csv.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = Table(title=f"token-length parity ({result.items} items → {out})")
    for col in ("tokenizer", "variant", "texts", "mean tokens", "÷ standard", "÷ dialect"):
        table.add_column(col, justify="left" if col in ("tokenizer", "variant") else "right")

    def fmt(x: object) -> str:
        return "—" if not isinstance(x, float | int) or math.isnan(x) else f"{x:.2f}"

    for r in rows:
        table.add_row(str(r["tokenizer"]), str(r["variant"]), str(r["n_texts"]), fmt(r["mean_tokens"]),
                      fmt(r["ratio_to_standard"]), fmt(r["ratio_to_dialect"]))
    _app.console.print(table)
    _app.console.print(f"{out}: {result.items} items with a 'noisy' variant (p={p}, seed={seed}, mode={mode}, "
                       f"top {len(vocab.words)} words of {vocabulary.name}); parity table → {parity_csv}",
                       highlight=False)


@clear_errors
def vocabulary(
        corpus: Annotated[list[Path], typer.Argument(help="corpus files: .txt (lines), .csv or .jsonl",
                                                     show_default=False)],
        out: Annotated[Path, typer.Option("--out", help="vocabulary file to write (word<TAB>count per line)")],
        top: Annotated[int, typer.Option("--top", min=1, help="keep the TOP most frequent words")] = 5000,
        column: Annotated[list[str] | None, typer.Option(
            "--column", help="CSV/JSONL text column (repeatable; default: standard_text, standard, "
            "variants.standard or text, the first found)")] = None,
        min_count: Annotated[int, typer.Option("--min-count", min=1, help="drop words seen fewer times")] = 1,
        lowercase: Annotated[bool, typer.Option(help="lowercase before counting (Latin scripts)")] = False) -> None:
    """Write the most frequent words of a corpus, for `build noise --vocabulary`.

    Words are counted with a Bengali-aware tokenizer (vowel signs stay inside their word; digits-only
    tokens are skipped), ties broken alphabetically.

    Example: dialectbias build vocabulary "Vashantor/Train/"*.csv --column standard_text --top 5000 --out bn_words.txt
    """
    from dialectbias.build import build_vocabulary, write_vocabulary

    words, n_tokens = build_vocabulary(corpus, column or [], top=top, min_count=min_count, lowercase=lowercase)
    note = (f"built by `dialectbias build vocabulary` from {len(corpus)} file(s), {n_tokens:,} word tokens; "
            f"top {len(words)} words")
    write_vocabulary(out, words, note)
    shown = ", ".join(w for w, _ in words[:10])
    _app.console.print(f"{out}: {len(words)} words from {n_tokens:,} word tokens in {len(corpus)} file(s); "
                       f"most frequent: {shown}", highlight=False)


@clear_errors
def pairs(
        corpus: Annotated[Path, typer.Argument(help="corpus file (YAML: pair files and their columns)",
                                               show_default=False)],
        out: Annotated[Path, typer.Option("--out", help="items JSONL to write")],
        split: Annotated[list[str] | None, typer.Option(
            "--split", help="keep pairs of this split only (repeatable; e.g. test)")] = None,
        dialect: Annotated[list[str] | None, typer.Option(
            "--dialect", help="keep this dialect only (repeatable)")] = None,
        aligned: Annotated[bool, typer.Option(
            help="keep only items that have every selected dialect (a parallel set across dialects)")] = False,
        max_items: Annotated[int | None, typer.Option("--max-items", min=1, help="a seeded sample of N items")] = None,
        seed: Annotated[int, typer.Option(help="seed of --max-items' sample")] = 0) -> None:
    """Items from a parallel corpus: each standard sentence with its dialect versions, for the probes' usage
    setting (`association`, `decision`) and any task that reads `{"id", "variants": {"standard": …, "<dialect>": …}}`.

    Pairs are grouped by their normalised standard side (the texts written are the originals); pairs whose dialect
    text equals the standard text carry no dialect signal and are left out, as is a second, different dialect text
    for a sentence that already has one; every count is printed. Ids are stable (a hash of the sentence).

    Example: dialectbias build pairs vashantor.yaml --split test --aligned --max-items 200 --out bn_usage.jsonl
    """
    from dialectbias.build import pair_items
    from dialectbias.data import load_corpus

    loaded = load_corpus(corpus)
    known = set(loaded.dialects())
    wanted = [d.lower() for d in dialect] if dialect else None
    unknown = sorted(set(wanted or []) - known)
    if unknown:
        raise DataError(f"{corpus}: --dialect {', '.join(unknown)}: not in the corpus "
                        f"(it has: {', '.join(sorted(known))})")
    loaded.require_splits(split or [])
    result = pair_items(loaded, out, splits=split, dialects=wanted, aligned=aligned, max_items=max_items, seed=seed)
    if result.items == 0:
        raise DataError(f"{corpus}: no item left to write to {out} ({_left_out(result)})")
    per = ", ".join(f"{d} {n}" for d, n in sorted(result.per_dialect.items()))
    _app.console.print(f"{out}: {result.items} items ({per}); left out: {_left_out(result)}", highlight=False)


def _left_out(result: object) -> str:
    reasons = {"identical": "pairs with dialect = standard", "conflicts": "second dialect texts of a sentence",
               "other_split": "pairs of other splits", "other_dialect": "pairs of other dialects",
               "not_aligned": "items lacking a dialect (--aligned)", "sampled_out": "items beyond --max-items"}
    return ", ".join(f"{getattr(result, k)} {text}" for k, text in reasons.items())


@clear_errors
def qa_instruction_items(
        out: Annotated[Path, typer.Option("--out", help="items JSONL to write (the `data:` of a translate run)")],
) -> None:
    """Step 1 of making dialect-written qa_bias instructions (`instructions: per_variant`; Bengali paper §3.2):
    write the three standard-Bengali parts of qa_bias's answer instruction as items for a `translate` run.

    Then: translate them (targets: your dialects), `dialectbias export EXP --items DONE.jsonl`, and
    `dialectbias build qa-instructions DONE.jsonl --out instructions/`.

    Example: dialectbias build qa-instruction-items --out instruction_items.jsonl
    """
    from dialectbias.build import instruction_items

    n = instruction_items(out)
    _app.console.print(f"{out}: {n} items (the instruction, the question label, the only-the-answer line); "
                       "translate them with a translate experiment", highlight=False)


@clear_errors
def qa_instructions(
        items: Annotated[Path, typer.Argument(help="the translate run's exported items (export --items)",
                                              show_default=False)],
        out: Annotated[Path, typer.Option("--out", help="folder to write <variant>.j2 into "
                                                         "(qa_bias options.instructions_dir)")],
        overwrite: Annotated[bool, typer.Option(help="replace existing <variant>.j2 files")] = False,
) -> None:
    """Step 2: one instruction template per dialect, `<variant>.j2`, from the translated instruction items,
    marked `source: machine (translate, model M)` in its front matter (the report shows it).

    Example: dialectbias build qa-instructions instruction_items.done.jsonl --out instructions
    """
    from dialectbias.build import write_instructions

    result = write_instructions(items, out, overwrite=overwrite)
    for path in result.written:
        _app.console.print(f"{path}: {result.sources[path.stem]}", highlight=False)
    _app.console.print("check them with a speaker of each dialect; use them with options: "
                       f"{{instructions: per_variant, instructions_dir: {out}}}", highlight=False)
