"""Training recipes: the LoRA dialect generator (`dialectbias train-translator`; SPEC §4 P1, BanglaVerse App. C).

torch, transformers and peft (the `train` extra) are imported only when training starts."""

from dialectbias.train._config import LORA_TARGETS, TranslatorTrainConfig
from dialectbias.train._instruction import (
    conversation_prompt,
    dialect_display,
    dialect_language,
    instruction_prompt,
    stop_markers,
)
from dialectbias.train._translator import TRAINING_JSON, checkpoints, loss_history, train_translator
from dialectbias.train._translator_data import (
    IGNORE,
    Example,
    conversation_examples,
    encode_examples,
    pair_examples,
    split_examples,
)

__all__ = ["IGNORE", "LORA_TARGETS", "TRAINING_JSON", "Example", "TranslatorTrainConfig", "checkpoints",
           "conversation_examples", "conversation_prompt", "dialect_display", "dialect_language",
           "encode_examples", "instruction_prompt", "loss_history", "pair_examples", "split_examples",
           "stop_markers", "train_translator"]
