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


@pytest.mark.parametrize("spec, named", [
    ("dialectbias.testing._responders:qa_responder", "has no 'qa_responder'"),
    ("no_such_module_xyz:answer", "cannot import 'no_such_module_xyz'"),
    ("dialectbias.testing._responders:ECHO_MAX_CHARS", "is not callable"),
    ("qa_responder", "'echo', 'fixed:TEXT' or 'module:function'"),
])
def test_a_bad_responder_is_a_usage_error_naming_it(spec: str, named: str) -> None:
    """Refused before the server starts: exit 2, one message naming the responder; no traceback."""
    result = subprocess.run([sys.executable, "-m", "dialectbias.testing.server", "--port", "0", "--responder", spec],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert f"--responder {spec!r}" in result.stderr or f"responder {spec!r}" in result.stderr
    assert named in result.stderr
