"""The test server's `--help` wraps to the terminal, at most 80 columns (issue 19.13)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("columns", [80, 200])
def test_server_help_fits_80_columns(columns: int) -> None:
    env = {**os.environ, "COLUMNS": str(columns)}
    result = subprocess.run([sys.executable, "-m", "dialectbias.testing.server", "--help"], capture_output=True,
                            text=True, env=env, timeout=60, check=True)
    lines = result.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    text = " ".join(result.stdout.split())
    for term in ("dialectbias.testing:association_responder", "per_prompt_first_n", "module:function",
                 "stop it with SIGTERM or Ctrl-C", "--responder dialectbias.testing:qa_responder > server.json &"):
        assert term in text
