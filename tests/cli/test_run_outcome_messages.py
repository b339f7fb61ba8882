"""`dialectbias run` says what happened (issue 19.12): a model whose every request failed reads `failed`, a
judge with nothing to judge says why, a stopped model with nothing left unsent does not claim otherwise."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def final_lines(stdout: str, stage: str) -> dict[str, str]:
    """The final progress line of each model of `stage` (with its folded continuation), by model id."""
    found: dict[str, str] = {}
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        head, _, rest = line.partition(f" {stage} · ")
        if head in ("done", "failed", "stopped") and rest:
            text = line
            for more in lines[i + 1:]:
                if not more.startswith("  "):
                    break
                text += " " + more.strip()
            found[rest.split(":")[0]] = text
    return found


def test_a_model_whose_every_request_failed_reads_failed_not_done(cli: Any, qa: Any, qa_server: Any,
                                                                 tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "500", "match": "model-"}])  # generations fail; judges would answer
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=3, model={"max_retries": 0})
    result = cli("run", project.yaml_path)
    assert result.exit_code != 0, result.output
    finals = final_lines(result.stdout, "generate")
    assert set(finals) == {"model-a", "model-b"}, result.stdout
    for line in finals.values():
        assert line.startswith("failed generate · ") and "failed 9/9 in " in line, line
        assert "done" not in line


def test_a_judge_with_nothing_to_judge_says_why_not_an_earlier_run(cli: Any, qa: Any, qa_server: Any,
                                                                  tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "500", "match": "model-"}])
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2, model={"max_retries": 0})
    result = cli("run", project.yaml_path)
    judge = final_lines(result.stdout, "judge")["judge-1"]
    assert "earlier run" not in judge
    assert judge == ("done judge · judge-1: nothing to send · 8 skipped: no successful generation to judge"), judge


def test_a_stopped_model_with_nothing_left_unsent_does_not_say_requests_were_not_sent(
        cli: Any, qa: Any, tmp_path: Path) -> None:
    # 1 item: 3 requests per model, all in flight at once, so the model stops with none left to send
    project = qa.make_project(tmp_path, f"http://127.0.0.1:{closed_port()}/v1", n_items=1,
                              model={"max_retries": 0, "max_concurrency": 4})
    result = cli("run", project.yaml_path)
    assert result.exit_code == 1
    stopped = [line for line in result.stderr.splitlines() if " stopped: " in line]
    assert len(stopped) == 2, result.stderr
    for line in stopped:
        assert "not sent" not in line and "unsent" not in line, line
        assert "the server is down or the URL is wrong" in line


def test_report_of_a_run_with_nothing_scored_says_so_first_and_fails(cli: Any, qa: Any, qa_server: Any,
                                                                      tmp_path: Path) -> None:
    qa_server.set_faults([{"kind": "500", "match": "model-"}])  # no generation, so no judgment to score
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=1, model={"max_retries": 0})
    cli("run", project.yaml_path)
    result = cli("report", project.yaml_path, "--out", tmp_path / "report")
    assert result.exit_code == 4, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: nothing scored: stage generate produced no usable result"), result.stderr
    assert "error: nothing scored: stage judge produced no usable result" in result.stderr
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    top = html[:html.index("<table")]  # above the metadata and every table
    assert "Nothing scored: stage judge produced no usable result" in top


def test_report_of_a_scored_run_has_no_alert(cli: Any, qa: Any, qa_server: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=1)
    assert cli("run", project.yaml_path).exit_code == 0
    result = cli("report", project.yaml_path, "--out", tmp_path / "report")
    assert result.exit_code == 0 and "nothing scored" not in result.output, result.output
    assert "Nothing scored" not in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
