"""Fixtures of the real-server tests (marker `servers`): the `dialectbias` command as a subprocess, as a user
runs it. The servers themselves are started by each module (llama-cpp-python, vLLM); without their package the
tests skip, naming the install command (DIALECTBIAS_REQUIRE_SERVERS=1 turns that into a failure)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

# `dialectbias` subprocesses must import this checkout: make PYTHONPATH=src absolute
if os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve())
                                               for p in os.environ["PYTHONPATH"].split(os.pathsep))


@pytest.fixture(scope="session")
def cli_subprocess(qa: Any) -> Any:
    """`dialectbias ARGS…` in a subprocess of an 80-column terminal (the installed command), 15 min at most."""

    def run(*args: Any) -> Any:
        return qa.run_subprocess(*args, env=qa.subprocess_env(COLUMNS="80"), timeout=900)

    return run
