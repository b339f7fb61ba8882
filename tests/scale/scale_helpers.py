"""Helpers of the scale tests (imported by name: tests/scale is on sys.path)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

RAY_MISSING = "needs the ray extra: pip install 'dialectbias[ray]' (CI installs it in its scale step)"
VLLM_MISSING = ("needs the vllm extra: pip install 'dialectbias[vllm]' then pip uninstall -y torchvision "
                "torchaudio torchcodec (CI installs it in its scale step)")
VOLATILE = {"latency_s", "completed_at", "cache_hit", "retries"}


def have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(message: str) -> None:
    """Skip, or fail where the extras must be there (CI's scale step sets DIALECTBIAS_REQUIRE_SCALE=1)."""
    if os.environ.get("DIALECTBIAS_REQUIRE_SCALE"):
        pytest.fail(f"DIALECTBIAS_REQUIRE_SCALE is set but this test {message}")
    pytest.skip(message)


def need_ray() -> None:
    if not have("ray"):
        missing(RAY_MISSING)


def need_vllm() -> None:
    if not have("vllm"):
        missing(VLLM_MISSING)


def exported(cli: Any, project: Any, out: Path) -> dict[str, list[dict[str, Any]]]:
    """generations, judgments and reasks of a project's export, sorted by request id, timings left out."""
    result = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    tables = {}
    for name in ("generations", "judgments", "reasks"):
        rows = [json.loads(line) for line in (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
        tables[name] = sorted(({k: v for k, v in row.items() if k not in VOLATILE} for row in rows),
                              key=lambda r: r["request_id"])
    return tables


def write_lora(path: Path, model_folder: Path, scale: float, rank: int = 8) -> Path:
    """A PEFT LoRA adapter for a Llama-style model folder (q_proj and v_proj of every layer), random A;
    B = `scale` × random (0: the adapter changes nothing)."""
    import torch
    from safetensors.torch import save_file

    config = json.loads((model_folder / "config.json").read_text(encoding="utf-8"))
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    kv = config["num_key_value_heads"] * (hidden // config["num_attention_heads"])
    generator = torch.Generator().manual_seed(0)
    tensors = {}
    for i in range(layers):
        for name, out in (("q_proj", hidden), ("v_proj", kv)):
            prefix = f"base_model.model.model.layers.{i}.self_attn.{name}"
            tensors[f"{prefix}.lora_A.weight"] = torch.randn(rank, hidden, generator=generator) * 0.05
            tensors[f"{prefix}.lora_B.weight"] = torch.randn(out, rank, generator=generator) * scale
    path.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path / "adapter_model.safetensors"))
    (path / "adapter_config.json").write_text(json.dumps(
        {"peft_type": "LORA", "r": rank, "lora_alpha": 2 * rank, "target_modules": ["q_proj", "v_proj"],
         "bias": "none", "lora_dropout": 0.0, "task_type": "CAUSAL_LM", "base_model_name_or_path": "base"}),
        encoding="utf-8")
    return path
