"""`dialectbias train-translator`: fine-tune a causal LM with LoRA on a corpus's standard → dialect pairs
(SPEC §4 P1 "Fine-tuned dialect generator"; BanglaVerse §3.3, App. C), with the Hugging Face Trainer and peft.

Writes into `out`: the adapter (`adapter_config.json`, `adapter_model.safetensors`: peft `save_pretrained`),
the tokenizer, resumable Trainer checkpoints (`checkpoint-<step>/`) and `training.json` (the recipe, the data
counts with every row left out and why, the train/eval loss history, the held-out example ids, versions).
Serve the adapter with `provider: hf`, `adapter: OUT`, `prompt_format: raw` (docs/lora.md).
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from dialectbias._yaml import load_yaml
from dialectbias.data import load_corpus
from dialectbias.errors import ConfigError, DataError
from dialectbias.train._config import TranslatorTrainConfig
from dialectbias.train._inputs import check_resume, save_inputs, train_inputs
from dialectbias.train._instruction import CONVERSATION_FORMAT, TRANSLATE_FORMAT
from dialectbias.train._translator_data import (
    Encoded,
    Example,
    Selection,
    conversation_examples,
    encode_examples,
    pair_examples,
    split_examples,
)

TRAINING_JSON = "training.json"
INSTALL_HINT = "pip install 'torch==2.13.0' 'dialectbias[train]'"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")

Log = Callable[[str], None]


def _deps() -> tuple[Any, Any, Any]:
    """torch, transformers, peft — or one clear message naming the extra."""
    try:
        import peft
        import torch
        import transformers
    except ImportError as exc:
        raise ConfigError(f"train-translator needs the `train` extra ({exc}): install the `train` extra: "
                          f"{INSTALL_HINT}") from None
    return torch, transformers, peft


def checkpoints(out: Path, *, complete: bool = True) -> list[Path]:
    """The Trainer checkpoints in `out`, oldest first: only complete ones by default. The Trainer writes a
    checkpoint's trainer_state.json last (after the weights, optimizer, scheduler and RNG state), so a folder
    without a readable one was cut short by a kill while saving and cannot be resumed from."""
    if not out.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in out.iterdir() if p.is_dir() and (m := _CHECKPOINT.match(p.name))]
    return [p for _, p in sorted(found) if not complete or _complete(p)]


def _complete(checkpoint: Path) -> bool:
    try:
        json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return True


def check_base_model(path: Path) -> None:
    if not path.is_dir():
        raise ConfigError(f"--base-model {path}: folder not found (a Hugging Face model folder with config.json; "
                          "`dialectbias models convert-gguf` writes one from a GGUF file)")
    if not (path / "config.json").is_file():
        raise ConfigError(f"--base-model {path}: no config.json in it (a Hugging Face model folder; "
                          "`dialectbias models convert-gguf FILE.gguf --out DIR` writes one from a GGUF file)")


def select_examples(corpus_path: Path, config: TranslatorTrainConfig, conversations: Path | None
                    ) -> tuple[Selection, int]:
    """The training examples of the corpus (and conversation file) after the filters, and the corpus's pair
    count; DataError when nothing is left, with the counts of what was left out."""
    corpus = load_corpus(corpus_path)
    if config.dialects:
        unknown = sorted({d.lower() for d in config.dialects} - set(corpus.dialects()))
        if unknown:
            raise DataError(f"{corpus_path}: --dialect {', '.join(unknown)}: not in the corpus "
                            f"(it has: {', '.join(corpus.dialects())})")
    corpus.require_splits({s.lower() for s in config.splits or []})
    selection = pair_examples(corpus, dialects=config.dialects, splits=config.splits,
                              extra=_corpus_dialects(corpus_path))
    selection.skipped.update({f"corpus: {k}": v for k, v in _corpus_skips(corpus).items()})
    if conversations is not None:
        extra = conversation_examples(conversations)
        selection.examples += extra.examples
        selection.skipped.update(extra.skipped)
        selection.per_dialect.update(extra.per_dialect)
    if not selection.examples:
        left = ", ".join(f"{n} {why}" for why, n in sorted(selection.skipped.items())) or "none"
        raise DataError(f"{corpus_path}: no training pairs after the filters ({len(corpus.pairs)} pairs in the "
                        f"corpus; left out: {left})")
    return selection, len(corpus.pairs)


def _corpus_dialects(path: Path) -> dict[str, list[str]]:
    """The corpus file's own registry additions (`dialects: {bn: [bogura]}`), for the language word."""
    raw = load_yaml(path.read_text(encoding="utf-8"), str(path), DataError)[0] or {}
    extra = raw.get("dialects") if isinstance(raw, dict) else None
    return extra if isinstance(extra, dict) else {}


def _corpus_skips(corpus: Any) -> Counter[str]:
    report = corpus.report
    return Counter({k: v for k, v in (("duplicate rows", report.duplicates), ("empty rows", report.empty),
                                      ("rows dropped as dialect = standard (drop_identical)",
                                       report.total("identical_dropped"))) if v})


def _present_targets(model: Any, wanted: Sequence[str], torch: Any) -> list[str]:
    """The LoRA targets the model has (names of its linear layers); ConfigError when none match."""
    linear = sorted({name.rsplit(".", 1)[-1] for name, module in model.named_modules()
                     if isinstance(module, torch.nn.Linear)})
    chosen = [t for t in wanted if t in linear]
    if not chosen:
        raise ConfigError(f"the base model has none of the LoRA target modules {', '.join(wanted)}; its linear "
                          f"layers are: {', '.join(linear) or 'none'} (set target_modules)")
    return chosen


def _training_args(transformers: Any, config: TranslatorTrainConfig, out: Path, *, cuda: bool, has_eval: bool
                   ) -> Any:
    kwargs: dict[str, Any] = dict(
        output_dir=str(out), num_train_epochs=config.epochs, max_steps=config.max_steps,
        per_device_train_batch_size=config.micro_batch_size, per_device_eval_batch_size=config.eval_batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps, learning_rate=config.learning_rate,
        lr_scheduler_type=config.lr_scheduler, warmup_steps=config.warmup_steps, weight_decay=config.weight_decay,
        fp16=config.fp16 == "on" or (config.fp16 == "auto" and cuda), use_cpu=not cuda,
        logging_strategy="steps", logging_steps=config.logging_steps, logging_first_step=True,
        eval_strategy="epoch" if has_eval else "no", save_strategy="steps", save_steps=config.save_steps,
        save_total_limit=config.save_total_limit, seed=config.seed, data_seed=config.seed, report_to="none",
        disable_tqdm=True, remove_unused_columns=False, dataloader_num_workers=0)
    fields = set(inspect.signature(transformers.TrainingArguments).parameters)
    # transformers 5 renamed gradient checkpointing (the old name warns)
    kwargs["activation_checkpointing" if "activation_checkpointing" in fields else "gradient_checkpointing"] = (
        config.gradient_checkpointing)
    if "train_sampling_strategy" in fields:  # transformers 5
        kwargs["train_sampling_strategy"] = "group_by_length" if config.group_by_length else "random"
    else:  # transformers 4
        kwargs["group_by_length"] = config.group_by_length
    return transformers.TrainingArguments(**kwargs)


def _progress_callback(transformers: Any, log: Log) -> Any:
    started = time.perf_counter()

    class Progress(transformers.TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kwargs: Any) -> None:
            logs = logs or {}
            shown = {k: logs[k] for k in ("loss", "eval_loss", "learning_rate") if k in logs}
            if shown:
                log(f"step {state.global_step}/{state.max_steps} epoch {state.epoch or 0:.2f} "
                    f"[{time.perf_counter() - started:.1f} s]: " + ", ".join(f"{k} {v:.4g}" for k, v in shown.items()))

    return Progress()


def loss_history(log_history: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, float]]]:
    """Train and eval losses of the Trainer's log history, with their step and epoch."""
    train = [{"step": e["step"], "epoch": e.get("epoch"), "loss": e["loss"]} for e in log_history if "loss" in e]
    evals = [{"step": e["step"], "epoch": e.get("epoch"), "eval_loss": e["eval_loss"]}
             for e in log_history if "eval_loss" in e]
    return {"train": train, "eval": evals}


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in ("dialectbias", "torch", "transformers", "peft", "accelerate"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def train_translator(corpus: str | Path, base_model: str | Path, out: str | Path,
                     config: TranslatorTrainConfig | None = None, *, conversations: str | Path | None = None,
                     resume: bool = False, log: Log = lambda _: None, callbacks: Sequence[Any] = ()
                     ) -> dict[str, Any]:
    """Train the adapter and write it, the tokenizer and `training.json` to `out`; return training.json's content.

    `resume`: continue from the latest `checkpoint-<step>` in `out` (the optimizer, scheduler, RNG and data
    position are restored: the step count goes on). Without it, `out` must hold no checkpoint. `callbacks`:
    extra `transformers.TrainerCallback`s."""
    config = config or TranslatorTrainConfig()
    corpus_path, base, out_dir = Path(corpus), Path(base_model).expanduser(), Path(out).expanduser()
    conv_path = Path(conversations) if conversations is not None else None
    check_base_model(base)
    torch, transformers, peft = _deps()
    found, every = checkpoints(out_dir), checkpoints(out_dir, complete=False)
    if resume and not found:
        raise ConfigError(f"--resume: no complete checkpoint-<step> folder in {out_dir} to resume from"
                          + (f" ({', '.join(p.name for p in every)} cut short while saving)" if every else ""))
    if every and not resume:
        raise ConfigError(f"{out_dir} already holds checkpoints ({every[-1].name} …): pass --resume to continue "
                          "that training, or choose another --out")
    if resume:
        for cut in (p for p in every if p not in found):  # useless, and the Trainer would count it as saved
            shutil.rmtree(cut)
            log(f"removed {cut.name}: incomplete (killed while saving); resuming from {found[-1].name}")
    selection, corpus_pairs = select_examples(corpus_path, config, conv_path)

    from dialectbias.providers._hf_config import choose_threads

    threads = choose_threads(config.num_threads)
    torch.set_num_threads(threads.threads)
    log(f"torch threads: {threads.threads} ({threads.reason})")
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    transformers.set_seed(config.seed)

    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(base))
    except Exception as exc:
        raise ConfigError(f"--base-model {base}: cannot load its tokenizer: {type(exc).__name__}: {exc}") from None
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    train_ex, eval_ex = split_examples(selection.examples, config.eval_fraction, config.seed)
    inputs = train_inputs(corpus_path, train_ex, eval_ex)
    if resume:
        check_resume(out_dir, inputs)
    else:
        save_inputs(out_dir, inputs)
    train_enc, eval_enc = (encode_examples(tokenizer, ex, config.max_length, config.loss_on)
                           for ex in (train_ex, eval_ex))
    if not train_enc.rows:
        raise DataError(f"{corpus_path}: no training example left after tokenising ("
                        + ", ".join(f"{n} {why}" for why, n in (train_enc.skipped + eval_enc.skipped).items()) + ")")
    cuda = bool(torch.cuda.is_available())
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    except Exception as exc:
        raise ConfigError(f"--base-model {base}: cannot load it as a causal LM: {type(exc).__name__}: {exc}"
                          ) from None
    model.config.use_cache = False  # App. C.2
    targets = _present_targets(model, config.target_modules, torch)
    lora = peft.LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                           target_modules=targets, task_type="CAUSAL_LM")
    with warnings.catch_warnings():  # peft asks transformers 5 a deprecated question (is_gradient_checkpointing)
        warnings.simplefilter("ignore", FutureWarning)
        model = peft.get_peft_model(model, lora)
    if config.gradient_checkpointing:
        model.enable_input_require_grads()
    trainable, total = model.get_nb_trainable_parameters()
    log(f"{len(train_enc.rows)} training and {len(eval_enc.rows)} held-out examples; LoRA on "
        f"{', '.join(targets)}: {trainable:,} of {total:,} parameters trainable")
    args = _training_args(transformers, config, out_dir, cuda=cuda, has_eval=bool(eval_enc.rows))
    collator = transformers.DataCollatorForSeq2Seq(tokenizer, padding=True, pad_to_multiple_of=8,
                                                   label_pad_token_id=-100)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=train_enc.rows,
                                   eval_dataset=eval_enc.rows or None, data_collator=collator,
                                   processing_class=tokenizer,
                                   callbacks=[_progress_callback(transformers, log), *callbacks])
    trainer.remove_callback(transformers.PrinterCallback)  # our Progress callback prints instead
    started = time.perf_counter()
    resumed_from = found[-1].name if resume else None
    result = trainer.train(resume_from_checkpoint=str(found[-1]) if resume else None)
    seconds = time.perf_counter() - started
    evals = loss_history(trainer.state.log_history)["eval"]
    if eval_enc.rows and (not evals or evals[-1]["step"] != trainer.state.global_step):
        trainer.evaluate()  # the held-out loss of the final adapter (max_steps may end mid-epoch)
    evals = loss_history(trainer.state.log_history)["eval"]
    final_eval = {"eval_loss": evals[-1]["eval_loss"]} if evals else {}
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    record = _record(config, corpus_path, base, conv_path, selection, corpus_pairs, train_ex, eval_ex, train_enc,
                     eval_enc, targets, trainer, result, final_eval, seconds, resumed_from, threads.threads, cuda,
                     args.fp16)
    (out_dir / TRAINING_JSON).write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return record


def _record(config: TranslatorTrainConfig, corpus: Path, base: Path, conversations: Path | None,
            selection: Selection, corpus_pairs: int, train_ex: list[Example], eval_ex: list[Example],
            train_enc: Encoded, eval_enc: Encoded, targets: list[str], trainer: Any, result: Any,
            final_eval: dict[str, Any], seconds: float, resumed_from: str | None, threads: int, cuda: bool,
            fp16: bool) -> dict[str, Any]:
    skipped = Counter(selection.skipped)
    skipped.update(train_enc.skipped)
    skipped.update(eval_enc.skipped)
    state = trainer.state
    return {
        "format": "dialectbias/train-translator/1",
        "prompt_format": "raw",
        "instruction": TRANSLATE_FORMAT + " {target}",
        "conversation_format": CONVERSATION_FORMAT + " {target}",
        "base_model": str(base.resolve()),
        "corpus": str(corpus.resolve()),
        "conversations": str(conversations.resolve()) if conversations else None,
        "config": config.model_dump(mode="json"),
        "lora_target_modules": targets,
        "data": {
            "corpus_pairs": corpus_pairs,
            "examples": len(selection.examples),
            "per_dialect": dict(sorted(selection.per_dialect.items())),
            "skipped": dict(sorted(skipped.items())),
            "truncated_to_max_length": train_enc.truncated + eval_enc.truncated,
            "train_examples": len(train_enc.rows),
            "eval_examples": len(eval_enc.rows),
            "train_groups": len({e.group for e in train_ex}),
            "eval_groups": len({e.group for e in eval_ex}),
        },
        "held_out": {"groups": sorted({e.group for e in eval_ex}), "example_ids": sorted(e.id for e in eval_ex)},
        "loss": loss_history(state.log_history),
        "final_eval_loss": final_eval.get("eval_loss"),
        "global_step": state.global_step,
        "epochs_done": state.epoch,
        "resumed_from": resumed_from,
        "train_seconds": round(seconds, 3),
        "train_samples_per_second": (result.metrics or {}).get("train_samples_per_second"),
        "device": "cuda" if cuda else "cpu",
        "fp16": bool(fp16),
        "torch_threads": threads,
        "versions": _versions(),
    }
