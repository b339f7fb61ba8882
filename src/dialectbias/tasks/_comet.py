"""A task's COMET checkpoint from its options (`comet_checkpoint`, `comet_encoder`; the `comet` extra):
resolved against the experiment file and checked before any model loads, errors naming the file's line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialectbias.config import Experiment
from dialectbias.errors import ConfigError

if TYPE_CHECKING:
    from dialectbias.metrics import CometCheckpoint


def experiment_checkpoint(exp: Experiment, checkpoint: str, encoder: str | None) -> CometCheckpoint:
    """`options.comet_checkpoint` (a local model folder or .ckpt) and `options.comet_encoder`, checked: files,
    a local encoder, the extra installed (`dialectbias.metrics.resolve_checkpoint`)."""
    from dialectbias.metrics import require_comet, resolve_checkpoint

    key = "options.comet_checkpoint"
    try:
        require_comet(key)
        return resolve_checkpoint(exp.resolve(checkpoint), key=key, encoder=exp.resolve(encoder) if encoder else None,
                                  encoder_key="options.comet_encoder")
    except ConfigError as exc:
        raise ConfigError(f"{exp.where('options', 'comet_checkpoint')}: {exc}") from exc


__all__ = ["experiment_checkpoint"]
