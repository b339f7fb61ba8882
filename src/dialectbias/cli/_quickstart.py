"""`dialectbias quickstart`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dialectbias.cli._app import clear_errors, console
from dialectbias.cli._commands import print_summary
from dialectbias.quickstart import SAMPLES


def _what_is_left(path: Path, samples: int) -> str:
    """The banner's line on what this run will do: the expected duration of the prompts left to send, or
    that an earlier quickstart in the same folder answered them all (the results are only printed again)."""
    from dialectbias.api import open_experiment
    from dialectbias.providers._hf_config import choose_threads
    from dialectbias.quickstart import duration_text
    from dialectbias.run._plan import make_plan
    from dialectbias.run._progress import progress_interval

    exp, task = open_experiment(path)
    rows = make_plan(exp, task, tokenizers=False, ask=None)  # counts only: the server is not asked
    total, to_send = sum(r.requests for r in rows), sum(r.requests - r.cached for r in rows)
    if not to_send:
        return (f"Already done: all {total} prompts were answered by an earlier quickstart in {exp.store_path}; "
                "its results are printed again (no model is loaded, nothing is sent).")
    threads = choose_threads()
    resumed = (f"Resuming: {total - to_send} of {total} prompts were answered by an earlier quickstart; "
               f"the other {to_send} take " if to_send < total else "Expected duration: ")
    return (f"{resumed}{duration_text(samples, to_send)} on 2 cores — the short end with the cores free, the long "
            f"end while other programs use the CPU. torch threads: {threads.threads} ({threads.reason}). "
            f"Progress is shown as it goes (a line every {progress_interval():g} s when the output is not a "
            "terminal); loading the model takes 20–60 s before the first answer.")


@clear_errors
def quickstart(out: Annotated[Path, typer.Option("--out", help="where to write the experiment, store and "
                                                  "report")] = Path("dialectbias-quickstart"),
               samples: Annotated[int, typer.Option(help="prompts per dialect × trait")] = SAMPLES) -> None:
    """Run the naming-setting association probe on SmolLM2-135M (offline, CPU), then print and report it.

    With the default --samples 6 (144 prompts) it takes about 2–13 min on 2 cores: the short end with the
    cores free, the long end while other programs use the CPU; it prints the expected range for the chosen
    --samples before it starts, and its progress as it goes.

    Example: dialectbias quickstart --out ./dialectbias-quickstart
    """
    from dialectbias.api import build_report, run_experiment
    from dialectbias.quickstart import BATCH_SIZE, LANGUAGES, n_prompts, write_quickstart

    path = write_quickstart(out, samples)
    n = n_prompts(samples)
    console.print(
        "[bold]dialectbias quickstart[/]: the association probe in the naming setting — each prompt describes "
        "two writers only by labels ('Writes in standard German.' / 'Writes in the Bavarian German "
        "dialect.') and asks the model to assign 10 trait adjectives to them. Answers are grammar-constrained "
        "(llguidance) to a JSON object adjective → A/B, then parsed strictly.\n"
        "Subject: SmolLM2-135M-Instruct, a 135M-parameter English-centric model run locally on the CPU. "
        "It is a demonstration subject, not a finding: its numbers say little about real models.\n"
        f"Sample: {samples} prompts per dialect × trait × {sum(len(v) for v in LANGUAGES.values())} dialects "
        f"× 6 traits = {n} prompts, generated in batches of {BATCH_SIZE}; raise --samples for tighter "
        "intervals.\n"
        f"{_what_is_left(path, samples)}\n"
        f"Experiment file: {path}", highlight=False)
    summary = run_experiment(path, console=console)
    print_summary(summary)
    index = build_report(path, out / "report")
    import pandas as pd

    by_trait = pd.read_csv(out / "report" / "association_bias_by_trait.csv")
    table = Table(title="association bias per trait (naming setting, SmolLM2-135M)")
    for col in ("trait", "n", "bias", "95% CI", "t-test p", "rejected"):
        table.add_column(col, justify="left" if col == "trait" else "right")
    for r in by_trait.itertuples():
        table.add_row(str(r.trait), f"{r.n_accepted}/{r.n_prompts}", f"{r.bias:+.3f}",
                      f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]", f"{r.p:.3g}", f"{r.rejection_rate:.0%}")
    console.print(table)
    console.print(
        "bias > 0: the dialect writer gets the stereotyped pole (uneducated, careless, rural, temperamental, "
        "close-minded, friendly); rejected = answers that failed strict parsing (excluded, counted).\n"
        f"Report: {index}\n"
        f"Next: edit {path} — replace the model with a real one (provider: openai, base_url: "
        "http://127.0.0.1:8000/v1 for vLLM/Ollama/llama.cpp, model: <name>, api_key_env: <VAR>), raise "
        f"`samples`, then: dialectbias run {path} && dialectbias report {path} --out {out / 'report'}")
