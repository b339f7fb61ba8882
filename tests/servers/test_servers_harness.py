"""The real-server tests' own checks, on the package's test server imitating llama-cpp-python (its HTTP 500 to
`json_schema`, what it says on `GET /v1/models`, its 2,048-token context), so that they run in every CI step and
are shown able to fail: the refusal is one message and accounted for, so is a schema it cannot take without
the hint, a grammar-safe JSON mode scores every judgment, and a server that is gone fails `check_case`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from servers_helpers import RealServer, check_case, first_study, run_case, server_env

REFUSED = "the server does not take `structured_output: json_schema`"


def imitation(tmp_path: Path) -> RealServer:
    command = [sys.executable, "-m", "dialectbias.testing.server", "--port", "{port}", "--responder",
               "dialectbias.testing:qa_responder", "--faults", '[{"kind": "llamacpp_json_schema"}]',
               "--imitate", "llama-cpp-python", "--context", "2048"]
    return RealServer("llamacpp", command, tmp_path / "imitation.log", server_env(), timeout=60)


def test_the_checks_pass_on_what_the_issue_demands(cli_subprocess: Any, tmp_path: Path) -> None:
    server = imitation(tmp_path)
    server.start()
    try:
        study = first_study(tmp_path / "study", server)
        refused = run_case(cli_subprocess, study, server, "json_schema", "llamacpp", tmp_path)
        check_case(refused)
        assert refused.exit_code == 1 and refused.output.count(REFUSED) == 1, refused.output
        assert refused.accounting.scored == 0 and sum(refused.accounting.failed.values()) == 3
        unhinted = run_case(cli_subprocess, study, server, "json_object", None, tmp_path)
        check_case(unhinted)  # it says it is llama-cpp-python: nothing sent, one message naming the hint
        assert unhinted.exit_code == 1 and "set `server: llamacpp` on this model" in unhinted.output
        safe = run_case(cli_subprocess, study, server, "json_object", "llamacpp", tmp_path)
        check_case(safe)
        assert (safe.exit_code, safe.accounting.scored, safe.accounting.cached) == (0, 3, 0), safe.output
        assert safe.generations == (6, 6)
    finally:
        server.stop()


def test_a_server_that_is_gone_fails_the_checks(cli_subprocess: Any, tmp_path: Path) -> None:
    server = imitation(tmp_path)
    server.start()
    study = first_study(tmp_path / "study", server)
    server.ensure = lambda: None  # type: ignore[method-assign]  # as if the server died before this run
    server.stop()
    case = run_case(cli_subprocess, study, server, "json_object", "llamacpp", tmp_path)
    assert not case.alive and case.exit_code == 1 and "Traceback" not in case.output
    with pytest.raises(AssertionError, match="the server died during the run"):
        check_case(case)
