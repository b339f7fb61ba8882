"""The LoRA dialect generator's recipe (SPEC §4 P1; BanglaVerse §3.3, App. C): every hyper-parameter of
`dialectbias train-translator` in one pydantic model, with the paper's values as defaults.

Sources of the defaults:
- LoRA r=16, alpha=32, dropout 0.1 on q/k/v/o/gate/up/down projections: App. C.2.
- 3 epochs, micro-batch 1, 8 gradient-accumulation steps, fp16 (on a GPU), group-by-length, padding to a
  multiple of 8, max 512 tokens, logging every 50 steps, checkpoints every 1,000 steps: App. C.1, C.3, C.4.
- 80/20 random train/held-out split: §3.3, App. C.1 (we group it by standard sentence, see `_translator_data`).
- Learning rate 2e-4 with linear decay and no warm-up: the paper's Table 7 is not in its text, only that the
  rate had "decayed" to ~1.41e-7 at the last step (App. C.4), which a linear schedule to 0 gives; 2e-4 is the
  usual LoRA rate (QLoRA, Dettmers et al. 2023, §5; the PEFT and TRL examples). Set `learning_rate` to the
  paper's value when you know it.
- Generation (temperature 0.7, sampling, up to 50 new tokens: App. C.4) is not training: give it as the
  serving model's `params:` (docs/lora.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.config import Departure

#: App. C.2: attention and feed-forward projections (Llama/Qwen/Mistral names)
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class TranslatorTrainConfig(BaseModel):
    """How `dialectbias train-translator` fine-tunes a causal LM with LoRA (recorded in `training.json`)."""

    model_config = ConfigDict(extra="forbid")

    # data
    dialects: list[str] | None = Field(default=None, description="train on these dialects only (default: all)")
    splits: list[str] | None = Field(default=None, description="use the corpus pairs of these splits only "
                                     "(e.g. train; default: all)")
    eval_fraction: float = Field(default=0.2, ge=0.0, lt=1.0, description="held-out share of standard sentences "
                                 "(BanglaVerse §3.3: 20%), grouped so a sentence is never on both sides")
    max_length: int = Field(default=512, ge=8, description="tokens per example (prompt + target); longer "
                            "targets are cut, examples whose prompt alone fills it are skipped")
    # LoRA (App. C.2)
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int = Field(default=32, ge=1)
    lora_dropout: float = Field(default=0.1, ge=0.0, lt=1.0)
    target_modules: list[str] = Field(default_factory=lambda: list(LORA_TARGETS),
                                      description="projection names to adapt (those the model has)")
    # optimisation (App. C.3, C.4)
    epochs: float = Field(default=3.0, gt=0)
    max_steps: int = Field(default=-1, description="stop after this many optimizer steps (-1: the epochs)")
    micro_batch_size: int = Field(default=1, ge=1)
    gradient_accumulation_steps: int = Field(default=8, ge=1)
    eval_batch_size: int = Field(default=8, ge=1, description="held-out examples per forward pass (no "
                                 "gradient: larger than the micro-batch)")
    learning_rate: float = Field(default=2e-4, gt=0)
    lr_scheduler: Literal["linear", "cosine", "constant"] = "linear"
    warmup_steps: int = Field(default=0, ge=0)
    weight_decay: float = Field(default=0.0, ge=0)
    group_by_length: bool = True
    fp16: Literal["auto", "on", "off"] = Field(default="auto", description="auto: fp16 when CUDA exists")
    gradient_checkpointing: bool = Field(default=False, description="App. C.2 used it to save GPU memory; "
                                         "slower, same result")
    logging_steps: int = Field(default=50, ge=1)
    save_steps: int = Field(default=1000, ge=1, description="a resumable checkpoint every N optimizer steps")
    save_total_limit: int | None = Field(default=2, ge=1, description="checkpoints kept (the latest ones)")
    seed: int = 0
    num_threads: int | None = Field(default=None, ge=1, description="torch threads; default: chosen from "
                                    "the free cores (like provider: hf)")
    loss_on: Literal["target", "sequence"] = Field(
        default="target", description="tokens the loss is computed on: target (the prompt masked: the model "
        "learns to write the dialect, not to repeat the instruction) or sequence (prompt and target, the "
        "paper's causal LM objective across the sequence, App. C.1)")
    replicate: Literal["toolkit", "paper"] = Field(
        default="toolkit", description="paper: every key where the recipe departs from BanglaVerse App. C takes "
        "the paper's value (docs/departures.md); a key given with another value is an error")

    #: departures from BanglaVerse App. C (docs/departures.md; `replicate: paper` sets these values)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "loss_on": Departure("sequence", "BanglaVerse App. C.1 (the objective \"applied across the sequence\")",
                             "masking the prompt spends the updates on the dialect output only"),
        "gradient_checkpointing": Departure(True, "BanglaVerse App. C.2", "slower, the same result; it only "
                                            "saves GPU memory"),
    }
