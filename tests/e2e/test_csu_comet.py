"""csu's comet column (issue 21 items 1 and 3; needs ../shared/data/banglaverse and the `comet` extra, which CI
installs in a step of its own): hand-written answers on real commonsense items, imported and scored by a tiny
COMET model built offline (tests/tiny_comet.py) with the released code's convention src = the reference,
mt = the answer, ref = the reference (PROCEDURES.md §2). Every answer's value equals `comet_scores` called
directly, the table's mean is over n only (abstentions in n as wrong, by default), another checkpoint gives
other values (computed when the report is built: nothing stale), and a missing checkpoint is a clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_csu_banglaverse import DATA, HANDMADE, handmade, read_csv, write_experiment

from dialectbias.data import BanglaVerseLoad, iter_banglaverse
from tiny_comet import build_comet_checkpoint, need_comet

pytestmark = pytest.mark.skipif(DATA is None, reason="../shared/data/banglaverse is missing")
__all__ = ["handmade"]  # the imported fixture


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    need_comet()
    root = tmp_path_factory.mktemp("csu-comet-models")
    return build_comet_checkpoint(root / "seed0", seed=0), build_comet_checkpoint(root / "seed1", seed=1)


def _report(cli: Any, tmp_path: Path, handmade: Path, checkpoint: Path, name: str) -> dict[str, dict[str, str]]:
    path = write_experiment(tmp_path / name, "csu-comet", None, models=0, comet_checkpoint=str(checkpoint))
    result = cli("import-generations", path, handmade)
    assert result.exit_code == 0, result.output
    result = cli("report", path, "--out", tmp_path / name / "report")
    assert result.exit_code == 0, result.output
    return {r["item_id"]: r for r in read_csv(tmp_path / name / "report/csu_answers.csv")}


def test_csu_comet_uses_the_released_convention(cli: Any, tmp_path: Path, handmade: Path,
                                                checkpoints: tuple[Path, Path]) -> None:
    from dialectbias.metrics import comet_scores

    assert DATA is not None
    first, second = checkpoints
    rows = _report(cli, tmp_path, handmade, first, "a")
    assert len(rows) == len(HANDMADE)
    refs = {i.id: i.variants["standard"]["answer"] for i in iter_banglaverse(DATA, "csu", BanglaVerseLoad(DATA))}
    ids = list(rows)
    answers = [rows[i]["answer"] for i in ids]
    expected = comet_scores([refs[i] for i in ids], answers, [refs[i] for i in ids], first)
    for item_id, value in zip(ids, expected, strict=True):
        assert float(rows[item_id]["comet"]) == pytest.approx(value, abs=1e-6), item_id
    table = {r["domain"]: r for r in read_csv(tmp_path / "a/report/csu_scores.csv")}
    culture = [float(rows[i]["comet"]) for i in ids if i.startswith("culture")]
    assert float(table["culture"]["comet"]) == pytest.approx(sum(culture) / len(culture), abs=1e-9)
    assert int(table["culture"]["n"]) == len(culture)
    # another checkpoint: other values, computed from the settings as they are now
    other = _report(cli, tmp_path, handmade, second, "b")
    assert any(abs(float(other[i]["comet"]) - float(rows[i]["comet"])) > 1e-4 for i in ids)


def test_csu_comet_checkpoint_missing_is_named(cli: Any, tmp_path: Path, handmade: Path) -> None:
    path = write_experiment(tmp_path, "csu-comet-missing", None, models=0, comet_checkpoint="nowhere/model")
    result = cli("import-generations", path, handmade)
    assert result.exit_code != 0
    assert "options.comet_checkpoint" in result.output and "Traceback" not in result.output
