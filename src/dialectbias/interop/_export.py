"""`dialectbias export --inspect-dataset / --lm-eval-task`: both writers behind one call, with what to print."""

from __future__ import annotations

from pathlib import Path

from dialectbias.config import Experiment
from dialectbias.interop._inspect_dataset import inspect_flags, write_inspect_dataset
from dialectbias.interop._lm_eval_task import write_lm_eval_task
from dialectbias.run import ImportTarget


def export_prompts(exp: Experiment, task: ImportTarget, inspect_dataset: Path | None,
                   lm_eval_task: Path | None) -> list[str]:
    """Write the requested files; the lines say what was written and how to run it."""
    lines: list[str] = []
    if inspect_dataset is not None:
        prompts = write_inspect_dataset(exp, task, inspect_dataset)
        flags = inspect_flags(prompts)
        lines += [f"{len(prompts):>8} prompts → {inspect_dataset} (inspect_ai dataset)",
                  f"         inspect eval TASK.py -T dataset={inspect_dataset} --model M",
                  f"           {flags}" if flags else "           (settings differ: one eval per setting)",
                  "         then: import-generations --from inspect LOG --model ID"]
    if lm_eval_task is not None:
        written = write_lm_eval_task(exp, task, lm_eval_task)
        lines += [f"{written.docs:>8} prompts → {lm_eval_task} (lm-eval tasks: {','.join(written.names)})",
                  f"         lm_eval --include_path {lm_eval_task}",
                  f"           --tasks {','.join(written.names)} --apply_chat_template --log_samples …",
                  "         then: import-generations --from lm-eval SAMPLES.jsonl --model ID"]
    return lines
