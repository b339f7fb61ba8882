"""`train_translator` on the tiny random Llama (CPU, a few steps): the loss goes down, the adapter saves,
reloads through `provider: hf` (its outputs differ from the base model's) and generates; training.json records
the recipe, the counts and the held-out split; a killed training resumes and continues the step count; every
failure is one clear message."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from dialectbias.data import load_corpus
from dialectbias.errors import ConfigError, DataError
from dialectbias.providers._base import ChatRequest
from dialectbias.providers._hf import HFModel
from dialectbias.providers._hf_config import HFModelConfig
from dialectbias.train import (
    TRAINING_JSON,
    TranslatorTrainConfig,
    checkpoints,
    instruction_prompt,
    pair_examples,
    split_examples,
    train_translator,
)
from tiny_llm import write_corpus

#: a learning rate high enough for a visible drop in 8 steps on the tiny model (the recipe's is 2e-4)
FAST = {"gradient_accumulation_steps": 1, "micro_batch_size": 4, "learning_rate": 1e-2, "logging_steps": 1,
        "num_threads": 1}


@pytest.fixture(scope="module")
def trained(tiny_base: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("adapter")
    record = train_translator(corpus, tiny_base, out, TranslatorTrainConfig(max_steps=8, save_steps=4, **FAST))
    return out, record


def test_loss_goes_down_and_everything_is_written(trained: tuple[Path, dict[str, Any]], corpus: Path) -> None:
    out, record = trained
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    assert (out / "tokenizer_config.json").is_file()
    assert json.loads((out / TRAINING_JSON).read_text(encoding="utf-8")) == record
    losses = [e["loss"] for e in record["loss"]["train"]]
    assert len(losses) == 8 and losses[-1] < losses[0] - 0.3, losses
    assert record["loss"]["eval"] and record["final_eval_loss"] == record["loss"]["eval"][-1]["eval_loss"]
    assert record["global_step"] == 8 and record["resumed_from"] is None
    cfg = record["config"]  # the recipe's defaults where the test did not override them
    assert (cfg["lora_r"], cfg["lora_alpha"], cfg["lora_dropout"], cfg["max_length"], cfg["epochs"]) == (
        16, 32, 0.1, 512, 3.0)
    assert record["lora_target_modules"] == ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                             "down_proj"]
    assert record["fp16"] is False and record["device"] == "cpu"
    data = record["data"]
    assert data["skipped"] == {"dialect text = standard text": 2}
    assert (data["train_examples"], data["eval_examples"], data["eval_groups"]) == (16, 4, 2)
    held = split_examples(pair_examples(load_corpus(corpus)).examples, 0.2, 0)[1]
    assert record["held_out"]["example_ids"] == sorted(e.id for e in held)
    assert set(record["versions"]) >= {"torch", "transformers", "peft"}
    assert [p.name for p in checkpoints(out)] == ["checkpoint-4", "checkpoint-8"]


def test_adapter_reloads_differs_from_base_and_generates(trained: tuple[Path, dict[str, Any]],
                                                         tiny_base: Path) -> None:
    out, _ = trained
    prompt = instruction_prompt("Bengali", "Sylhet", "তোমার নাম কী?")
    request = ChatRequest(messages=[{"role": "user", "content": prompt}], params={"max_tokens": 8})

    async def main() -> None:
        base = HFModel(HFModelConfig(id="base", model=str(tiny_base), prompt_format="raw", num_threads=1))
        lora = HFModel(HFModelConfig(id="lora", model=str(tiny_base), adapter=str(out), prompt_format="raw",
                                     num_threads=1))
        try:
            a, b = await base.complete(request), await lora.complete(request)
            assert type(lora.model).__name__ == "PeftForCausalLM" or hasattr(lora.model, "peft_config")
            assert b.tokens_out > 0 and b.output != a.output
            import torch

            ids = base.tokenizer(prompt, return_tensors="pt")
            with torch.inference_mode():
                delta = (base.model(**ids).logits - lora.model(**ids).logits).abs().max().item()
            assert delta > 1e-3
        finally:
            await base.aclose()
            await lora.aclose()

    asyncio.run(main())


class Interrupt:
    """Fault injection: Ctrl-C after optimizer step `at` (a checkpoint was saved before it)."""

    def __init__(self, at: int) -> None:
        from transformers import TrainerCallback

        class _Cb(TrainerCallback):  # type: ignore[misc]
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                if state.global_step == at:
                    raise KeyboardInterrupt

        self.callback = _Cb()


def test_killed_training_resumes_and_continues_the_step_count(tiny_base: Path, corpus: Path,
                                                               tmp_path: Path) -> None:
    config = TranslatorTrainConfig(max_steps=5, save_steps=2, **FAST)
    with pytest.raises(KeyboardInterrupt):
        train_translator(corpus, tiny_base, tmp_path, config, callbacks=[Interrupt(3).callback])
    assert [p.name for p in checkpoints(tmp_path)] == ["checkpoint-2"]
    assert not (tmp_path / "adapter_model.safetensors").exists()
    with pytest.raises(ConfigError, match="--resume"):
        train_translator(corpus, tiny_base, tmp_path, config)
    cut = tmp_path / "checkpoint-10"  # a kill while saving: no trainer_state.json (the Trainer writes it last)
    cut.mkdir()
    (cut / "adapter_model.safetensors").write_bytes(b"partial")
    assert [p.name for p in checkpoints(tmp_path, complete=False)] == ["checkpoint-2", "checkpoint-10"]
    lines: list[str] = []
    record = train_translator(corpus, tiny_base, tmp_path, config, resume=True, log=lines.append)
    assert record["resumed_from"] == "checkpoint-2" and record["global_step"] == 5
    assert not cut.exists() and any("removed checkpoint-10: incomplete" in line for line in lines)
    assert [e["step"] for e in record["loss"]["train"]] == [1, 2, 3, 4, 5]
    assert (tmp_path / "adapter_model.safetensors").is_file()


def test_failures_are_one_clear_message(tiny_base: Path, corpus: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"--base-model .*folder not found"):
        train_translator(corpus, tmp_path / "nope", tmp_path / "a")
    with pytest.raises(ConfigError, match=r"no config\.json"):
        train_translator(corpus, tmp_path, tmp_path / "a")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"--base-model .*broken: cannot load"):
        train_translator(corpus, tmp_path / "broken", tmp_path / "a")
    with pytest.raises(ConfigError, match="no complete checkpoint"):
        train_translator(corpus, tiny_base, tmp_path / "a", resume=True)
    with pytest.raises(DataError, match=r"no training pairs after the filters .*2 dialect text = standard text"):
        train_translator(write_corpus(tmp_path / "same", rows=[("একই", "একই", "একই")]), tiny_base, tmp_path / "a")
    with pytest.raises(DataError, match="--dialect noakhali: not in the corpus"):
        train_translator(corpus, tiny_base, tmp_path / "a", TranslatorTrainConfig(dialects=["noakhali"]))
    with pytest.raises(ConfigError, match="none of the LoRA target modules"):
        train_translator(corpus, tiny_base, tmp_path / "a", TranslatorTrainConfig(target_modules=["c_attn"], **FAST))
    monkeypatch.setitem(sys.modules, "peft", None)
    with pytest.raises(ConfigError, match="install the `train` extra"):
        train_translator(corpus, tiny_base, tmp_path / "a")


def test_cli(cli: Any, tiny_base: Path, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    result = cli("train-translator", corpus, "--base-model", tiny_base, "--out", out, "--max-steps", "2",
                 "--grad-accum", "1", "--logging-steps", "1", "--dialect", "sylhet", "--num-threads", "1")
    assert result.exit_code == 0, result.output
    assert "2 steps" in result.stdout and "train loss" in result.stdout
    assert "left out: 2 dialect text = standard text, 10 other dialect (--dialect)" in result.stdout
    record = json.loads((out / TRAINING_JSON).read_text(encoding="utf-8"))
    assert record["data"]["per_dialect"] == {"sylhet": 10} and record["config"]["dialects"] == ["sylhet"]
    again = cli("train-translator", corpus, "--base-model", tiny_base, "--out", out)
    assert again.exit_code == 1 and "already holds checkpoints" in again.stderr and "Traceback" not in again.output
    # --recipe: any recipe key from a YAML file; the command-line options win
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("target_modules: [q_proj, v_proj]\nlr_scheduler: cosine\nlearning_rate: 0.5\n", encoding="utf-8")
    mine = cli("train-translator", corpus, "--base-model", tiny_base, "--out", tmp_path / "recipe", "--recipe", recipe,
               "--learning-rate", "0.01", "--max-steps", "1", "--grad-accum", "1", "--num-threads", "1")
    assert mine.exit_code == 0, mine.output
    record = json.loads((tmp_path / "recipe" / TRAINING_JSON).read_text(encoding="utf-8"))
    assert record["lora_target_modules"] == ["q_proj", "v_proj"]
    assert (record["config"]["lr_scheduler"], record["config"]["learning_rate"]) == ("cosine", 0.01)
    recipe.write_text("learning_rat: 0.1\n", encoding="utf-8")
    bad = cli("train-translator", corpus, "--base-model", tiny_base, "--out", tmp_path / "x", "--recipe", recipe)
    assert bad.exit_code == 1 and "learning_rat: unknown key (did you mean 'learning_rate'?" in bad.stderr
