"""COMET over a local checkpoint (issue 21 item 3): every refusal before COMET could reach the Hub, and scoring
with a real (untrained) COMET RegressionMetric built offline here (tests/tiny_comet.py).

The refusals need no COMET installed (the checks read files only); the scoring tests skip without the `comet`
extra."""

from __future__ import annotations

import math
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from dialectbias.errors import ConfigError
from dialectbias.metrics import comet_scores, resolve_checkpoint, score_comet
from tiny_comet import build_comet_checkpoint, minilm_folder, need_comet

SRC = ["The farmer ploughs the field.", "It will rain today.", "Where is your house?"]
REF = ["A farmer ploughs the field with oxen.", "Today it is going to rain.", "Where is your home?"]
MT = ["A farmer ploughs the field with oxen.", "Stock markets fell sharply.", "Where your house is?"]


def _folder(tmp_path: Path, hparams: dict | str | None, ckpt: bytes | None = b"x") -> Path:
    folder = tmp_path / "model"
    (folder / "checkpoints").mkdir(parents=True)
    if ckpt is not None:
        (folder / "checkpoints" / "model.ckpt").write_bytes(ckpt)
    if hparams is not None:
        text = hparams if isinstance(hparams, str) else yaml.safe_dump(hparams)
        (folder / "hparams.yaml").write_text(text, encoding="utf-8")
    return folder


# -- refusals (no COMET needed) ---------------------------------------------------------------------------------
@pytest.mark.parametrize("missing", [None, "", "  "])
def test_no_checkpoint_names_the_key(missing: str | None) -> None:
    with pytest.raises(ConfigError, match=r"`comet_checkpoint`: COMET needs a local checkpoint.*never downloaded"):
        resolve_checkpoint(missing)


def test_missing_path_and_hub_name_are_refused(tmp_path: Path) -> None:
    gone = tmp_path / "nowhere"
    with pytest.raises(ConfigError, match=rf"`options\.x`: COMET checkpoint '{gone}' does not exist"):
        resolve_checkpoint(gone, key="options.x")
    with pytest.raises(ConfigError, match=r"'Unbabel/wmt22-comet-da' does not exist.*not downloaded"):
        resolve_checkpoint("Unbabel/wmt22-comet-da")


def test_incomplete_folders(tmp_path: Path) -> None:
    hp = {"class_identifier": "regression_metric", "pretrained_model": str(minilm_folder())}
    no_ckpt = _folder(tmp_path / "a", hp, ckpt=None)
    with pytest.raises(ConfigError, match=rf"COMET model folder {no_ckpt} is incomplete: no checkpoints/model.ckpt"):
        resolve_checkpoint(no_ckpt)
    no_hparams = _folder(tmp_path / "b", None)
    ckpt = no_hparams / "checkpoints" / "model.ckpt"
    for given in (no_hparams, ckpt):  # the folder or the .ckpt file: the same message
        with pytest.raises(ConfigError, match=rf"COMET checkpoint {ckpt} is incomplete: no hparams.yaml at "
                                              rf"{no_hparams / 'hparams.yaml'}"):
            resolve_checkpoint(given)


@pytest.mark.parametrize(("hparams", "message"), [
    ("a: [1", r"cannot read COMET hparams .*hparams.yaml"),
    ("- 1\n", r"hparams.yaml is not a YAML mapping"),
    ({"class_identifier": "ranking_metric", "pretrained_model": "x"},
     r"class_identifier 'ranking_metric' is not a COMET model that scores segments"),
    ({"class_identifier": "regression_metric"}, r"hparams.yaml has no pretrained_model"),
])
def test_bad_hparams(tmp_path: Path, hparams: dict | str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_checkpoint(_folder(tmp_path, hparams))


def test_hub_encoder_is_refused_before_comet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """wmt22-comet-da's hparams name `xlm-roberta-large`: COMET would fetch its config and tokenizer. Refused
    by reading hparams.yaml, before COMET is imported (an import would fail here: it is blocked)."""
    monkeypatch.setitem(sys.modules, "comet", None)
    folder = _folder(tmp_path, {"class_identifier": "regression_metric", "pretrained_model": "xlm-roberta-large"})
    with pytest.raises(ConfigError, match=rf"{folder / 'hparams.yaml'}: pretrained_model 'xlm-roberta-large' is "
                                          r"not a local folder, so COMET would download it"):
        resolve_checkpoint(folder)


def test_encoder_folder_needs_config_and_tokenizer(tmp_path: Path) -> None:
    enc = tmp_path / "enc"
    enc.mkdir()
    folder = _folder(tmp_path, {"class_identifier": "regression_metric", "pretrained_model": "../enc"})
    with pytest.raises(ConfigError, match=rf"COMET encoder folder {enc} \(pretrained_model in .*\) has no "
                                          "config.json"):
        resolve_checkpoint(folder)  # a relative pretrained_model is read from hparams.yaml's folder
    (enc / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"COMET encoder folder {enc} .* has no tokenizer file"):
        resolve_checkpoint(folder)
    (enc / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert resolve_checkpoint(folder).encoder == enc.resolve()
    with pytest.raises(ConfigError, match=r"`encoder`: COMET encoder folder '.*nope' does not exist"):
        resolve_checkpoint(folder, encoder=tmp_path / "nope")


def test_extra_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dialectbias.metrics._comet as comet_module

    monkeypatch.setattr(comet_module, "comet_available", lambda: False)
    with pytest.raises(ConfigError, match=r"COMET needs the `comet` extra \(unbabel-comet\): "
                                          r"pip install 'dialectbias\[comet\]'"):
        score_comet(["a"], ["a"], ["a"], tmp_path)


def test_table3_normalises_comet_by_clipping() -> None:
    from dialectbias.tasks.translation_quality._tables import normalized

    assert normalized("comet", 0.83) == 0.83
    assert normalized("comet", 1.2) == 1.0 and normalized("comet", -0.3) == 0.0


def test_argument_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="got 2 sources, 1 hypotheses and 1 references"):
        comet_scores(["a", "b"], ["a"], ["a"], tmp_path)
    with pytest.raises(ValueError, match="no segments to score"):
        comet_scores([], [], [], tmp_path)
    with pytest.raises(ValueError, match=r"1 empty reference\(s\) at position\(s\) 1"):
        comet_scores(["a", "b"], ["a", "b"], ["a", " "], tmp_path)
    with pytest.raises(ValueError, match=r"gpus must be 0 \(CPU\) or 1, got 2"):
        comet_scores(["a"], ["a"], ["a"], tmp_path, gpus=2)


# -- scoring (the `comet` extra) --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_comet()
    return build_comet_checkpoint(tmp_path_factory.mktemp("comet") / "tiny-comet")


def test_scores_match_comets_own_loader(checkpoint: Path) -> None:
    """Our loader (encoder from a local folder, Hub never asked) scores exactly as COMET's own
    load_from_checkpoint + predict; the system score is the plain mean."""
    from comet import load_from_checkpoint

    ours = score_comet(SRC, MT, REF, checkpoint, batch_size=8)
    theirs = load_from_checkpoint(str(checkpoint / "checkpoints" / "model.ckpt"), local_files_only=True).predict(
        [{"src": s, "mt": m, "ref": r} for s, m, r in zip(SRC, MT, REF, strict=True)], batch_size=8, gpus=0,
        progress_bar=False)
    assert ours.scores == pytest.approx(theirs.scores, abs=1e-6)
    assert ours.system_score == pytest.approx(math.fsum(ours.scores) / 3, abs=1e-12)
    assert ours.system_score == pytest.approx(theirs.system_score, abs=1e-6)


def test_deterministic_in_order_and_depends_on_mt(checkpoint: Path) -> None:
    first = comet_scores(SRC, MT, REF, checkpoint)
    assert comet_scores(SRC, MT, REF, checkpoint) == first  # same call, same floats
    backward = comet_scores(SRC[::-1], MT[::-1], REF[::-1], checkpoint, batch_size=1)
    assert backward[::-1] == pytest.approx(first, abs=1e-5)  # input order kept, whatever the batching
    changed = comet_scores(SRC, [MT[0], MT[1], "Completely different words here."], REF, checkpoint)
    assert changed[:2] == pytest.approx(first[:2], abs=1e-5) and abs(changed[2] - first[2]) > 1e-4
    assert len(set(first)) == 3  # not a constant
    src_changed = comet_scores(["Nothing alike at all.", *SRC[1:]], MT, REF, checkpoint)
    assert abs(src_changed[0] - first[0]) > 1e-4  # the source is read too (src, not only mt/ref)
    assert comet_scores(SRC[:1], [""], REF[:1], checkpoint)[0] != first[0]  # an empty mt is scored by COMET


def test_the_file_or_the_folder_and_a_seed_changes_scores(checkpoint: Path, tmp_path: Path) -> None:
    by_folder = comet_scores(SRC, MT, REF, checkpoint)
    assert comet_scores(SRC, MT, REF, checkpoint / "checkpoints" / "model.ckpt") == by_folder
    other = build_comet_checkpoint(tmp_path / "other", seed=1)
    assert resolve_checkpoint(other).identity() != resolve_checkpoint(checkpoint).identity()
    assert all(abs(a - b) > 1e-4 for a, b in zip(comet_scores(SRC, MT, REF, other), by_folder, strict=True))


def test_a_checkpoint_replaced_under_the_same_size_and_time_changes_the_identity(checkpoint: Path,
                                                                                 tmp_path: Path) -> None:
    """Stored COMET scores are keyed by `identity()`: a checkpoint whose bytes changed under the same size and
    modification time (`cp -p`, `rsync -t`) must not keep them."""
    copy = tmp_path / "copy"
    shutil.copytree(checkpoint, copy)
    before = resolve_checkpoint(copy).identity()
    assert resolve_checkpoint(copy).identity() == before
    ckpt = copy / "checkpoints" / "model.ckpt"
    stat, data = ckpt.stat(), bytearray(ckpt.read_bytes())
    data[len(data) // 2] ^= 0xFF
    ckpt.write_bytes(bytes(data))
    os.utime(ckpt, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert ckpt.stat().st_size == stat.st_size and ckpt.stat().st_mtime_ns == stat.st_mtime_ns
    assert resolve_checkpoint(copy).identity() != before


def test_hub_named_checkpoint_loads_with_a_local_encoder(checkpoint: Path, tmp_path: Path) -> None:
    """A checkpoint trained with a Hub encoder name (as wmt22-comet-da's `xlm-roberta-large`) is refused as is
    and loads offline once `encoder=` points at the encoder's files: same weights, same scores."""
    hub = build_comet_checkpoint(tmp_path / "hub", pretrained_model="sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(ConfigError, match="'sentence-transformers/all-MiniLM-L6-v2' is not a local folder"):
        comet_scores(SRC, MT, REF, hub)
    assert comet_scores(SRC, MT, REF, hub, encoder=minilm_folder()) == pytest.approx(
        comet_scores(SRC, MT, REF, checkpoint), abs=1e-6)


def test_broken_checkpoint_file_is_named(tmp_path: Path) -> None:
    need_comet()
    folder = _folder(tmp_path, {"class_identifier": "regression_metric", "pretrained_model": str(minilm_folder())},
                     ckpt=b"not a checkpoint")
    with pytest.raises(ConfigError, match=rf"cannot load COMET checkpoint {folder / 'checkpoints' / 'model.ckpt'}"):
        comet_scores(["a"], ["a"], ["a"], folder)
