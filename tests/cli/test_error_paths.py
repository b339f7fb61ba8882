"""Error paths found by the hostile-input sweep (issue 19.14), through the installed command where the user
met them: one clear line naming what is at fault, never a traceback or an object's repr."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest


def error_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def test_review_serve_on_a_busy_port_is_one_line_and_no_app_address(qa: Any, qa_server: Any,
                                                                    tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=1)
    assert qa.run_subprocess("run", project.yaml_path, "--no-progress").exit_code == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = qa.run_subprocess("review", "serve", project.yaml_path, "--port", port, timeout=30)
    assert result.exit_code == 1
    assert result.stdout == ""  # no "review app: http://…" before the failure
    assert result.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use (another review app?): choose another with --port, "
        f"e.g. --port {port + 1}"]
