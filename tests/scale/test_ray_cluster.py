"""`executor: ray` on a cluster that has Ray but not dialectbias (issue 23): two raylets started from a
Ray-only venv; the run ships the code in its `runtime_env` and answers every request exactly once. An
unreachable `ray.address` is one clear error within seconds. The models of a stage run side by side."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ray_cluster import free_port, ray_only_python, two_raylets
from scale_helpers import need_ray

pytestmark = pytest.mark.scale

#: run by the test's own driver on the two-raylet cluster: a worker without the runtime_env cannot import
#: dialectbias (the cluster has none); with the run's runtime_env it imports the shipped copy
PROBE = """
import json, sys
import ray
from dialectbias.run._ray_ship import runtime_env

def where():
    out = {}
    for name in ("dialectbias", "pydantic", "aiohttp", "rich"):
        try:
            out[name] = __import__(name).__file__
        except ImportError:
            out[name] = None
    return out

found = {}
for name, env in (("bare", None), ("shipped", runtime_env())):
    ray.init(address=sys.argv[1], log_to_driver=False, runtime_env=env)
    found[name] = ray.get(ray.remote(num_cpus=0)(where).remote(), timeout=300)
    ray.shutdown()
print(json.dumps(found))
"""


def _store_counts(store: Path) -> dict[str, Any]:
    with sqlite3.connect(store) as db:
        per_model = dict(db.execute("SELECT r.model_id, count(*) FROM requests r JOIN results s USING (request_id)"
                                    " WHERE s.status = 'ok' AND s.cache_hit = 0 GROUP BY r.model_id").fetchall())
        missing = db.execute("SELECT count(*) FROM requests r LEFT JOIN results s USING (request_id) "
                             "WHERE s.request_id IS NULL OR s.status != 'ok'").fetchone()[0]
    return {"per_model": per_model, "missing": missing}


def test_a_cluster_with_only_ray_answers_every_request_exactly_once(qa: Any, qa_server: Any,
                                                                    tmp_path: Path) -> None:
    need_ray()
    python = ray_only_python()
    with two_raylets(python) as cluster:
        address = cluster.address
        env = qa.subprocess_env(**cluster.auth)
        env.pop("RAY_ADDRESS", None)
        probe = subprocess.run([sys.executable, "-c", PROBE, address], capture_output=True, text=True, env=env,
                               cwd=tmp_path, timeout=600)
        assert probe.returncode == 0, probe.stderr[-3000:]
        found = json.loads(probe.stdout.strip().splitlines()[-1])
        assert found["bare"]["dialectbias"] is None and found["bare"]["pydantic"] is None, found
        src = str(Path(__file__).resolve().parents[2] / "src")
        for name, path in found["shipped"].items():  # the shipped copies, unpacked by Ray, not this checkout
            assert path is not None and "runtime_resources" in path and not path.startswith(src), (name, path)

        project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=4)
        project.rewrite(executor="ray", ray={"address": address, "batch_size": 4})
        started = time.perf_counter()
        run = subprocess.run([*qa.dialectbias_command(), "run", str(project.yaml_path), "--no-progress", "--yes"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        seconds = time.perf_counter() - started
        assert run.returncode == 0, run.stdout + run.stderr[-3000:]

        # a driver without the cluster's token (and no ~/.ray/auth_token): one message naming the address
        tokenless = {k: v for k, v in env.items() if not k.startswith("RAY_AUTH")} | {"HOME": str(tmp_path)}
        other = qa.make_project(tmp_path / "tokenless", qa_server.base_url, n_items=1)
        other.rewrite(executor="ray", ray={"address": address})
        refused = subprocess.run([*qa.dialectbias_command(), "run", str(other.yaml_path), "--no-progress"],
                                 capture_output=True, text=True, env=tokenless, cwd=tmp_path, timeout=300)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        last = refused.stderr.strip().splitlines()[-1]
        assert f"cannot connect to the Ray cluster {address!r}" in last and "RAY_AUTH_MODE=token" in last, last
    counts = _store_counts(project.store_path)
    served = qa_server.stats()
    assert counts["missing"] == 0
    # 4 items × 3 dialects per model; 2 × 8 judgments
    assert counts["per_model"] == {"model-a": 12, "model-b": 12, "judge-1": 16}
    assert served["chat_by_model"] == {"model-a": 12, "model-b": 12, "judge-model": 16}  # each sent once
    assert served["responses_ok"] == 40 and served["faults_total"] == 0
    print(f"two-raylet run of 40 requests (runtime_env upload and actor starts included): {seconds:.1f} s")


@pytest.mark.parametrize("address", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}"])
def test_an_unreachable_address_is_one_clear_error_within_seconds(address: str, qa: Any, qa_server: Any,
                                                                  tmp_path: Path) -> None:
    need_ray()
    address = address.format(port=free_port())  # nothing listens there
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=1)
    project.rewrite(executor="ray", ray={"address": address})
    started = time.perf_counter()
    run = subprocess.run([*qa.dialectbias_command(), "run", str(project.yaml_path), "--no-progress", "--yes"],
                         capture_output=True, text=True, env=qa.subprocess_env(), cwd=tmp_path, timeout=120)
    seconds = time.perf_counter() - started
    assert run.returncode != 0
    assert f"cannot reach the Ray cluster at {address!r} (Connection refused)" in run.stderr
    assert f"{project.yaml_path.name}:" in run.stderr  # names the file and line of ray.address
    assert "Traceback" not in run.stderr
    assert qa_server.stats()["chat_requests"] == 0
    assert seconds < 20, seconds  # the process start and imports included; measured 3-6 s on 2 shared cores
    print(f"unreachable {address}: error after {seconds:.1f} s")


def test_the_models_of_a_stage_run_side_by_side(local_ray: Any, qa: Any, qa_server: Any, cli: Any,
                                                tmp_path: Path) -> None:
    """One actor per model, one request at a time each: requests in flight at once at the server can only
    exceed 1 when the two models (and the judge stage's model) overlap in time."""
    one = {"max_concurrency": 1}
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=4, model=one, judge=one)
    project.rewrite(executor="ray", ray={"batch_size": 2})
    qa_server.set_faults([{"kind": "slow", "delay_s": 0.3}])
    started = time.perf_counter()
    result = cli("run", project.yaml_path, "--no-progress", "--yes")
    seconds = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    served = qa_server.stats()
    assert served["chat_by_model"] == {"model-a": 12, "model-b": 12, "judge-model": 16}
    assert served["max_in_flight"] == 2  # the two models side by side, each one at a time
    # one model after the other, the slow calls alone take (24 + 16) × 0.3 s; side by side (12 + 16) × 0.3 s
    print(f"40 slow (0.3 s) calls, 2 models side by side: {seconds:.1f} s (one after the other ≥ 12.0 s)")


def test_replica_groups_are_packed_into_the_cluster(tmp_path: Path) -> None:
    from dialectbias.providers import config_class
    from dialectbias.run._ray import waves

    def http(i: int) -> Any:
        return config_class("openai").model_validate({"id": f"h{i}", "provider": "openai", "model": "m",
                                                      "base_url": "http://127.0.0.1:9/v1"})

    demands = {"h0": {}, "h1": {}, "v2": {"CPU": 2.1}, "v3": {"CPU": 2.1}, "v4": {"CPU": 9.0}, "v5": {"CPU": 1.0}}
    configs = [http(0), http(1)] + [http(i).model_copy(update={"id": f"v{i}"}) for i in (2, 3, 4, 5)]
    groups = waves(configs, {"CPU": 5.0}, lambda c: demands[c.id])
    # first fit, in order: v5 fits neither the first wave (4.2 + 1 CPUs > 5) nor v4's (larger than the cluster)
    assert [[c.id for c in group] for group in groups] == [["h0", "h1", "v2", "v3"], ["v4"], ["v5"]]
    assert [[c.id for c in g] for g in waves(configs[:2], {}, lambda c: {})] == [["h0", "h1"]]


def test_the_vllm_replica_group_demand(tmp_path: Path) -> None:
    from scale_helpers import need_vllm

    need_vllm()
    from dialectbias.providers import config_class
    from dialectbias.run._ray_vllm import replica_group_demand

    config = config_class("vllm").model_validate({"id": "v", "provider": "vllm", "model": "/models/x",
                                                  "replicas": 2, "tensor_parallel_size": 2, "cpus_per_replica": 2})
    assert replica_group_demand(config, gpu=False) == pytest.approx({"CPU": 8.3})
    assert replica_group_demand(config, gpu=True) == pytest.approx({"CPU": 8.3, "GPU": 4.0})
