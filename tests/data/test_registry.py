"""The dialect registry: unknown variant names are errors with a suggestion, and experiments can extend it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dialectbias.api import load_experiment
from dialectbias.data import iter_items, known_variants
from dialectbias.errors import ConfigError, DataError


def test_registry_has_the_spec_dialects_and_standard() -> None:
    known = known_variants()
    assert {"standard", "chittagong", "sylhet", "tangail", "bavarian", "als", "english", "urdu"} <= known


def test_an_experiment_extends_the_registry() -> None:
    assert "chakma" in known_variants({"bn": ["Chakma"]})


def test_unknown_variant_in_data_names_file_line_and_suggests(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    rows = [{"id": "q1", "variants": {"standard": "ক", "sylhet": "খ"}},
            {"id": "q2", "variants": {"standard": "ক", "chitagong": "খ"}}]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path}:2: item 'q2': unknown variant 'chitagong' "
                                        r"\(did you mean 'chittagong'\?"):
        list(iter_items(path, known=known_variants()))


def _experiment(tmp_path: Path, **extra: object) -> Path:
    (tmp_path / "items.jsonl").write_text(json.dumps({"id": "q1", "variants": {"standard": "ক", "chakma": "খ"}},
                                                     ensure_ascii=False), encoding="utf-8")
    config = {"name": "x", "task": "qa_bias", "data": "items.jsonl",
              "models": [{"id": "m", "provider": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m"}],
              **extra}
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def test_unknown_variant_in_the_experiment_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"variants: unknown variant 'sylet' \(did you mean 'sylhet'\?"):
        load_experiment(_experiment(tmp_path, variants=["standard", "sylet"]))


def test_registered_extension_lets_the_items_load(tmp_path: Path) -> None:
    from dialectbias.tasks import get_task

    plain = load_experiment(_experiment(tmp_path))
    with pytest.raises(DataError, match="unknown variant 'chakma'"):
        list(get_task("qa_bias")(plain).load_items())
    extended = load_experiment(_experiment(tmp_path, dialects={"bn": ["chakma"]}))
    assert [i.id for i in get_task("qa_bias")(extended).load_items()] == ["q1"]
