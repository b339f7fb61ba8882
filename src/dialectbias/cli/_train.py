"""`dialectbias train-translator`: the LoRA dialect generator (SPEC §4 P1; BanglaVerse §3.3, App. C)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dialectbias.cli import _app
from dialectbias.cli._app import clear_errors
from dialectbias.errors import ConfigError

if TYPE_CHECKING:
    from dialectbias.train import TranslatorTrainConfig

#: the recipe's keys (TranslatorTrainConfig's fields, in order; a test keeps them equal), for --help: written out
#: so that `dialectbias --help` does not import the training package and pydantic
RECIPE_KEYS = ("dialects", "splits", "eval_fraction", "max_length", "lora_r", "lora_alpha", "lora_dropout",
               "target_modules", "epochs", "max_steps", "micro_batch_size", "gradient_accumulation_steps",
               "eval_batch_size", "learning_rate", "lr_scheduler", "warmup_steps", "weight_decay", "group_by_length",
               "fp16", "gradient_checkpointing", "logging_steps", "save_steps", "save_total_limit", "seed",
               "num_threads", "loss_on", "replicate")


def load_recipe(path: Path | None, overrides: dict[str, object]) -> TranslatorTrainConfig:
    """TranslatorTrainConfig from a `--recipe` YAML (keys as in the model) and the options given on the command
    line (which win); ConfigError naming the file and each bad key."""
    from pydantic import ValidationError

    from dialectbias._yaml import load_yaml
    from dialectbias.errors import validation_problems
    from dialectbias.train import TranslatorTrainConfig

    data: dict[str, object] = {}
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--recipe {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"--recipe {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        raw, _ = load_yaml(text, f"--recipe {path}", ConfigError)
        if raw is not None and not isinstance(raw, dict):
            raise ConfigError(f"--recipe {path}: expected a mapping of recipe keys ({', '.join(RECIPE_KEYS)})")
        data = dict(raw or {})
    merged = {**data, **overrides}
    if merged.get("replicate") == "paper":  # the paper's value for every departure (docs/departures.md)
        from dialectbias.config import declared_departures, paper_options

        merged, conflicts = paper_options(TranslatorTrainConfig, merged)
        if conflicts:
            paper = declared_departures(TranslatorTrainConfig)
            where = f"--recipe {path}" if path is not None else "train-translator"
            raise ConfigError("\n".join([f"{where}: invalid recipe", *(
                f"  - {key}: {merged[key]!r} contradicts `replicate: paper` (the paper's value is "
                f"{paper[key].paper!r}, {paper[key].section}); remove the key, or set replicate: toolkit"
                for key in conflicts)]))
    try:
        return TranslatorTrainConfig.model_validate(merged)
    except ValidationError as exc:
        where = f"--recipe {path}" if path is not None else "train-translator"
        raise ConfigError("\n".join([f"{where}: invalid recipe",
                                      *validation_problems(exc, known=list(RECIPE_KEYS))])) from None


@clear_errors
def train_translator(
        corpus: Annotated[Path, typer.Argument(help="corpus file (YAML: pair files and their columns, as for "
                                               "`dialectbias index build`)", show_default=False)],
        base_model: Annotated[Path, typer.Option("--base-model", help="Hugging Face causal-LM folder to adapt "
                                                 "(config.json, weights, tokenizer)")],
        out: Annotated[Path, typer.Option("--out", help="folder for the adapter, tokenizer, checkpoints and "
                                          "training.json")],
        dialect: Annotated[list[str] | None, typer.Option(
            "--dialect", help="train on this dialect only (repeatable; default: every dialect)")] = None,
        split: Annotated[list[str] | None, typer.Option(
            "--split", help="use the pairs of this corpus split only (repeatable; e.g. train)")] = None,
        conversations: Annotated[Path | None, typer.Option(
            "--conversations", help="dialect-conversation turns, JSONL or CSV with `user` and `assistant` "
            "(both in dialect; optional `dialect`, `id`): BanglaVerse App. C.1 Task 2")] = None,
        recipe: Annotated[Path | None, typer.Option(
            "--recipe", help="YAML of TranslatorTrainConfig keys (any of: " + ", ".join(RECIPE_KEYS) + "); "
            "the options below override it")] = None,
        epochs: Annotated[float | None, typer.Option(min=0.01, help="training epochs [default: 3, App. C.4]")
                          ] = None,
        max_steps: Annotated[int | None, typer.Option("--max-steps", help="stop after N optimizer steps "
                                                      "[default: -1, the epochs]")] = None,
        learning_rate: Annotated[float | None, typer.Option("--learning-rate", min=0.0, help="peak learning rate, "
                                                            "decayed linearly to 0 [default: 2e-4]")] = None,
        batch_size: Annotated[int | None, typer.Option("--batch-size", min=1, help="micro-batch [default: 1, "
                                                       "App. C.3]")] = None,
        grad_accum: Annotated[int | None, typer.Option("--grad-accum", min=1, help="gradient accumulation steps "
                                                       "[default: 8, App. C.3]")] = None,
        eval_fraction: Annotated[float | None, typer.Option("--eval-fraction", min=0.0, max=0.95, help="held-out "
                                                            "share of standard sentences [default: 0.2, §3.3]")
                                 ] = None,
        max_length: Annotated[int | None, typer.Option("--max-length", min=8, help="tokens per example "
                                                       "[default: 512]")] = None,
        lora_r: Annotated[int | None, typer.Option("--lora-r", min=1, help="[default: 16, App. C.2]")] = None,
        lora_alpha: Annotated[int | None, typer.Option("--lora-alpha", min=1, help="[default: 32]")] = None,
        lora_dropout: Annotated[float | None, typer.Option("--lora-dropout", min=0.0, max=0.99,
                                                           help="[default: 0.1]")] = None,
        logging_steps: Annotated[int | None, typer.Option("--logging-steps", min=1, help="[default: 50, "
                                                          "App. C.4]")] = None,
        save_steps: Annotated[int | None, typer.Option("--save-steps", min=1, help="a checkpoint every N steps "
                                                       "[default: 1000, App. C.4]")] = None,
        seed: Annotated[int | None, typer.Option(help="seed of the split, the initialisation and the data order "
                                                 "[default: 0]")] = None,
        num_threads: Annotated[int | None, typer.Option("--num-threads", min=1, help="torch threads (default: "
                                                        "chosen from the free cores)")] = None,
        resume: Annotated[bool, typer.Option("--resume", help="continue from the latest checkpoint in --out")
                          ] = False) -> None:
    """Fine-tune a causal LM with LoRA to translate standard text into dialects (BanglaVerse App. C).

    Each pair becomes "Translate the following standard Bengali to Sylhet dialect: Standard Bengali: {x} Sylhet
    dialect: {y}" (the language from the dialect registry); the loss covers {y} only. Defaults are the paper's
    recipe: LoRA r=16, alpha=32, dropout 0.1 on q/k/v/o/gate/up/down projections, 3 epochs, micro-batch 1 ×
    8 accumulation steps, fp16 on a GPU, group-by-length, 512 tokens. 20% of the standard sentences are held
    out (with all their dialect versions) for an eval loss each epoch. Writes the adapter, the tokenizer and
    training.json to --out; checkpoints every --save-steps (Ctrl-C, then --resume, continues the step count).
    Needs the `train` extra (peft, transformers, torch). Serve the adapter: docs/lora.md.

    Example: dialectbias train-translator vashantor.yaml --base-model qwen2.5-3b/ --split train --out sylhet-lora/
    """
    from dialectbias.train import train_translator as run_training

    given = {"dialects": dialect or None, "splits": split or None, "eval_fraction": eval_fraction,
             "max_length": max_length, "lora_r": lora_r, "lora_alpha": lora_alpha, "lora_dropout": lora_dropout,
             "epochs": epochs, "max_steps": max_steps, "micro_batch_size": batch_size,
             "gradient_accumulation_steps": grad_accum, "learning_rate": learning_rate,
             "logging_steps": logging_steps, "save_steps": save_steps, "seed": seed, "num_threads": num_threads}
    config = load_recipe(recipe, {k: v for k, v in given.items() if v is not None})
    if conversations is not None and not conversations.is_file():
        raise ConfigError(f"--conversations {conversations}: file not found")

    def log(line: str) -> None:
        _app.console.print(line, highlight=False, soft_wrap=True)

    try:
        record = run_training(corpus, base_model, out, config, conversations=conversations, resume=resume, log=log)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, _app.Terminated)
        _app.err_console.print(f"interrupted{' (SIGTERM)' if terminated else ''}: the checkpoints in {out} are kept; "
                               "run the same command with --resume to continue")
        raise typer.Exit(_app.EXIT_TERMINATED if terminated else _app.EXIT_INTERRUPTED) from None
    data = record["data"]
    skipped = ", ".join(f"{n} {why}" for why, n in data["skipped"].items()) or "none"
    train_losses = record["loss"]["train"]
    first, last = (train_losses[0]["loss"], train_losses[-1]["loss"]) if train_losses else (None, None)
    log(f"{out}: adapter, tokenizer and training.json written; {record['global_step']} steps in "
        f"{record['train_seconds']:.1f} s" + (f" (resumed from {record['resumed_from']})" if record["resumed_from"]
                                              else ""))
    log(f"examples: {data['train_examples']} train, {data['eval_examples']} held out "
        f"({data['eval_groups']} standard sentences); left out: {skipped}; cut to --max-length: "
        f"{data['truncated_to_max_length']}")
    if first is not None:
        log(f"train loss {first:.4g} → {last:.4g}" + (f"; held-out loss {record['final_eval_loss']:.4g}"
                                                     if record["final_eval_loss"] is not None else ""))
