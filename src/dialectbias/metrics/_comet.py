"""COMET (Rei et al., 2020/2022) over a LOCAL checkpoint, never a download (issue 21 item 3).

BanglaVerse's released code scores its commonsense answers with `Unbabel/wmt22-comet-da`
(`code/Comet/comet_score_calculation.py`; PROCEDURES.md §2; the paper itself reports no COMET). The Bengali
dialect-bias paper names COMET (Rei et al., 2020) among the embedding-based metrics it looks beyond BLEU/chrF/
WER/BERTScore for (§2.2, §3.1.3) but reports none. This module loads a checkpoint from a path the user gives
and scores (src, mt, ref) triples with it.

The src/mt/ref convention (PROCEDURES.md §2):
- translation quality: src = the standard-language source sentence, mt = the system's translation into the
  dialect, ref = the human dialect reference (COMET's own convention);
- BanglaVerse CSU answers: the released code passes **src = reference, mt = prediction, ref = reference**
  (there is no source sentence to translate; the question is not used). `comet_scores(refs, preds, refs, …)`
  reproduces it.

What a checkpoint is: either the `checkpoints/model.ckpt` file of a COMET model folder or the folder itself,
which holds `hparams.yaml` and `checkpoints/model.ckpt` (the layout of `Unbabel/wmt22-comet-da` on the Hub).
`hparams.yaml` names the encoder in `pretrained_model` (e.g. `xlm-roberta-large`). COMET builds the encoder from
that name's config and tokenizer (`load_pretrained_weights=False`: the weights are in model.ckpt), which would
download them; here it must be a local folder (config.json + tokenizer files) — given as `pretrained_model` in
hparams.yaml (a relative path is taken from hparams.yaml's folder) or as `encoder=` — or loading is refused
before COMET is imported. HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE are set (unless already set) and COMET is asked
for local files only, so nothing reaches the Hub.

Scores are deterministic for the same checkpoint, inputs and batch size (the model runs in eval mode: no
dropout; padding inside a batch moves scores by ~1e-8, so the batch size is part of what a stored score
depends on). Requires the `comet` extra (`pip install 'dialectbias[comet]'`); loaded models are kept per
checkpoint identity for the life of the process.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import logging
import math
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialectbias.errors import ConfigError

DEFAULT_KEY = "comet_checkpoint"
INSTALL_HINT = "pip install 'dialectbias[comet]'"
#: COMET model classes that give one score per segment (`class_identifier` in hparams.yaml); ranking models do not
SCORING_CLASSES = ("regression_metric", "referenceless_regression_metric", "unified_metric", "xcomet_metric")
#: files of which at least one makes an encoder folder's tokenizer
TOKENIZER_FILES = ("tokenizer.json", "sentencepiece.bpe.model", "spiece.model", "vocab.txt")
_QUIET_LOGGERS = ("comet", "pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric",
                  "lightning.fabric", "transformers")
_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}


@dataclass(frozen=True)
class CometCheckpoint:
    """A COMET checkpoint found on disk, checked to load without any download."""

    checkpoint: Path  # …/checkpoints/model.ckpt
    hparams: Path  # …/hparams.yaml
    encoder: Path  # the local folder standing for `pretrained_model`
    class_identifier: str
    layer_transformation: str | None = None

    def identity(self) -> list[Any]:
        """What the scores depend on, for fingerprints: the checkpoint file (path, size, modification and
        change times), hparams.yaml's bytes and the encoder folder's files (names, sizes, the same times).
        Weights are not hashed (GBs on every report); the change time, which no copy tool can set, catches a
        file replaced by one of the same size and modification time (`cp -p`, `rsync -t`)."""
        files = sorted([p.name, *_stamp(p)] for p in self.encoder.iterdir() if p.is_file())
        return [str(self.checkpoint), *_stamp(self.checkpoint),
                hashlib.sha256(self.hparams.read_bytes()).hexdigest(), str(self.encoder), files]


def _stamp(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


@dataclass(frozen=True)
class CometScores:
    """Per-segment scores in input order and their mean (COMET's system score)."""

    scores: list[float]
    system_score: float


def comet_available() -> bool:
    """Whether the `comet` extra (unbabel-comet) is installed."""
    return importlib.util.find_spec("comet") is not None


def require_comet(key: str = DEFAULT_KEY) -> None:
    """A ConfigError naming the extra when unbabel-comet is not installed."""
    if not comet_available():
        raise ConfigError(f"`{key}`: COMET needs the `comet` extra (unbabel-comet): {INSTALL_HINT}")


def _read_hparams(path: Path, key: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"`{key}`: cannot read COMET hparams {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"`{key}`: COMET hparams {path} is not a YAML mapping")
    return data


def _encoder_folder(value: str | Path, base: Path) -> Path | None:
    """The local encoder folder `value` names (relative: from `base`), or None when no such folder exists."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base / path
    return path.resolve() if path.is_dir() else None


def _check_encoder(path: Path, where: str, key: str) -> Path:
    if not (path / "config.json").is_file():
        raise ConfigError(f"`{key}`: COMET encoder folder {path} ({where}) has no config.json: it needs the "
                          "encoder's config.json and tokenizer files (the weights are in the COMET checkpoint)")
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise ConfigError(f"`{key}`: COMET encoder folder {path} ({where}) has no tokenizer file (one of "
                          f"{', '.join(TOKENIZER_FILES)})")
    return path


def resolve_checkpoint(path: str | Path | None, *, encoder: str | Path | None = None,
                       key: str = DEFAULT_KEY, encoder_key: str = "encoder") -> CometCheckpoint:
    """The checkpoint at `path` (the model folder or its checkpoints/model.ckpt), checked without importing
    COMET: the files exist, hparams.yaml names a scoring model class, and the encoder (`encoder`, else
    hparams' `pretrained_model`) is a local folder. Every failure is a ConfigError naming `key` and the path;
`encoder_key` is the name of the encoder setting the messages suggest."""
    if path is None or not str(path).strip():
        raise ConfigError(f"`{key}`: COMET needs a local checkpoint: set it to a COMET model folder (hparams.yaml "
                          "+ checkpoints/model.ckpt) or to its checkpoints/model.ckpt; models are never downloaded")
    given = Path(path).expanduser()
    if not given.exists():
        raise ConfigError(f"`{key}`: COMET checkpoint {str(given)!r} does not exist (a local path is required; "
                          "Hub model names such as Unbabel/wmt22-comet-da are not downloaded)")
    if given.is_dir():
        ckpt = given / "checkpoints" / "model.ckpt"
        if not ckpt.is_file():
            raise ConfigError(f"`{key}`: COMET model folder {given} is incomplete: no checkpoints/model.ckpt")
    else:
        ckpt = given
    # absolute, symlinks kept: in a Hugging Face snapshot folder model.ckpt links into ../../blobs, and
    # hparams.yaml is looked for beside the link's folder (as COMET does), not the blob's
    ckpt = Path(os.path.abspath(ckpt))
    hparams = ckpt.parents[1] / "hparams.yaml"
    if not hparams.is_file():
        raise ConfigError(f"`{key}`: COMET checkpoint {ckpt} is incomplete: no hparams.yaml at {hparams} (COMET "
                          "reads it from the folder above checkpoints/)")
    hp = _read_hparams(hparams, key)
    cls = hp.get("class_identifier")
    if cls not in SCORING_CLASSES:
        raise ConfigError(f"`{key}`: {hparams}: class_identifier {cls!r} is not a COMET model that scores "
                          f"segments (one of {', '.join(SCORING_CLASSES)})")
    if encoder is not None and str(encoder).strip():
        folder = _encoder_folder(encoder, Path.cwd())
        if folder is None:
            raise ConfigError(f"`{encoder_key}`: COMET encoder folder {str(encoder)!r} does not exist")
        return CometCheckpoint(ckpt, hparams, _check_encoder(folder, f"`{encoder_key}`", key), cls,
                               hp.get("layer_transformation"))
    name = hp.get("pretrained_model")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"`{key}`: {hparams} has no pretrained_model (the encoder COMET builds)")
    folder = _encoder_folder(name, hparams.parent)
    if folder is None:
        raise ConfigError(
            f"`{key}`: {hparams}: pretrained_model {name!r} is not a local folder, so COMET would download it "
            "from the Hugging Face Hub, which dialectbias never does. Put that encoder's config.json and "
            "tokenizer files in a folder (its weights are not needed: they are in model.ckpt) and set "
            f"pretrained_model in hparams.yaml to that folder, or give the folder as `{encoder_key}`")
    return CometCheckpoint(ckpt, hparams, _check_encoder(folder, f"pretrained_model in {hparams}", key), cls,
                           hp.get("layer_transformation"))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Lightning's and COMET's banners ("GPU available…", tips, "Encoder model frozen.") off the terminal."""
    saved = {name: logging.getLogger(name).level for name in _QUIET_LOGGERS}
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def _load(ck: CometCheckpoint, key: str) -> Any:
    """The model, loaded once per checkpoint identity, its encoder built from `ck.encoder`.

    This is `comet.load_from_checkpoint` (unbabel-comet 2.2) with one change: `pretrained_model` is passed as a
    keyword, which replaces the name saved in the checkpoint's hyper-parameters (Lightning's rule), so a checkpoint
    trained with `xlm-roberta-large` builds its encoder from the local folder instead of the Hub."""
    cache_key = repr(ck.identity())
    if cache_key in _MODELS:
        return _MODELS[cache_key]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torchmetrics 0.10 imports pkg_resources (a DeprecationWarning)
            import torch
            from comet.models import str2model
    except ImportError as exc:
        raise ConfigError(f"`{key}`: COMET needs the `comet` extra (unbabel-comet): {INSTALL_HINT} ({exc})") from exc
    kwargs: dict[str, Any] = {
        "checkpoint_path": str(ck.checkpoint), "load_pretrained_weights": False, "hparams_file": None,
        "map_location": torch.device("cpu"), "strict": False, "local_files_only": True,
        "pretrained_model": str(ck.encoder)}
    if ck.layer_transformation == "sparsemax_patch":
        kwargs["layer_transformation"] = "softmax"  # COMET >= 2.2.4's own workaround (its issue #244)
    try:
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = str2model[ck.class_identifier].load_from_checkpoint(**kwargs)
    except Exception as exc:  # a broken/incompatible checkpoint: name it, never a bare traceback
        raise ConfigError(f"`{key}`: cannot load COMET checkpoint {ck.checkpoint}: {type(exc).__name__}: "
                          f"{exc}") from exc
    _MODELS[cache_key] = model
    return model


def score_comet(sources: Sequence[str], hypotheses: Sequence[str], references: Sequence[str],
                checkpoint: str | Path | CometCheckpoint | None, *, encoder: str | Path | None = None,
                batch_size: int = 8, gpus: int = 0, key: str = DEFAULT_KEY) -> CometScores:
    """COMET scores of each (src, mt, ref) triple, in input order, and their mean.

    `sources`: src (translation quality: the standard source; CSU as BanglaVerse: the reference), `hypotheses`:
    mt, `references`: ref. `checkpoint`: a local model folder or checkpoints/model.ckpt (`resolve_checkpoint`);
    `encoder`: a local encoder folder replacing hparams' `pretrained_model`; `batch_size`: segments per forward
    pass; `gpus`: 0 (CPU) or 1. An empty hypothesis is scored as COMET scores it (no special case); an empty
    reference is a ValueError naming its positions. No triples: ValueError (the mean of nothing).
    """
    src, mt, ref = list(sources), list(hypotheses), list(references)
    if not len(src) == len(mt) == len(ref):
        raise ValueError(f"COMET needs one source and one reference per hypothesis, got {len(src)} sources, "
                         f"{len(mt)} hypotheses and {len(ref)} references")
    if not mt:
        raise ValueError("COMET: no segments to score (the system score of nothing is undefined)")
    empty = [i for i, r in enumerate(ref) if not r.strip()]
    if empty:
        shown = ", ".join(map(str, empty[:10])) + (" …" if len(empty) > 10 else "")
        raise ValueError(f"COMET: {len(empty)} empty reference(s) at position(s) {shown}; leave items without a "
                         "reference out and count them")
    if batch_size < 1:
        raise ValueError(f"COMET batch_size must be at least 1, got {batch_size}")
    if gpus not in (0, 1):
        raise ValueError(f"COMET gpus must be 0 (CPU) or 1, got {gpus}")
    require_comet(key)
    ck = checkpoint if isinstance(checkpoint, CometCheckpoint) else resolve_checkpoint(checkpoint, encoder=encoder,
                                                                                         key=key)
    if gpus:
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"`{key}`: COMET gpus is 1 but torch sees no GPU; set it to 0 (CPU)")
    with _LOCK:
        model = _load(ck, key)
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = model.predict([{"src": s, "mt": m, "ref": r} for s, m, r in zip(src, mt, ref, strict=True)],
                                batch_size=batch_size, gpus=gpus, progress_bar=False, num_workers=0)
    scores = [float(v) for v in out.scores]
    if len(scores) != len(mt) or not all(math.isfinite(v) for v in scores):
        raise ConfigError(f"`{key}`: COMET checkpoint {ck.checkpoint} returned {len(scores)} scores for {len(mt)} "
                          "segments or a non-finite score")
    return CometScores(scores=scores, system_score=math.fsum(scores) / len(scores))


def comet_scores(sources: Sequence[str], hypotheses: Sequence[str], references: Sequence[str],
                 checkpoint: str | Path | CometCheckpoint | None, **kwargs: Any) -> list[float]:
    """Per-segment COMET scores in input order; arguments as `score_comet` (which also gives the mean)."""
    return score_comet(sources, hypotheses, references, checkpoint, **kwargs).scores
