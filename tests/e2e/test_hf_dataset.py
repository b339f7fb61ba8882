"""`dialectbias export EXP --hf-dataset DIR` end to end through the CLI against the test server: the folder loads
with the real `datasets` library offline (every config), its card's YAML header is what the Hub reads, and its
values equal `export --format parquet` and `export --items`; a translate run's machine variants carry their
provenance (model, corpus, index) into the `variants` config and the card."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

datasets = pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")

STORE_CONFIGS = ("generations", "judgments", "departures")


def card_header(folder: Path) -> tuple[dict[str, Any], str]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No network for `datasets`/`huggingface_hub`, and a cache of this test's own."""
    cache = tmp_path / "hf-cache"
    for name, value in (("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"), ("HF_HOME", str(cache)),
                        ("HF_DATASETS_CACHE", str(cache / "datasets"))):
        monkeypatch.setenv(name, value)
    return cache


def load(folder: Path, config: str, cache: Path) -> Any:
    return datasets.load_dataset(str(folder), name=config, split="test", cache_dir=str(cache / "datasets"))


def check_loads_as_parquet(folder: Path, head: dict[str, Any], cache: Path) -> dict[str, Any]:
    """Every config of the header loads with `datasets`, row for row what its Parquet file holds."""
    loaded = {}
    for config in head["configs"]:
        (split,) = config["data_files"]
        assert split["split"] == "test" and (folder / split["path"]).is_file()
        ds = load(folder, config["config_name"], cache)
        table = pq.read_table(folder / split["path"])
        assert ds.num_rows == table.num_rows > 0
        assert ds.to_list() == table.to_pylist()
        loaded[config["config_name"]] = ds
    return loaded


def test_a_qa_study_publishes_a_dataset_datasets_loads(session_server: Any, cli: Any, qa: Any, tmp_path: Path,
                                                       offline: Path) -> None:
    project = qa.make_project(tmp_path / "qa", session_server.base_url, n_items=3)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert cli("export", project.yaml_path, "--format", "parquet", "--out", tmp_path / "flat").exit_code == 0
    assert cli("export", project.yaml_path, "--items", tmp_path / "items.jsonl").exit_code == 0
    out = tmp_path / "ds"
    result = cli("export", project.yaml_path, "--hf-dataset", out)
    assert result.exit_code == 0, result.output
    assert "no --license given: the card says `license: unknown`" in result.stderr
    assert "       3 items → data/items/test-00000-of-00001.parquet" in result.stdout
    assert "no row, left out: reasks, annotations" in result.stdout
    umask = os.umask(0o022)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~umask  # not mkdtemp's 0700

    head, body = card_header(out)
    assert head["language"] == ["bn"] and head["license"] == "unknown"
    assert head["task_categories"] == ["question-answering", "text-generation"]
    assert head["size_categories"] == ["n<1K"] and "qa_bias" in head["pretty_name"]
    names = [c["config_name"] for c in head["configs"]]
    assert names == ["items", "variants", "generations", "judgments", "departures"]
    assert head["configs"][0]["default"] is True

    loaded = check_loads_as_parquet(out, head, offline)
    # the store's tables are the very values `export --format parquet` wrote
    for name in STORE_CONFIGS:
        flat = pq.read_table(tmp_path / "flat" / f"{name}.parquet")
        assert pq.read_table(out / f"data/{name}/test-00000-of-00001.parquet").equals(flat)
        assert loaded[name].to_list() == flat.to_pylist()
    assert loaded["generations"].num_rows == 2 * 3 * 3  # 2 models × 3 items × 3 variants
    # the items are `export --items`' rows, nested fields as JSON text
    exported = qa.read_jsonl(tmp_path / "items.jsonl")
    rows = loaded["items"].to_list()
    assert [r["id"] for r in rows] == [e["id"] for e in exported]
    for row, expected in zip(rows, exported, strict=True):
        assert json.loads(row["variants"]) == expected["variants"]
        assert {k: v for k, v in row.items() if k != "variants"} == {k: v for k, v in expected.items()
                                                                      if k != "variants"}
    variants = loaded["variants"].to_list()
    assert len(variants) == 9 and {v["provenance"] for v in variants} == {"human"}
    assert {v["language"] for v in variants} == {"bn"}  # standard takes its dialects' language
    assert all(v["is_human_validated"] is None for v in variants)  # human-written, no validation on record
    assert {(v["item_id"], v["variant"]): v["text"] for v in variants}[("q01", "sylhet")] == \
        exported[0]["variants"]["sylhet"]

    assert "| standard | bn | 3 | 3 | 0 | — | 0 | 0 | 3 |\n| chittagong | bn | 3 | 3 | 0 | — | 0 | 0 | 3 |" in body
    assert "- model: `model-a`: model-a (openai)\n- model: `model-b`: model-b (openai)" in body
    assert "rubric the task default, primary judge" in body
    assert "dialectbias 0." in body and "arXiv" in body and "2603.21359" in body
    assert str(tmp_path) not in (out / "README.md").read_text(encoding="utf-8")

    hub = pytest.importorskip("huggingface_hub")
    card = hub.DatasetCard.load(out / "README.md")
    assert card.data.license == "unknown" and card.data.language == ["bn"]
    assert card.data.to_dict()["configs"] == head["configs"]


def test_the_folder_is_refused_when_not_empty_and_replaced_with_force(session_server: Any, cli: Any, qa: Any,
                                                                      tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "qa", session_server.base_url, n_items=2)
    out = tmp_path / "ds"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    result = cli("export", project.yaml_path, "--hf-dataset", out)
    assert result.exit_code != 0
    assert "the folder exists and is not empty; give a new or empty folder" in result.stderr
    result = cli("export", project.yaml_path, "--hf-dataset", out, "--force")
    assert result.exit_code != 0 and "--force replaces only a folder an earlier" in result.stderr
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"  # untouched

    # before a run: the items only, said so; then replaced with --force once the study ran
    fresh = tmp_path / "fresh"
    result = cli("export", project.yaml_path, "--hf-dataset", fresh, "--license", "cc-by-4.0")
    assert result.exit_code == 0, result.output
    assert "no run or import yet: the dataset holds the items only" in result.stderr
    assert sorted(p.name for p in (fresh / "data").iterdir()) == ["items", "variants"]
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    result = cli("export", project.yaml_path, "--hf-dataset", fresh, "--license", "cc-by-4.0")
    assert result.exit_code != 0 and "or --force to replace this earlier export" in result.stderr
    result = cli("export", project.yaml_path, "--hf-dataset", fresh, "--license", "CC-BY-4.0", "--force")
    assert result.exit_code == 0, result.output
    head, _ = card_header(fresh)
    assert head["license"] == "cc-by-4.0" and "no --license given" not in result.stderr
    assert "generations" in [c["config_name"] for c in head["configs"]]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fresh.")]  # no build folder left behind


def test_a_licence_the_hub_does_not_know_is_an_error(session_server: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "qa", session_server.base_url, n_items=2)
    result = cli("export", project.yaml_path, "--hf-dataset", tmp_path / "ds", "--license", "cc-by-4")
    assert result.exit_code != 0
    assert "--license 'cc-by-4' is not a Hugging Face licence identifier (did you mean 'cc-by-4.0'?" in result.stderr
    assert not (tmp_path / "ds").exists()
    result = cli("export", project.yaml_path, "--out", tmp_path / "flat", "--license", "mit")
    assert result.exit_code != 0 and "--license and --force go with --hf-dataset DIR" in result.stderr


def test_a_local_path_in_the_data_is_made_relative_or_refused(session_server: Any, cli: Any, qa: Any,
                                                               tmp_path: Path) -> None:
    # a file in the experiment's folder: written relative to it (translation_quality's `where` is such a path)
    inside = str(tmp_path / "qa" / "raw" / "scrape.html")
    project = qa.make_project(tmp_path / "qa", session_server.base_url,
                              items=[qa.qa_item(0), {**qa.qa_item(1), "source": inside + ":12"}])
    result = cli("export", project.yaml_path, "--hf-dataset", tmp_path / "ds")
    assert result.exit_code == 0, result.output
    assert "       1 text cells named a local file: written relative to its folder" in result.stdout
    items = pq.read_table(tmp_path / "ds/data/items/test-00000-of-00001.parquet").column("source").to_pylist()
    assert items == [None, "raw/scrape.html:12"]
    card = (tmp_path / "ds/README.md").read_text(encoding="utf-8")
    assert "1 text cell(s) named a file in the experiment's or its data's folder" in card

    # a file elsewhere under the home folder: refused, naming config, column and row
    home = str(Path.home() / "notes" / "scrape.html")
    project = qa.make_project(tmp_path / "qa2", session_server.base_url,
                              items=[qa.qa_item(0), {**qa.qa_item(1), "source": home}])
    result = cli("export", project.yaml_path, "--hf-dataset", tmp_path / "ds2")
    assert result.exit_code != 0
    assert ("config 'items', column 'source', row 1: contains the home folder; nothing was written"
            in result.stderr)
    assert not (tmp_path / "ds2").exists()


def test_an_api_key_in_the_data_is_refused_without_printing_it(session_server: Any, cli: Any, qa: Any,
                                                                tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-4f9a8b7c6d5e"
    monkeypatch.setenv("DB_TEST_KEY", key)
    items = [qa.qa_item(0), {**qa.qa_item(1), "note": f"pasted by mistake: {key}"}]
    project = qa.make_project(tmp_path / "qa", session_server.base_url, items=items,
                              model={"api_key_env": "DB_TEST_KEY"})
    result = cli("export", project.yaml_path, "--hf-dataset", tmp_path / "ds")
    assert result.exit_code != 0
    assert ("config 'items', column 'note', row 1: contains the API key of 'model-a' ($DB_TEST_KEY)"
            in result.stderr)
    assert key not in result.output and not (tmp_path / "ds").exists()


def test_answers_of_a_model_no_longer_listed_are_named(session_server: Any, cli: Any, qa: Any,
                                                       tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "qa", session_server.base_url, n_items=2)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    project.rewrite(models=project.config["models"][:1])
    result = cli("export", project.yaml_path, "--hf-dataset", tmp_path / "ds", "--license", "mit")
    assert result.exit_code == 0, result.output
    body = (tmp_path / "ds" / "README.md").read_text(encoding="utf-8")
    # 2 items × 3 variants of model-b, still in the store (as `export --format parquet` writes them)
    assert "- model: `model-a`: model-a (openai)\n- answers from `model-b` (6 rows in `generations`; " in body
    flat = pq.read_table(tmp_path / "ds/data/generations/test-00000-of-00001.parquet").to_pylist()
    assert sum(r["model"] == "model-b" for r in flat) == 6
