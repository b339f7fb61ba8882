"""What the checkpoints in an `--out` folder were trained on (`train_inputs.json`, written when a training
starts): a digest of the training and held-out examples and the corpus's fingerprint. `--resume` continues only
on the same examples: the Trainer restores its position in the data, so resuming on an edited corpus, or with
options that select other examples, would silently train on a mixture."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from dialectbias.data import CorpusFingerprint, corpus_fingerprint, describe_changes
from dialectbias.errors import ConfigError
from dialectbias.train._translator_data import Example

TRAIN_INPUTS = "train_inputs.json"


class TrainInputs(BaseModel):
    examples: str
    train_examples: int
    eval_examples: int
    corpus: CorpusFingerprint


def train_inputs(corpus: Path, train: list[Example], held_out: list[Example]) -> TrainInputs:
    blob = json.dumps([[(e.id, e.prompt, e.target) for e in part] for part in (train, held_out)],
                      ensure_ascii=False)
    return TrainInputs(examples=hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12], train_examples=len(train),
                       eval_examples=len(held_out), corpus=corpus_fingerprint(corpus))


def save_inputs(out_dir: Path, inputs: TrainInputs) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / TRAIN_INPUTS).write_text(inputs.model_dump_json(indent=2) + "\n", encoding="utf-8")


def check_resume(out_dir: Path, now: TrainInputs) -> None:
    """ConfigError unless the checkpoints in `out_dir` were trained on the same examples as `now`."""
    path = out_dir / TRAIN_INPUTS
    try:
        then = TrainInputs.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        raise ConfigError(f"{out_dir}: --resume: no readable {TRAIN_INPUTS} (checkpoints of an earlier dialectbias): "
                          "the examples they were trained on cannot be told; train into a new --out") from None
    if then.examples == now.examples:
        return
    changes = then.corpus.changes(now.corpus)
    why = f"corpus: {describe_changes(changes)}" if changes else \
        "corpus unchanged: the options that select examples differ"
    raise ConfigError(f"{out_dir}: --resume: its checkpoints were trained on other examples ({then.train_examples} "
                      f"training and {then.eval_examples} held out, digest {then.examples}; now "
                      f"{now.train_examples} and {now.eval_examples}, digest {now.examples}); {why}; resume with "
                      "the corpus and options it started with, or train into a new --out")
