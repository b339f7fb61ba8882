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
