"""Judges that fit (issue 24 item 2): before sending, each request's estimated input tokens plus its
`max_tokens` is checked against the context window the server reports; the estimate is an upper bound, so a
request it says may not fit is counted by the server (vLLM's `POST /tokenize`) and refused only when that count
is over: a request that would fit is never refused. A refused request is not sent, is stored as failed with its
reason, counted as "too long" in the run summary and `status` (without stopping the model), and sent by
`run --retry failed` once it fits. A server's own 400 "maximum context length" (no tokenize route, or no context
reported) is the same non-retried fault. Through the CLI against the test server imitating vLLM (`max_model_len`
on /v1/models, one token per 4 characters on /tokenize and in its context check) and llama-cpp-python (no
context reported).

qa_bias, 2 items × 2 dialects × 2 models: 12 generation requests, 8 judge requests."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from dialectbias.testing import TestServer

RESPONDER = "dialectbias.testing:qa_responder"
TOO_LONG_NOTE = "model 'judge-1': does not fit the context: prompt + max_tokens over the model's context window"


def _run(cli: Any, project: Any, *args: str) -> Any:
    return cli("run", project.yaml_path, "--no-progress", *args)


def _failed_errors(project: Any) -> list[str]:
    with sqlite3.connect(project.store_path) as conn:
        return [r[0] for r in conn.execute("SELECT s.error FROM results s JOIN current_requests c "
                                           "ON c.rid = s.rid WHERE s.status = 'failed'")]


def _block(output: str, title: str) -> str:
    """The folded `label value` lines of one summary/status block."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    block = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        block.append(line)
    return " ".join(" ".join(block).split())


@pytest.fixture
def vllm_2k() -> Any:
    with TestServer(responder=RESPONDER, imitate="vllm", context=2048) as server:
        yield server


def test_a_judge_prompt_that_cannot_fit_is_not_sent_counted_and_retried_once_it_fits(
        vllm_2k: Any, qa_project: Any, cli: Any, monkeypatch: Any) -> None:
    project = qa_project(vllm_2k.base_url, n_items=2, judge={"params": {"max_tokens": 2000}})
    monkeypatch.chdir(project.dir)
    ran = _run(cli, project)
    assert ran.exit_code == 4, ran.output  # no judgment at all: the judge stage is empty
    assert "Traceback" not in ran.output and "stopped" not in ran.output  # not a sick server: not stopped
    stats = vllm_2k.stats()
    assert "judge-model" not in stats["chat_by_model"]  # nothing was sent to the judge
    assert stats["by_path"]["/tokenize"] == 8  # each judge prompt counted by the server once
    assert stats["chat_by_model"] == {"model-a": 6, "model-b": 6}  # generation fits (512 max_tokens)
    assert stats["responses_ok"] == 12 and "400" not in stats["status_counts"]
    assert "too long 8" in _block(ran.stdout, "judge · judge-1")
    assert f"{TOO_LONG_NOTE}, not sent" in ran.output and "(8×)" in ran.output
    assert "8 request(s) failed (8 do not fit their model's context); run again to retry them." in ran.stdout
    errors = _failed_errors(project)
    assert len(errors) == 8
    for error in errors:
        assert error.startswith("model 'judge-1': does not fit the context: prompt ")
        assert "tokens (counted by the server) + max_tokens 2,000 > context 2,048; nothing was sent" \
            in error and "`run --retry failed`" in error
    status = cli("status", project.yaml_path)
    assert "too long 8" in _block(status.stdout, "judge · judge-1")
    assert "8 failed requests: dialectbias run bnqa.yaml --retry failed" in status.stdout.splitlines()

    with TestServer(responder=RESPONDER, imitate="vllm", context=8192) as bigger:  # the server, restarted
        project.rewrite(judges=[{**project.config["judges"][0], "base_url": bigger.base_url}],
                        models=[{**m, "base_url": bigger.base_url} for m in project.config["models"]])
        retried = _run(cli, project, "--retry", "failed")
        assert retried.exit_code == 0, retried.output
        assert bigger.stats()["chat_by_model"] == {"judge-model": 8}  # only the 8 judge prompts
    assert "judge judge-1: 8 judgments · 0 unscored" in retried.stdout
    assert "too long" not in cli("status", project.yaml_path).stdout


def test_a_bengali_judge_prompt_over_the_estimate_that_the_server_counts_as_fitting_is_sent_and_scored(
        vllm_2k: Any, qa_project: Any, cli: Any) -> None:
    """The per-script estimate counts every judge prompt over 2,048 - 1,024 tokens; the server counts each under
    it (one token per 4 characters): all 8 are sent and scored, at the cost of one count each."""
    project = qa_project(vllm_2k.base_url, n_items=2, judge={"params": {"max_tokens": 1024}})
    plan = cli("plan", project.yaml_path)
    assert "8 of 8 requests may not fit (estimated)" in " ".join(plan.stdout.split())
    assert "/tokenize" not in vllm_2k.stats()["by_path"]  # the plan makes no POST
    ran = _run(cli, project)
    assert ran.exit_code == 0, ran.output
    stats = vllm_2k.stats()
    assert stats["chat_by_model"] == {"model-a": 6, "model-b": 6, "judge-model": 8}
    assert stats["by_path"]["/tokenize"] == 8 and "400" not in stats["status_counts"]
    assert "judge judge-1: 8 judgments · 0 unscored" in ran.stdout
    assert "too long" not in ran.stdout and _failed_errors(project) == []


def test_without_the_tokenize_route_a_request_that_may_fit_is_sent_and_the_servers_refusal_counted(
        qa_project: Any, cli: Any) -> None:
    """An older vLLM without `POST /tokenize` (404, asked once): a judge prompt whose estimate is over but which
    could fit at 6 characters a token is sent; the server's 400 is the context fault, not retried."""
    with TestServer(responder=RESPONDER, imitate="vllm", context=2048, tokenize=False) as server:
        project = qa_project(server.base_url, n_items=2, judge={"params": {"max_tokens": 1500}})
        ran = _run(cli, project)
        stats = server.stats()
    assert ran.exit_code == 4, ran.output
    assert 1 <= stats["by_path"]["/tokenize"] <= 4  # the 404 is remembered (asked by those already in flight)
    assert stats["chat_by_model"]["judge-model"] == 8 and stats["status_counts"]["400"] == 8  # sent, no retry
    assert "too long 8" in _block(ran.stdout, "judge · judge-1") and "stopped" not in ran.output
    errors = _failed_errors(project)
    assert len(errors) == 8 and all(e.startswith(
        "model 'judge-1': does not fit the context: the server refused the prompt (HTTP 400: This model's "
        "maximum context length is 2048 tokens.") for e in errors)


def test_a_server_refusing_a_prompt_as_too_long_is_not_retried_and_does_not_stop_the_judge(
        qa_project: Any, cli: Any) -> None:
    """llama-cpp-python reports no context on /v1/models: the prompt is sent and the server's 400 ("This model's
    maximum context length is …") is the context fault: 8 calls for 8 judge prompts, none retried, and 8 failures
    in a row do not stop the judge as a dead server would."""
    with TestServer(responder=RESPONDER, imitate="llama-cpp-python", context=700) as server:
        project = qa_project(server.base_url, n_items=2, model={"params": {"max_tokens": 64}},
                             judge={"params": {"max_tokens": 700}, "server": "llamacpp",
                                    "structured_output": "json_object"})
        ran = _run(cli, project)
        stats = server.stats()
    assert ran.exit_code == 4, ran.output
    assert stats["chat_by_model"]["judge-model"] == 8 and stats["status_counts"]["400"] == 8  # no retry
    assert "stopped" not in ran.output
    assert "too long 8" in _block(ran.stdout, "judge · judge-1")
    errors = _failed_errors(project)
    assert len(errors) == 8 and all(e.startswith(
        "model 'judge-1': does not fit the context: the server refused the prompt (HTTP 400: This model's "
        "maximum context length is 700 tokens.") for e in errors)
