"""`dialectbias plan` is honest (issue 24.4): its seconds rest on the store's measured calls (latency and how
many were really in flight) before the configured `max_concurrency`, each estimate says what it rests on,
it warns of requests that do not fit the model's context window (learnt from the server's `/v1/models`),
works with the server down, and fits 80 columns with long model ids and big numbers."""

from __future__ import annotations

import json
import socket
import sqlite3
from typing import Any
from unittest import mock

import pytest
from rich.console import Console
from typer.testing import CliRunner

from dialectbias.cli import _plan
from dialectbias.cli._app import app
from dialectbias.testing._app import MODELS_MAX_MODEL_LEN

OLD_KEYS = ["stage", "model_id", "requests", "cached", "tokens_in", "tokens_out", "cost", "seconds"]
NEW_KEYS = ["basis", "slots", "context_window", "too_long", "largest_prompt", "warnings"]
DELAY_S = 0.25


def plan_json(cli: Any, project: Any) -> dict[tuple[str, str], dict[str, Any]]:
    result = cli("plan", project.yaml_path, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [list(r) for r in rows] == [OLD_KEYS + NEW_KEYS] * len(rows)  # old keys first, unchanged
    return {(r["stage"], r["model_id"]): r for r in rows}


def plan_text(project: Any, width: int = 80) -> list[str]:
    """`dialectbias plan` as printed on a terminal `width` columns wide."""
    console = Console(width=width, record=True, color_system=None)
    with mock.patch.object(_plan, "console", console):
        result = CliRunner().invoke(app, ["plan", str(project.yaml_path)])
    assert result.exit_code == 0, result.output
    return console.export_text().splitlines()


def test_seconds_follow_the_measured_calls_not_max_concurrency(qa_server: Any, qa_project: Any, cli: Any,
                                                               qa: Any) -> None:
    """Every call of model-a takes DELAY_S at the server, 2 at a time; then max_concurrency goes up to 16 and
    new items arrive: the plan's seconds are the measured throughput (≈ 2 in flight), not 16 slots."""
    project = qa_project(qa_server.base_url, n_items=4, model={"max_concurrency": 2})
    qa_server.set_faults([{"kind": "slow", "delay_s": DELAY_S, "match": "model-a"}])
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert qa_server.stats()["faults"]["slow"] == 12
    before = plan_json(cli, project)[("generate", "model-a")]
    assert before["requests"] == before["cached"] and before["seconds"] == 0.0

    for model in project.config["models"]:
        model["max_concurrency"] = 16
    project.rewrite()
    qa.write_jsonl(project.dir / "items.jsonl", [qa.qa_item(i) for i in range(8)])  # 4 new items: 12 requests
    plan = plan_json(cli, project)
    gen = plan[("generate", "model-a")]
    assert (gen["requests"] - gen["cached"], gen["basis"]["seconds"], gen["basis"]["tokens_out"]) == (
        12, "measured", "measured")
    assert 1.5 <= gen["slots"] <= 2.0  # really in flight, not the configured 16
    with sqlite3.connect(project.store_path) as db:
        latency = db.execute("SELECT avg(c.latency_s) FROM requests r JOIN cache c USING (cache_key) "
                             "WHERE r.stage='generate' AND r.model_id='model-a'").fetchone()[0]
    assert latency >= DELAY_S
    # 12 calls of the measured latency, ≈ 2 at a time (the first run's pace); 16 slots would say one round
    assert gen["seconds"] == pytest.approx(12 * latency / gen["slots"], abs=0.1)
    assert gen["seconds"] >= 12 * DELAY_S / 2
    other = plan[("generate", "model-b")]  # no delay: fast measured calls
    assert other["basis"]["seconds"] == "measured" and other["seconds"] < gen["seconds"] / 3
    judge = plan[("judge", "judge-1")]
    assert judge["basis"]["seconds"] == "measured" and judge["slots"] <= 4  # its max_concurrency then
    lines = plan_text(project)
    row = next(line for line in lines if line.lstrip().startswith("generate") and "model-a" in line)
    assert row.split()[-1] == "measured"
    note = " ".join(" ".join(lines).split())
    assert ("model-a: tokens in by an estimate from characters per token by script; tokens out: measured mean; "
            "seconds: measured:") in note


def test_without_measurements_the_seconds_are_labelled_assumed(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url, n_items=2)
    plan = plan_json(cli, project)
    for row in plan.values():
        assert row["basis"] == {"tokens_in": "estimate", "tokens_out": "max_tokens", "seconds": "assumed",
                                "context": "server"}, row
        assert (row["slots"], row["context_window"], row["too_long"], row["warnings"]) == (
            4, MODELS_MAX_MODEL_LEN, 0, [])
        assert row["largest_prompt"] > 0
    text = " ".join(" ".join(plan_text(project)).split())
    assert "seconds: assumed 50 tokens/s, 4 parallel (assumed: the configured slots)" in text
    assert qa_server.stats()["chat_requests"] == 0  # only GET /v1/models, never a model call
    assert qa_server.stats()["by_path"].get("/v1/models", 0) >= 1


def test_a_judge_prompt_that_cannot_fit_the_context_is_warned_of(qa_server: Any, qa_project: Any,
                                                                 cli: Any) -> None:
    """The server says 8,192 tokens of context; the judge may answer 8,000: no judge prompt fits."""
    project = qa_project(qa_server.base_url, n_items=2)
    project.rewrite(options={"judge_max_tokens": MODELS_MAX_MODEL_LEN - 192})
    plan = plan_json(cli, project)
    judge = plan[("judge", "judge-1")]
    assert (judge["too_long"], judge["context_window"], judge["basis"]["context"]) == (8, MODELS_MAX_MODEL_LEN,
                                                                                        "server")
    assert judge["largest_prompt"] > 192
    [warning] = judge["warnings"]
    assert warning.startswith(f"judge · judge-1: 8 of 8 requests may not fit (estimated) in the context window of "
                              f"8,192 tokens (its server); the largest prompt is at most {judge['largest_prompt']:,} "
                              "tokens + max_tokens 8,000. The run has the server count them (vLLM, llama.cpp) or "
                              "sends them; name a `tokenizer:` to count them here.")
    assert "Lower max_tokens" in warning and "--max-model-len" in warning
    assert [r["too_long"] for k, r in plan.items() if k[0] == "generate"] == [0, 0]
    lines = plan_text(project)
    assert [line for line in lines if len(line) > 80] == []
    text = " ".join(" ".join(lines).split())
    assert f"warning: {' '.join(warning.split())}" in text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_plan_works_with_the_server_down(qa_project: Any, cli: Any) -> None:
    project = qa_project(f"http://127.0.0.1:{free_port()}/v1", n_items=2)
    plan = plan_json(cli, project)
    assert {(r["basis"]["seconds"], r["basis"]["context"], r["context_window"]) for r in plan.values()} == {
        ("assumed", "unknown", None)}


@pytest.mark.parametrize("width", [80, 200])
def test_the_table_fits_80_columns_with_long_ids_and_big_numbers(qa_server: Any, qa_project: Any,
                                                                  width: int) -> None:
    long_id = "meta-llama/Llama-3.1-70B-Instruct-Turbo-" + "x" * 30
    project = qa_project(qa_server.base_url, n_items=2,
                         model={"price_in_per_mtok": 1e9, "price_out_per_mtok": 1e9, "max_concurrency": 1})
    project.config["models"][0]["id"] = long_id
    project.rewrite(options={"max_tokens": 400_000})
    lines = plan_text(project, width)
    assert [line for line in lines if len(line) > 80] == []
    text = "".join(lines)
    assert "meta-llama" in text and "x" * 8 in text  # wrapped in its column, not cut
    assert "2.4M" in text  # 6 requests × 400,000 tokens out, abbreviated
    assert "plan of" in text and "total cost" in text


def test_without_measurements_a_llamacpp_servers_slots_are_used(qa_project: Any, cli: Any) -> None:
    """A llama.cpp server (imitated) says 2 slots and a 16,384-token context on `GET /props`: the plan runs 2
    calls at a time, not the 4 of `max_concurrency`, and says so."""
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:qa_responder", imitate="llamacpp", context=16384,
                    slots=2) as server:
        project = qa_project(server.base_url, n_items=2, model={"server": "llamacpp"},
                             judge={"server": "llamacpp"})
        plan = plan_json(cli, project)
        stats = server.stats()
    gen = plan[("generate", "model-a")]
    assert (gen["basis"]["seconds"], gen["slots"], gen["context_window"], gen["basis"]["context"]) == (
        "server", 2, 16384, "server")
    assert gen["seconds"] == pytest.approx(3 * 512 / 50, abs=0.05)  # 6 requests, 2 at a time, 512 tokens each
    assert stats["chat_requests"] == 0 and set(stats["by_path"]) <= {"/v1/models", "/props"}
    judge = plan[("judge", "judge-1")]
    assert judge["too_long"] == 0 and judge["largest_prompt"] + 1024 <= 16384


def test_a_served_models_tokenizer_counts_its_input_tokens(qa_server: Any, qa_project: Any, cli: Any,
                                                           tmp_path: Any) -> None:
    """`tokenizer:` on an openai model: the plan counts each prompt with it (chat template included), as the
    run's context-fit check does, and says so; the other model keeps the estimate."""
    pytest.importorskip("transformers")
    from dialectbias.providers import ChatRequest
    from dialectbias.providers._tokenizer import chat_tokens, load_tokenizer
    from tiny_llm import build_tiny_llama

    folder = build_tiny_llama(tmp_path / "tiny")
    project = qa_project(qa_server.base_url, n_items=2)
    project.config["models"][0]["tokenizer"] = str(folder)
    project.rewrite()
    plan = plan_json(cli, project)
    gen, other = plan[("generate", "model-a")], plan[("generate", "model-b")]
    assert (gen["basis"]["tokens_in"], other["basis"]["tokens_in"]) == ("tokenizer", "estimate")
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    with sqlite3.connect(project.store_path) as db:
        sent = [json.loads(m) for (m,) in db.execute(
            "SELECT messages FROM requests WHERE stage='generate' AND model_id='model-a'")]
    tokenizer = load_tokenizer(str(folder))
    assert gen["tokens_in"] == sum(chat_tokens(tokenizer, ChatRequest(messages=m)) for m in sent)
    assert gen["tokens_in"] != other["tokens_in"]
    text = " ".join(" ".join(plan_text(project)).split())
    assert f"model-a: tokens in by the tokenizer of {folder};" in text
    project.rewrite(models=[{**m, "params": {**m.get("params", {}), "max_tokens": 8190}}
                            for m in project.config["models"]])
    plan = plan_json(cli, project)
    counted, estimated = plan[("generate", "model-a")]["warnings"], plan[("generate", "model-b")]["warnings"]
    assert counted[0].startswith("generate · model-a: 6 of 6 requests do not fit (counted) in the context window")
    assert "largest prompt is at most" not in counted[0] and "The run has the server count" not in counted[0]
    assert estimated[0].startswith("generate · model-b: 6 of 6 requests may not fit (estimated) in the context")


def test_the_plans_context_warning_counts_what_the_run_refuses(qa_project: Any, cli: Any) -> None:
    """Against a vLLM imitation with a 2,048-token context, after generation: without a tokenizer the plan's
    `too_long` for the judge is an upper bound ("may not fit (estimated)") of the judge requests the run then
    refuses as too long, the run counting each borderline prompt on the server's `POST /tokenize` (a max_tokens
    chosen so that some prompts fit and some do not)."""
    import re

    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:qa_responder", imitate="vllm", context=2048) as server:
        project = qa_project(server.base_url, n_items=4, judge={"params": {"max_tokens": 2040}})
        first = cli("run", project.yaml_path, "--no-progress")
        assert first.exit_code == 4, first.output  # every judge prompt too long: no judgment
        with sqlite3.connect(project.store_path) as db:
            errors = [e for (e,) in db.execute("SELECT error FROM results WHERE status = 'failed'")]
        found = [re.search(r"prompt ([\d,]+) tokens", e) for e in errors]
        prompts = sorted(int(m[1].replace(",", "")) for m in found if m)
        assert len(prompts) == 16 and prompts[0] < prompts[-1]
        max_tokens = 2048 - prompts[len(prompts) // 2]  # the longer half does not fit
        expected = sum(p + max_tokens > 2048 for p in prompts)
        assert 0 < expected < 16
        project.rewrite(judges=[{**project.config["judges"][0], "params": {"max_tokens": max_tokens}}])
        judge = plan_json(cli, project)[("judge", "judge-1")]
        assert judge["context_window"] == 2048 and judge["largest_prompt"] >= prompts[-1]
        assert expected <= judge["too_long"] <= 16  # the estimate over-counts: an upper bound
        assert judge["warnings"][0].startswith(f"judge · judge-1: {judge['too_long']} of 16 requests may not fit "
                                               "(estimated)")
        second = cli("run", project.yaml_path, "--no-progress")
        assert f"too long {expected}" in " ".join(second.stdout.split()), second.stdout


def test_the_plan_counts_each_stages_answered_requests_in_one_sweep(qa_server: Any, qa_project: Any, cli: Any,
                                                                   qa: Any) -> None:
    """Issue 23: the plan counts what is already answered with one `pending_counts` per stage, not a
    `count_pending` per model (a sweep of the results' index each), and the counts are each model's own."""
    from dialectbias.store import Store

    project = qa_project(qa_server.base_url, n_items=2)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    qa.write_jsonl(project.dir / "items.jsonl", [qa.qa_item(i) for i in range(5)])  # 3 new items: 9 requests
    project.rewrite(models=[*project.config["models"],
                            {**project.config["models"][0], "id": "model-new", "model": "model-new"}])
    swept = mock.patch.object(Store, "count_pending", side_effect=AssertionError("a sweep per model"))
    with swept, mock.patch.object(Store, "pending_counts", autospec=True,
                                  side_effect=Store.pending_counts) as counts:
        plan = plan_json(cli, project)
    stages = [c.args[1] for c in counts.call_args_list]
    assert sorted(set(stages)) == ["generate", "judge"] and len(stages) == len(set(stages)) * 2  # compile + plan
    assert {m: (r["requests"], r["cached"]) for (s, m), r in plan.items() if s == "generate"} == {
        "model-a": (15, 6), "model-b": (15, 6), "model-new": (15, 0)}
