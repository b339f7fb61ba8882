"""Serving a LoRA adapter with `provider: hf`: the adapter's content hash in the model identity (cache key),
`prompt_format: raw` sending the text verbatim, and clear errors (no peft, no adapter folder); the translate
task's `options.prompt: instruction` checks."""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path

import pytest
import yaml

from dialectbias.errors import ConfigError
from dialectbias.providers._hf_config import HFModelConfig, adapter_digest, check_adapter, create


def fake_adapter(folder: Path, weights: bytes = b"w1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adapter_config.json").write_bytes(b'{"r": 16}')
    (folder / "adapter_model.safetensors").write_bytes(weights)
    return folder


def test_identity_without_adapter_is_unchanged() -> None:
    identity = HFModelConfig(id="m", model="/models/x").identity()
    assert set(identity) == {"provider", "model", "params", "structured_output", "dtype", "constrained_decoding"}


def test_adapter_hash_is_in_the_identity(tmp_path: Path) -> None:
    folder = fake_adapter(tmp_path / "a")
    expected = hashlib.sha256(b"adapter_config.json\0" + b'{"r": 16}' + b"adapter_model.safetensors\0" + b"w1")
    assert adapter_digest(folder) == expected.hexdigest()
    config = HFModelConfig(id="m", model="/models/x", adapter=str(folder), prompt_format="raw")
    first = config.identity()
    assert first["adapter"] == str(folder) and first["adapter_sha256"] == expected.hexdigest()
    assert first["prompt_format"] == "raw"
    # retrained: new weights, a new identity (so no cached output is reused); merging is not part of it
    (folder / "adapter_model.safetensors").write_bytes(b"w2-longer")
    assert config.identity()["adapter_sha256"] != first["adapter_sha256"]
    merged = HFModelConfig(id="m", model="/models/x", adapter=str(folder), prompt_format="raw", adapter_merge=True)
    assert merged.identity() == config.identity()
    assert adapter_digest(tmp_path / "missing") == "missing"


def test_adapter_errors_name_the_model_and_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"model 'm': adapter .*missing: folder not found"):
        check_adapter(HFModelConfig(id="m", model="x", adapter=str(tmp_path / "missing")))
    with pytest.raises(ConfigError, match=r"no adapter_config\.json"):
        check_adapter(HFModelConfig(id="m", model="x", adapter=str(tmp_path)))
    monkeypatch.setitem(sys.modules, "peft", None)
    config = HFModelConfig(id="m", model="x", adapter=str(fake_adapter(tmp_path / "a")))
    with pytest.raises(ConfigError, match=r"model 'm': `adapter:` needs peft.*dialectbias\[train\]"):
        create(config)


def test_raw_prompt_is_sent_verbatim(tiny_base: Path) -> None:
    pytest.importorskip("torch")
    from dialectbias.providers._base import ChatRequest
    from dialectbias.providers._hf import HFModel

    text = "Translate the following standard Bengali to Sylhet dialect: Standard Bengali: আমি ভাত খাই। Sylhet dialect:"
    request = ChatRequest(messages=[{"role": "user", "content": text}], params={"max_tokens": 2})

    async def main() -> None:
        raw = HFModel(HFModelConfig(id="raw", model=str(tiny_base), prompt_format="raw", num_threads=1))
        chat = HFModel(HFModelConfig(id="chat", model=str(tiny_base), num_threads=1))
        try:
            a, b = await raw.complete(request), await chat.complete(request)
            assert raw.tokenizer.chat_template  # the template exists and is bypassed
            assert a.tokens_in == len(raw.tokenizer(text, add_special_tokens=True)["input_ids"])
            templated = raw.tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                                          add_generation_prompt=True, tokenize=False)
            assert b.tokens_in == len(raw.tokenizer(templated, add_special_tokens=False)["input_ids"]) > a.tokens_in
        finally:
            await raw.aclose()
            await chat.aclose()

    asyncio.run(main())


def _translate_exp(tmp_path: Path, translator: dict[str, object], targets: list[str]) -> Path:
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "variants": {"standard": "তোমার নাম কী?"}}\n',
                                          encoding="utf-8")
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "task": "translate", "data": "items.jsonl",
                                    "roles": {"translator": translator},
                                    "options": {"targets": targets, "prompt": "instruction"}}), encoding="utf-8")
    return path


def test_instruction_prompt_checks(tmp_path: Path) -> None:
    from dialectbias.api import open_experiment

    hf = {"provider": "hf", "model": "/models/x", "prompt_format": "raw"}
    with pytest.raises(ConfigError, match=r"dialects only.*english: not a dialect"):
        open_experiment(_translate_exp(tmp_path, hf, ["sylhet", "english"]))
    with pytest.raises(ConfigError, match="set `prompt_format: raw` on the translator 'translator'"):
        open_experiment(_translate_exp(tmp_path, {"provider": "hf", "model": "/models/x"}, ["sylhet"]))
    open_experiment(_translate_exp(tmp_path, hf, ["sylhet"]))
    # an HTTP translator takes the instruction through its chat API (e.g. vLLM serving the adapter)
    open_experiment(_translate_exp(tmp_path, {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
                                              "model": "m"}, ["sylhet"]))
