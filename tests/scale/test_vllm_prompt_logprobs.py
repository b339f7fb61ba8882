"""`provider: vllm` prompt token logprobs (task `perplexity`, German paper App. C.2): `LLM.generate` with
`SamplingParams(prompt_logprobs=0, max_tokens=1)` on SmolLM2-135M in float32, checked against a direct
transformers forward pass on the same folder, then a `perplexity` run in-process. Needs the vllm extra (skips
without it)."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
import yaml
from scale_helpers import need_vllm

from dialectbias import plugins
from dialectbias.providers import PROMPT_LOGPROBS, ChatRequest, parse_prompt_logprobs

pytestmark = pytest.mark.scale

TEXTS = ["Der Ort liegt am Rhein und hat viele Einwohner.", "Da Ort liegt am Rhoi un hot vill Eiwohner."]


def direct(folder: Path, texts: list[str]) -> list[list[float]]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32).eval()
    out = []
    for text in texts:
        ids = tok(text)["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
        out.append([float(logp[i - 1, ids[i]]) for i in range(1, len(ids))])
    return out


def test_vllm_prompt_logprobs_match_transformers_and_feed_a_perplexity_run(smollm2_folder: Path,
                                                                           tmp_path: Path) -> None:
    need_vllm()
    from dialectbias.providers._vllm import VLLMModel
    from dialectbias.providers._vllm_config import VLLMModelConfig

    entry = {"id": "smol", "provider": "vllm", "model": str(smollm2_folder), "dtype": "float32",
             "batch_size": 4, "kv_cache_gib": 1}
    client = VLLMModel(VLLMModelConfig(**entry))

    async def score() -> list[list[float]]:
        try:
            got = await asyncio.gather(*(client.send(ChatRequest(messages=[{"role": "user", "content": t}],
                                                                 params={PROMPT_LOGPROBS: True})) for t in TEXTS))
        finally:
            await client.aclose()
        return [parse_prompt_logprobs(r.output).scored() for r in got]

    got = asyncio.run(score())
    for mine, theirs in zip(got, direct(smollm2_folder, TEXTS), strict=True):
        assert len(mine) == len(theirs)
        assert mine == pytest.approx(theirs, abs=2e-3)

    # the task end to end in-process (the scale venv may lack this checkout's entry points: register it)
    plugins.register("tasks", "perplexity", "dialectbias.tasks.perplexity:PerplexityTask")
    try:
        from dialectbias.api import report_experiment, run_experiment

        (tmp_path / "items.jsonl").write_text(json.dumps({"id": "a", "variants": {
            "standard": TEXTS[0], "pfl": TEXTS[1]}}, ensure_ascii=False) + "\n", encoding="utf-8")
        exp = tmp_path / "ppl.yaml"
        exp.write_text(yaml.safe_dump({"name": "ppl", "task": "perplexity", "data": "items.jsonl",
                                       "models": [entry], "options": {"n_resamples": 100}}), encoding="utf-8")
        summary = run_experiment(exp, progress=False)
        assert not summary.stopped
        report_experiment(exp, tmp_path / "report")
        with (tmp_path / "report" / "perplexity_texts.csv").open(encoding="utf-8") as fh:
            rows = {r["variant"]: r for r in csv.DictReader(fh)}
        assert int(rows["standard"]["n_tokens"]) == len(got[0])
        assert float(rows["standard"]["logprob_sum"]) == pytest.approx(sum(got[0]), abs=1e-2)
    finally:
        plugins.unregister("tasks", "perplexity")
