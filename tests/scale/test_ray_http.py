"""`executor: ray` over OpenAI-compatible endpoints (Ray actors around the package's client) against the real
local test server on a local Ray (num_cpus=2): the same tables as `executor: local`, re-asks included; a
`kill -9` of the driver midway resumes without loss or duplicates; 20,000 requests, with injected 429s and
500s, lose and duplicate nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from scale_helpers import exported

from dialectbias.api import run_experiment
from run_progress import committed, wait_until

pytestmark = pytest.mark.scale

REASKS = [{"kind": "slow", "delay_s": 0, "match": "Your answer could not be used"}]


def test_ray_gives_the_same_tables_as_local(local_ray: Any, qa: Any, qa_server: Any, cli: Any,
                                            tmp_path: Path) -> None:
    faults = [*REASKS, {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])}]
    tables = {}
    for executor in ("local", "ray"):
        project = qa.make_project(tmp_path / executor, qa_server.base_url, n_items=4)
        project.rewrite(executor=executor)
        qa_server.set_faults(faults)
        result = cli("run", project.yaml_path, "--no-progress")
        assert result.exit_code == 0, result.output
        assert cli("report", project.yaml_path, "--out", tmp_path / f"report-{executor}").exit_code == 0
        tables[executor] = exported(cli, project, tmp_path / f"export-{executor}")
    assert tables["ray"] == tables["local"]
    assert len(tables["ray"]["generations"]) == 24 and len(tables["ray"]["judgments"]) == 16
    assert len(tables["ray"]["reasks"]) == 4  # q01's judgments: invalid JSON first, re-asked through Ray
    for name in ("qa_bias_model_by_dialect.csv", "qa_bias_judge_agreement.csv"):
        local_csv = tmp_path / "report-local" / name
        if local_csv.exists():
            assert (tmp_path / "report-ray" / name).read_text() == local_csv.read_text(), name
    again = run_experiment(project.yaml_path, progress=False)  # resume: nothing left to send
    assert again.calls_made == 0


N_ITEMS = 12
TOTAL = N_ITEMS * 3 * 2 + N_ITEMS * 2 * 2  # 72 generations + 48 judgments
SETTINGS = {"max_concurrency": 2}


def test_kill_9_of_the_driver_midway_resumes_without_loss_or_duplicates(
        local_ray: Any, qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    reference = qa.make_project(tmp_path / "reference", qa_server.base_url, n_items=N_ITEMS, model=SETTINGS,
                                judge=SETTINGS)
    assert cli("run", reference.yaml_path, "--no-progress").exit_code == 0
    clean = exported(cli, reference, tmp_path / "export-reference")

    project = qa.make_project(tmp_path / "killed", qa_server.base_url, n_items=N_ITEMS, model=SETTINGS,
                              judge=SETTINGS)
    # the driver connects to the session's Ray by its address (`ray.address`): the actors it owns die with it
    project.rewrite(executor="ray", ray={"address": local_ray.get_runtime_context().gcs_address, "batch_size": 4})
    qa_server.set_faults([{"kind": "slow", "delay_s": 0.1}])
    proc = subprocess.Popen([*qa.dialectbias_command(), "run", str(project.yaml_path), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=qa.subprocess_env())
    try:
        wait_until(lambda: committed(project.store_path) >= TOTAL * 0.3, proc, timeout=240, interval=0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    done = committed(project.store_path)
    assert 0 < done < TOTAL

    qa_server.set_faults(None)
    result = cli("run", project.yaml_path, "--no-progress", "--yes")
    assert result.exit_code == 0, result.output
    rows = qa.parse_table(result.stdout)  # only what was not committed is sent again
    assert sum(int(r["already done"]) for r in rows) == done
    assert sum(int(r["calls"]) for r in rows) == TOTAL - done
    resumed = exported(cli, project, tmp_path / "export-resumed")
    for name in ("generations", "judgments"):
        ids = [r["request_id"] for r in resumed[name]]
        assert len(ids) == len(set(ids)), f"duplicate {name}"
        assert resumed[name] == clean[name], name


N_MANY = 20_000


def test_20000_requests_lose_and_duplicate_nothing(local_ray: Any, tmp_path: Path) -> None:
    from dialectbias.config import Experiment
    from dialectbias.providers import config_class
    from dialectbias.run import Stage, StageStats
    from dialectbias.run._ray import RayExecutor
    from dialectbias.run._specs import RequestSpec
    from dialectbias.store import Store
    from dialectbias.testing import TestServer

    faults = [{"kind": "429", "every": 97, "retry_after": 0}, {"kind": "500", "every": 89}]
    with TestServer(faults=faults, record_requests=0) as server:
        config = config_class("openai").model_validate(
            {"id": "m", "provider": "openai", "base_url": server.base_url, "model": "m", "max_concurrency": 32,
             "max_retries": 8, "replicas": 2})
        exp = Experiment(name="many", task="qa_bias", models=[config], executor="ray", ray={"batch_size": 200})

        def build(store: Store, model: Any) -> Any:
            for i in range(N_MANY):
                yield RequestSpec(stage="gen", model=model, item_id=f"i{i:05d}", variant="standard", template="t",
                                  messages=[{"role": "user", "content": f"request {i:05d}"}],
                                  params={"max_tokens": 8})

        stage = Stage(name="gen", models=[config], build=build)
        with Store.open(tmp_path / "many.sqlite") as store:
            store.add_requests((spec.to_row() for spec in build(store, config)), current=("gen", "m"))
            stats = {"m": StageStats(stage="gen", model_id="m", total=N_MANY)}
            executor = RayExecutor(exp)
            started = time.perf_counter()

            async def go() -> None:
                await executor.prepare(stage, store)
                await executor.run_stage(stage, store, stats, lambda *_: None)
                await executor.aclose()

            import asyncio

            asyncio.run(go())
            seconds = time.perf_counter() - started
            rows = store.query("SELECT r.item_id, s.status, s.output FROM requests r JOIN results s "
                               "USING (request_id) WHERE r.stage='gen'")
            served = server.stats()
    assert len(rows) == N_MANY and {status for _, status, _ in rows} == {"ok"}
    assert len({item for item, _, _ in rows}) == N_MANY
    # each answer is the echo of its own request: nothing mixed up between requests
    assert all(output == f"answer[m]: request {item[1:]}" for item, _, output in rows)
    # every request answered once (faulted attempts are not answers): no duplicate sends
    assert served["responses_ok"] == N_MANY
    assert served["faults_total"] > 300 and stats["m"].retries == served["faults_total"]
    assert stats["m"].calls == N_MANY and stats["m"].failed == 0
    print(f"20,000 requests through Ray actors in {seconds:.1f} s ({N_MANY / seconds:.0f} requests/s)")


def test_inside_a_ray_worker_the_existing_connection_is_used(local_ray: Any, tmp_path: Path) -> None:
    from dialectbias.config import Experiment
    from dialectbias.providers import config_class

    config = config_class("openai").model_validate({"id": "m", "provider": "openai", "model": "m",
                                                    "base_url": "http://127.0.0.1:9/v1"})
    exp = Experiment(name="inner", task="qa_bias", models=[config], executor="ray", ray={"num_cpus": 1})

    @local_ray.remote(num_cpus=0)
    def connect_inside() -> tuple[bool, bool]:
        import ray

        from dialectbias.run._ray import connect

        return connect(exp), ray.is_initialized()

    assert local_ray.get(connect_inside.remote(), timeout=120) == (False, True)  # nothing started, still up


def test_a_vllm_model_gets_its_own_replica_group(local_ray: Any, tmp_path: Path) -> None:
    """The processor config of a `vllm` model: replicas, parallel sizes, LoRA, and on a CPU-only cluster
    one CPU bundle per engine worker (else Ray Data LLM waits for a GPU), metrics off, light CPU stages."""
    from scale_helpers import need_vllm

    need_vllm()
    from dialectbias.providers import ChatRequest, config_class
    from dialectbias.run._ray_vllm import VLLMPass, processor_config

    adapter = tmp_path / "adapters" / "bn-lora"
    config = config_class("vllm").model_validate(
        {"id": "v", "provider": "vllm", "model": "/models/x", "replicas": 3, "pipeline_parallel_size": 2,
         "batch_size": 32, "lora": str(adapter), "cpus_per_replica": 2})
    cpu = processor_config(config, gpu=False)
    assert (cpu.model_source, cpu.concurrency, cpu.batch_size) == ("/models/x", 3, 32)
    nonzero = [{k: v for k, v in bundle.items() if v} for bundle in cpu.placement_group_config["bundles"]]
    assert nonzero == [{"CPU": 2.0}, {"CPU": 2.0}]  # one bundle per engine worker (pipeline 2), no GPU
    assert cpu.engine_kwargs["pipeline_parallel_size"] == 2 and cpu.engine_kwargs["enable_lora"] is True
    assert cpu.dynamic_lora_loading_path == str(adapter.parent)
    assert cpu.log_engine_metrics is False and cpu.should_continue_on_error is True
    gpu = processor_config(config, gpu=True)
    assert gpu.placement_group_config["bundle_per_worker"] == {"GPU": 1.0, "CPU": 2.0}
    row = VLLMPass(config).request_payload("id-1", ChatRequest(messages=[{"role": "user", "content": "hi"}]))
    assert (row["db_id"], row["lora"], json.loads(row["messages"])) == ("id-1", "bn-lora",
                                                                       [{"role": "user", "content": "hi"}])


def test_the_driver_sends_a_page_at_a_time_with_its_reasks(local_ray: Any, qa: Any, qa_server: Any, cli: Any,
                                                             tmp_path: Path, monkeypatch: Any) -> None:
    """Streaming (issue 23 item 3): the driver reads and sends a model's pending requests a page at a time
    (re-asks with their page), so it never holds more than a page; every request is still answered once."""
    from dialectbias.run import _ray_http

    sizes: list[int] = []
    results = _ray_http.HTTPPass.results

    def recording(self: Any, payloads: list[dict[str, Any]], stats: Any) -> Any:
        sizes.append(len(payloads))
        return results(self, payloads, stats)

    monkeypatch.setattr(_ray_http.HTTPPass, "page_size", 5)
    monkeypatch.setattr(_ray_http.HTTPPass, "results", recording)
    faults = [*REASKS, {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])}]
    qa_server.set_faults(faults)
    qa_server.reset_stats()
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=4)
    project.rewrite(executor="ray")
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    tables = exported(cli, project, tmp_path / "export")
    assert len(tables["generations"]) == 24 and len(tables["judgments"]) == 16 and len(tables["reasks"]) == 4
    assert max(sizes) <= 5 and sum(sizes) == 24 + 16 + 4, sizes  # pages of 5 and the re-asks, each sent once
    assert qa_server.stats()["chat_requests"] == 24 + 16 + 4
