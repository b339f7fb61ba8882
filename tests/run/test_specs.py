"""Request specs: stable request ids (SPEC §5) and cache keys shared by identical calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from dialectbias.judges import rlaif_json_schema
from dialectbias.providers import config_class, create_model
from dialectbias.providers._hf_config import HFModelConfig
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec, content_hash, draw_seed
from dialectbias.store import Store, dumps

MODEL = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1")
MESSAGES = [{"role": "user", "content": "ঢাকা জেলার প্রধান নদীর নাম কী?"}]


def spec(**changes) -> RequestSpec:
    fields = {"stage": "generate", "model": MODEL, "item_id": "q1", "variant": "sylhet",
              "template": "qa_bias/answer", "messages": MESSAGES, "params": {"temperature": 0,
                                                                             "max_tokens": 64}}
    return RequestSpec(**{**fields, **changes})


BUILD = """
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
m = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1")
s = RequestSpec(stage="generate", model=m, item_id="q1", variant="sylhet", template="qa_bias/answer",
                messages=[{"role": "user", "content": "ঢাকা জেলার প্রধান নদীর নাম কী?"}],
                params={"max_tokens": 64, "temperature": 0})
print(s.request_id(), s.cache_key())
"""


def test_request_id_is_stable_across_processes() -> None:
    env_seed = {"PYTHONHASHSEED": "12345"}  # a different str-hash seed must not matter
    out = subprocess.run([sys.executable, "-c", BUILD], capture_output=True, text=True, check=True,
                         env={**os.environ, **env_seed}).stdout.split()
    assert out == [spec().request_id(), spec().cache_key()]


def test_content_hash_is_of_canonical_json() -> None:
    assert content_hash({"b": 1, "a": "ক"}) == content_hash({"a": "ক", "b": 1})
    assert content_hash({"a": 1}) != content_hash({"a": "1"})
    assert len(content_hash({})) == 32


def test_request_id_ignores_param_order() -> None:
    assert spec(params={"max_tokens": 64, "temperature": 0}).request_id() == spec().request_id()


def test_request_id_changes_with_messages() -> None:
    other = [{"role": "user", "content": "খুলনা জেলার প্রধান নদীর নাম কী?"}]
    assert spec(messages=other).request_id() != spec().request_id()


def test_request_id_changes_with_params() -> None:
    assert spec(params={"temperature": 0.7, "max_tokens": 64}).request_id() != spec().request_id()


def test_request_id_changes_with_schema() -> None:
    assert spec(json_schema=rlaif_json_schema()).request_id() != spec().request_id()


def test_request_id_changes_with_the_model_name() -> None:
    other = MODEL.model_copy(update={"model": "other-model"})
    assert spec(model=other).request_id() != spec().request_id()
    assert spec(model=other).cache_key() != spec().cache_key()


def test_request_id_changes_with_the_model_id() -> None:
    alias = MODEL.model_copy(update={"id": "m2"})  # same model under another id: same cache, own rows
    assert spec(model=alias).request_id() != spec().request_id()
    assert spec(model=alias).cache_key() == spec().cache_key()


def test_request_id_ignores_transport_settings() -> None:
    tuned = MODEL.model_copy(update={"max_concurrency": 2, "timeout_s": 5, "max_retries": 0,
                                     "base_url": "http://127.0.0.1:2/v1"})
    assert spec(model=tuned).request_id() == spec().request_id()


def test_cache_key_is_shared_by_identical_calls_of_different_items() -> None:
    a, b = spec(item_id="q1"), spec(item_id="q2")
    assert a.cache_key() == b.cache_key()
    assert a.request_id() != b.request_id()


def test_request_id_depends_on_variant_stage_and_refs() -> None:
    base = spec().request_id()
    assert spec(variant="chittagong").request_id() != base
    assert spec(stage="judge").request_id() != base
    assert spec(refs=["x", "y"]).request_id() != base


def test_row_has_everything_needed_to_send() -> None:
    row = spec(json_schema={"type": "object"}).to_row()
    assert row["request_id"] == spec(json_schema={"type": "object"}).request_id()
    assert row["prompt_hash"] == content_hash(MESSAGES)
    assert "ঢাকা" in row["messages"]  # stored as UTF-8 JSON
    assert row["json_schema"] == '{"type":"object"}'


def test_schema_property_order_survives_the_request_table(tmp_path) -> None:
    """The judge must see `chain_of_thought_reasoning` first: the stored schema keeps property order (it is
    stored once by reference and comes back whole from `pending_requests`)."""
    spec = RequestSpec(stage="judge", model=MODEL, item_id="q1", variant="sylhet", template="t",
                       messages=[{"role": "user", "content": "x"}], json_schema=rlaif_json_schema())
    with Store.open(tmp_path / "s.sqlite") as store:
        store.add_requests([spec.to_row()])
        stored = json.loads(store.pending_requests("judge", "m")[0]["json_schema"])
    assert list(stored["properties"]) == list(rlaif_json_schema()["properties"])
    assert next(iter(stored["properties"])) == "chain_of_thought_reasoning"


# -- the model identity in the cache key (issue 6.6) ------------------------------------------------------

HF = HFModelConfig(id="h", model="/models/smollm2")


def hf_spec(model: HFModelConfig) -> RequestSpec:
    return spec(model=model)


@pytest.mark.parametrize("change", [{"gguf_file": "smollm2-q8.gguf"}, {"dtype": "bfloat16"},
                                    {"constrained_decoding": "none"}, {"params": {"temperature": 0.7}},
                                    {"structured_output": "json_object"}])
def test_hf_configs_differing_in_an_output_setting_do_not_share_the_cache(change: dict[str, Any]) -> None:
    """Two hf models in one folder (another GGUF file, dtype …) must never share cached outputs."""
    other = HF.model_copy(update=change)
    assert hf_spec(other).cache_key() != hf_spec(HF).cache_key()
    assert hf_spec(other).request_id() != hf_spec(HF).request_id()


def test_two_gguf_files_in_one_folder_get_their_own_keys() -> None:
    a = HFModelConfig(id="a", model="/models/smollm2", gguf_file="q4.gguf")
    b = HFModelConfig(id="a", model="/models/smollm2", gguf_file="q8.gguf")
    assert hf_spec(a).cache_key() != hf_spec(b).cache_key()


class _AdapterConfig(HFModelConfig):
    """A provider plug-in adding output-affecting fields: they are in the identity without any code."""

    revision: str | None = None
    adapter: str | None = None


@pytest.mark.parametrize("change", [{"revision": "v2"}, {"adapter": "lora/sylhet"}])
def test_a_new_output_setting_of_a_provider_is_in_the_identity_by_default(change: dict[str, Any]) -> None:
    base = _AdapterConfig(id="h", model="/models/smollm2")
    assert hf_spec(base.model_copy(update=change)).cache_key() != hf_spec(base).cache_key()
    assert base.identity() == HF.identity()  # unset optional fields leave existing keys unchanged


def test_the_same_config_gives_the_same_key() -> None:
    again = HFModelConfig(id="h", model="/models/smollm2")
    assert hf_spec(again).cache_key() == hf_spec(HF).cache_key()
    assert hf_spec(again).request_id() == hf_spec(HF).request_id()


def test_hf_execution_settings_keep_the_cache() -> None:
    tuned = HF.model_copy(update={"batch_size": 32, "num_threads": 1, "batch_wait_s": 0.5, "device": "cuda:1",
                                  "max_concurrency": 8, "timeout_s": 3, "family": "SmolLM2", "params_b": 0.135})
    assert hf_spec(tuned).request_id() == hf_spec(HF).request_id()


def test_secrets_and_the_url_are_not_in_the_key_input() -> None:
    keyed = OpenAIModelConfig(id="m", model="test-model", api_key_env="DB_SECRET_KEY_NAME",
                              base_url="https://user:pa55word@127.0.0.1:1/v1?key=sk-query-secret")
    identity = dumps(keyed.identity())
    for secret in ("DB_SECRET_KEY_NAME", "pa55word", "sk-query-secret", "127.0.0.1"):
        assert secret not in identity
    assert spec(model=keyed).cache_key() == spec().cache_key()
    assert json.loads(identity) == {"provider": "openai", "model": "test-model", "params": {},
                                    "structured_output": "json_schema"}


def test_the_provider_client_reports_the_config_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_TEST_IDENTITY_KEY", "sk-never-in-identity")
    config = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1",
                               api_key_env="DB_TEST_IDENTITY_KEY", params={"top_p": 0.9})
    client = create_model(config)
    assert client.identity() == config.identity()
    assert "sk-never-in-identity" not in dumps(client.identity())


def test_a_draw_has_its_own_cache_entry_and_seed() -> None:
    """Repeated samples of one prompt (issue 19): each draw is its own request and cache entry, and carries its
    seed where the provider takes one per request."""
    one, two = spec(draw=draw_seed(0, "q1", "1")), spec(draw=draw_seed(0, "q1", "2"))
    assert one.draw != two.draw and one.draw == draw_seed(0, "q1", "1")
    assert one.cache_key() != two.cache_key() and one.request_id() != two.request_id()
    assert one.chat_request().params["seed"] == one.draw and json.loads(one.to_row()["params"])["seed"] == one.draw
    assert spec().cache_key() == spec(draw=None).cache_key()  # a task that does not sample keeps its keys


def test_a_draw_sends_no_seed_to_a_provider_without_per_request_seeds() -> None:
    vllm = config_class("vllm").model_validate({"id": "v", "provider": "vllm", "model": "/models/x"})
    one, two = spec(model=vllm, draw=1), spec(model=vllm, draw=2)
    assert "seed" not in one.chat_request().params and one.to_row()["params"] == two.to_row()["params"]
    assert one.cache_key() != two.cache_key()  # still two draws


def test_per_request_seed_is_not_in_the_identity_but_drops_the_draws_seed() -> None:
    """Existing stores keep their keys; a model whose server takes no seed gets none (its draws stay apart)."""
    unseeded = MODEL.model_copy(update={"per_request_seed": False})
    assert unseeded.identity() == MODEL.identity() and spec(model=unseeded).cache_key() == spec().cache_key()
    one, two = spec(model=unseeded, draw=1), spec(model=unseeded, draw=2)
    assert "seed" not in one.chat_request().params and one.cache_key() != two.cache_key()
