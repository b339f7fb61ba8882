"""docs/scale.md's multi-GPU node example (issue 23 item 5), checked at the config level: the block on the page
is a valid experiment, and the placement table beside it is what each model's Ray Data LLM processor
configuration reserves on a GPU cluster. No GPU, no engine: Ray Data LLM's config classes only."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from scale_helpers import need_ray

from dialectbias.config import load_experiment
from dialectbias.providers._vllm_config import VLLMModelConfig

DOC = Path(__file__).resolve().parents[2] / "docs" / "scale.md"
MARK = "<!-- gpu-node-example -->"


def example(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    text = DOC.read_text(encoding="utf-8")
    assert MARK in text, f"{DOC} lost its {MARK} block"
    block = re.search(r"```yaml\n(.*?)```", text[text.index(MARK):], re.S)
    assert block is not None
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "variants": {"standard": "প্রশ্ন", "sylhet": "ফরশ্ন"}}\n',
                                          encoding="utf-8")
    path = tmp_path / "gpu.yaml"
    path.write_text(block[1], encoding="utf-8")
    return yaml.safe_load(block[1]), path


def placement_table() -> dict[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| model | replicas | tensor × pipeline"):].split("\n\n")[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {r[0]: r[1:] for r in rows}


def bundles_text(bundles: list[dict[str, float]]) -> str:
    first = bundles[0]
    assert all(b == first for b in bundles)
    assert set(first) == {"GPU", "CPU"}
    return f"{len(bundles)} × {{GPU: {first['GPU']:g}, CPU: {first['CPU']:g}}}"


def test_the_example_is_a_valid_experiment(tmp_path: Path) -> None:
    raw, path = example(tmp_path)
    exp = load_experiment(path)
    assert exp.executor == "ray" and exp.ray.num_gpus == 8
    assert [m.id for m in exp.models] == [m["id"] for m in raw["models"]]
    assert all(isinstance(m, VLLMModelConfig) for m in exp.models)
    assert exp.judges[0].replicas == 2


def test_the_placement_table_is_what_each_replica_group_reserves(tmp_path: Path) -> None:
    need_ray()
    from dialectbias.run._ray_vllm import processor_config

    _, path = example(tmp_path)
    exp = load_experiment(path)
    table = placement_table()
    gpus = cpus = 0.0
    for model in exp.models:
        assert isinstance(model, VLLMModelConfig)
        processor = processor_config(model, gpu=True)
        placement = dict(processor.placement_group_config)
        workers = model.tensor_parallel_size * model.pipeline_parallel_size
        # Ray Data LLM's rule (vllm_engine_stage.py): bundle_per_worker is copied once per engine worker
        bundles = [dict(placement["bundle_per_worker"]) for _ in range(workers)]
        assert processor.concurrency == model.replicas
        assert processor.engine_kwargs["tensor_parallel_size"] == model.tensor_parallel_size
        model_gpus = model.replicas * sum(b.get("GPU", 0) for b in bundles)
        model_cpus = model.replicas * sum(b.get("CPU", 0) for b in bundles)
        assert table[model.id] == [str(model.replicas),
                                   f"{model.tensor_parallel_size} × {model.pipeline_parallel_size}",
                                   bundles_text(bundles), f"{model_gpus:g}", f"{model_cpus:g}"], model.id
        gpus, cpus = gpus + model_gpus, cpus + model_cpus
    assert table["total"][-2:] == [f"{gpus:g}", f"{cpus:g}"]
    assert gpus <= (exp.ray.num_gpus or 0) and cpus <= (exp.ray.num_cpus or 0)  # the groups fit side by side


@pytest.mark.parametrize("change", [{"tensor_parallel_size": 0}, {"replicas": 0}, {"gpus_per_replica": -1}])
def test_an_impossible_replica_setting_is_refused_by_the_config(tmp_path: Path, change: dict[str, int]) -> None:
    from dialectbias.errors import ConfigError

    raw, path = example(tmp_path)
    raw["models"][0].update(change)
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError, match=next(iter(change))):
        load_experiment(path)
