"""translation_quality's comet column end to end (issue 21 item 3; needs ../shared/data and the `comet` extra):
Vashantor validation rows (Barishal, Chittagong) with two systems made from the references and the untranslated
source as a baseline, scored by a tiny COMET model built offline (tests/tiny_comet.py) through `run` and
`report`; every value checked against `comet_scores` called directly with src = standard source, mt = the
translation, ref = the human reference; a changed checkpoint recomputes, an unchanged one is reused; and the
configuration errors a user meets, through the CLI."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import VASHANTOR, shared_path
from tiny_comet import build_comet_checkpoint, need_comet

PER_DIALECT = 4
DIALECTS = ("Barishal", "Chittagong")


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _rows() -> list[dict[str, str]]:
    folder = shared_path(*VASHANTOR, "Validation", why="the COMET translation_quality test reads it")
    rows = []
    for dialect in DIALECTS:
        for i, r in enumerate(_csv(folder / f"{dialect} Validation Translation.csv")[:PER_DIALECT]):
            words = r["dialect_text"].split()
            rows.append({"id": f"{dialect.lower()}-{i}", "dialect": dialect.lower(), "source": r["standard_text"],
                         "reference": r["dialect_text"], "exact": r["dialect_text"],
                         "dropped": " ".join(words[:-1]) if len(words) > 1 else r["standard_text"]})
    return rows


def project(directory: Path, rows: list[dict[str, str]], **options: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    metrics = options.pop("metrics", ["bleu", "chrf"])
    with (directory / "data.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    config = {"name": "tq-comet", "task": "translation_quality", "data": "data.csv", "systems": ["exact", "dropped"],
              "metrics": metrics,
              "options": {"bootstrap_resamples": 20, "baselines": ["source"], **options}}
    path = directory / "tq.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    need_comet()
    root = tmp_path_factory.mktemp("tq-comet-models")
    return build_comet_checkpoint(root / "seed0", seed=0), build_comet_checkpoint(root / "seed1", seed=1)


def _expected(rows: list[dict[str, str]], checkpoint: Path) -> dict[tuple[str, str], float]:
    from dialectbias.metrics import TextNormalization, comet_scores

    norm = TextNormalization()
    triples = [(r["id"], system, r["source"], r["source"] if system == "source" else r[system], r["reference"])
               for r in rows for system in ("exact", "dropped", "source")]
    values = comet_scores([norm.apply(t[2]) for t in triples], [norm.apply(t[3]) for t in triples],
                          [norm.apply(t[4]) for t in triples], checkpoint)
    return {(t[0], t[1]): v for t, v in zip(triples, values, strict=True)}


def test_comet_column_follows_the_checkpoint(cli: Any, tmp_path: Path, checkpoints: tuple[Path, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows()
    first, second = checkpoints
    exp = project(tmp_path / "tq", rows, comet_checkpoint=str(first), comet_batch_size=4)
    ran = cli("run", exp, "--no-progress")
    assert ran.exit_code == 0, ran.output
    assert "exact: 8 translations of 8 rows · bleu 100.0 · chrf 100.0 · comet " in ran.stdout

    out = tmp_path / "report"
    assert cli("report", exp, "--out", out).exit_code == 0
    items = {(r["id"], r["system"]): r for r in _csv(out / "translation_quality_items.csv")}
    expected = _expected(rows, first)
    assert len(items) == len(expected) == 24
    for pair, value in expected.items():
        assert float(items[pair]["comet"]) == pytest.approx(value, abs=1e-5), pair
    # Table 2: the mean of the rows' COMET per system × dialect (and all)
    t2 = {(r["system"], r["dialect"]): r for r in _csv(out / "translation_quality_by_dialect.csv")}
    for system in ("exact", "dropped", "source"):
        for dialect in ("barishal", "chittagong", "all"):
            values = [v for (i, s), v in expected.items() if s == system and dialect in ("all", i.split("-")[0])]
            assert float(t2[(system, dialect)]["comet"]) == pytest.approx(math.fsum(values) / len(values), abs=1e-5)
    assert t2[("exact", "all")]["comet"] != t2[("dropped", "all")]["comet"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "mean COMET score (options.comet_checkpoint; src = standard source" in html

    # an unchanged setting reuses the stored scores: COMET is not called again
    import dialectbias.metrics._comet as comet_module

    def no_call(*_: Any, **__: Any) -> Any:
        raise AssertionError("COMET recomputed although nothing changed")

    monkeypatch.setattr(comet_module, "score_comet", no_call)
    assert cli("report", exp, "--out", tmp_path / "again").exit_code == 0
    monkeypatch.undo()

    # another checkpoint: recomputed, the other model's scores
    project(tmp_path / "tq", rows, comet_checkpoint=str(second), comet_batch_size=4)
    out2 = tmp_path / "report2"
    assert cli("report", exp, "--out", out2).exit_code == 0
    items2 = {(r["id"], r["system"]): r for r in _csv(out2 / "translation_quality_items.csv")}
    for pair, value in _expected(rows, second).items():
        assert float(items2[pair]["comet"]) == pytest.approx(value, abs=1e-5), pair
        assert abs(float(items2[pair]["comet"]) - expected[pair]) > 1e-4


def test_no_checkpoint_no_column(cli: Any, tmp_path: Path) -> None:
    exp = project(tmp_path / "plain", _rows())
    assert cli("run", exp, "--no-progress").exit_code == 0
    out = tmp_path / "report"
    assert cli("report", exp, "--out", out).exit_code == 0
    header = _csv(out / "translation_quality_items.csv")[0]
    assert "comet" not in header and "chrf" in header


def test_configuration_errors(cli: Any, tmp_path: Path, checkpoints: tuple[Path, Path]) -> None:
    rows = _rows()
    exp = project(tmp_path / "a", rows, metrics=["bleu", "comet"])
    result = cli("run", exp, "--no-progress")
    assert result.exit_code != 0 and "metric comet needs options.comet_checkpoint" in result.output

    exp = project(tmp_path / "b", rows, comet_checkpoint="models/missing")
    result = cli("run", exp, "--no-progress")
    assert result.exit_code != 0
    assert "tq.yaml:" in result.output and "models/missing' does not exist" in " ".join(result.output.split())

    hub = tmp_path / "hub"
    hub.mkdir()
    (hub / "checkpoints").symlink_to(checkpoints[0] / "checkpoints")
    hp = yaml.safe_load((checkpoints[0] / "hparams.yaml").read_text(encoding="utf-8"))
    (hub / "hparams.yaml").write_text(yaml.safe_dump({**hp, "pretrained_model": "xlm-roberta-large"}),
                                      encoding="utf-8")
    exp = project(tmp_path / "c", rows, comet_checkpoint=str(hub))
    result = cli("run", exp, "--no-progress")
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert "pretrained_model 'xlm-roberta-large' is not a local folder" in text
    assert "or give the folder as `options.comet_encoder`" in text
    # the same checkpoint with the encoder's files given locally: runs
    exp = project(tmp_path / "d", rows, comet_checkpoint=str(hub),
                  comet_encoder=hp["pretrained_model"])
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "· comet " in result.stdout


def test_missing_extra_is_named_before_the_run(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dialectbias.metrics._comet as comet_module

    monkeypatch.setattr(comet_module, "comet_available", lambda: False)
    exp = project(tmp_path / "e", _rows(), comet_checkpoint="models/wmt22-comet-da")
    result = cli("run", exp, "--no-progress")
    text = " ".join(result.output.split())
    assert result.exit_code != 0 and "tq.yaml:" in text
    assert "COMET needs the `comet` extra (unbabel-comet): pip install 'dialectbias[comet]'" in text
    assert not (tmp_path / "e" / "tq-comet.sqlite").exists()  # refused before anything ran
