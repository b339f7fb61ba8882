"""`export --hf-dataset` of a translation_quality run on real Vashantor validation pairs (needs ../shared/data):
the task's own per-row table (`translation_quality_items`) is a config equal to what `export --format parquet`
writes, and every config loads with `datasets` offline. Metrics BLEU/chrF/WER only (no model is called)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from shared_data import VASHANTOR, shared_path

datasets = pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")


def test_a_task_table_is_a_config_equal_to_the_parquet_export(cli: object, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from dialectbias.data import load_corpus

    folder = shared_path(*VASHANTOR, "Validation", why="the translation_quality dataset export test needs it")
    corpus = tmp_path / "vashantor.yaml"
    corpus.write_text(yaml.safe_dump({"name": "vashantor-validation", "files": [
        {"path": str(folder / "*.csv"), "standard": "standard_text", "dialect_text": "dialect_text",
         "dialect": "dialect"}]}), encoding="utf-8")
    pairs = [p for p in load_corpus(corpus).pairs if p.split == "validation"][::50]  # 25 real pairs
    with (tmp_path / "data.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "source", "reference", "dialect", "copy"])
        for p in pairs:
            writer.writerow([p.id, p.standard, p.dialect_text, p.dialect, p.standard])
    exp = tmp_path / "tq.yaml"
    exp.write_text(yaml.safe_dump({"name": "vashantor-tq", "task": "translation_quality", "data": "data.csv",
                                   "systems": ["copy"], "metrics": ["bleu", "chrf", "wer"],
                                   "options": {"bootstrap_resamples": 50}}), encoding="utf-8")
    ran = cli("run", exp, "--no-progress")  # type: ignore[operator]
    assert ran.exit_code == 0, ran.output
    assert cli("export", exp, "--format", "parquet", "--out", tmp_path / "flat").exit_code == 0  # type: ignore[operator]
    result = cli("export", exp, "--hf-dataset", tmp_path / "ds", "--license", "cc-by-4.0")  # type: ignore[operator]
    assert result.exit_code == 0, result.output
    assert f"      {len(pairs)} translation_quality_items → data/translation_quality_items/" in result.stdout

    head = yaml.safe_load((tmp_path / "ds/README.md").read_text(encoding="utf-8")[4:].split("\n---\n", 1)[0])
    assert head["task_categories"] == ["translation"] and "translation_quality_items" in \
        [c["config_name"] for c in head["configs"]]
    flat = pq.read_table(tmp_path / "flat" / "translation_quality_items.parquet")
    mine = pq.read_table(tmp_path / "ds/data/translation_quality_items/test-00000-of-00001.parquet")
    # equal to the parquet export but for `where` (data.csv:ROW), written relative to the experiment's folder
    assert mine.drop_columns(["where"]).equals(flat.drop_columns(["where"])) and mine.num_rows == len(pairs)
    flat_where, mine_where = flat.column("where").to_pylist(), mine.column("where").to_pylist()
    assert sorted(flat_where) == sorted(f"{tmp_path / 'data.csv'}:{i + 2}" for i in range(len(pairs)))
    assert mine_where == [w.replace(f"{tmp_path}/", "") for w in flat_where]
    assert sorted(mine_where) == sorted(f"data.csv:{i + 2}" for i in range(len(pairs)))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for config in head["configs"]:
        ds = datasets.load_dataset(str(tmp_path / "ds"), name=config["config_name"], split="test",
                                   cache_dir=str(tmp_path / "hf"))
        table = pq.read_table(tmp_path / "ds" / config["data_files"][0]["path"])
        assert ds.num_rows == table.num_rows and ds.to_list() == table.to_pylist(), config["config_name"]
