"""`dialectbias plan` and the plan `run` confirms: counts, token estimates, cost and seconds with known values,
checked against what the run then actually sends (the store's requests)."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dialectbias.data import message_text
from dialectbias.providers import ChatRequest
from dialectbias.providers._base import CHAT_TOKENS_PER_MESSAGE, CHAT_TOKENS_PER_REQUEST, estimate_tokens

PRICES = {"price_in_per_mtok": 3.0, "price_out_per_mtok": 15.0}
KEYS = ["stage", "model_id", "requests", "cached", "tokens_in", "tokens_out", "cost", "seconds"]


def priced_project(qa_project: Any, base_url: str, n_items: int) -> Any:
    """Prices on model-a only."""
    project = qa_project(base_url, n_items=n_items)
    project.config["models"][0].update(PRICES)
    project.rewrite()
    return project


def plan_json(cli: Any, project: Any) -> list[dict[str, Any]]:
    result = cli("plan", project.yaml_path, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def sent(store: Path, stage: str, model_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(messages JSON, params) of the stage × model's requests, as the run stored them."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT messages, params FROM requests WHERE stage=? AND model_id=?",
                          (stage, model_id)).fetchall()
    return [(m, json.loads(p)) for m, p in rows]


def char_tokens(messages_json: str) -> int:
    """The estimate a served model's tokens are counted with (no tokenizer): `estimate_tokens` plus the chat
    template's tokens, as the run's context-fit check counts them."""
    messages = [{"role": m["role"], "content": message_text(m["content"])} for m in json.loads(messages_json)]
    return (estimate_tokens(ChatRequest(messages=messages)) + CHAT_TOKENS_PER_REQUEST
            + CHAT_TOKENS_PER_MESSAGE * len(messages))


def test_plan_before_any_call_matches_what_the_run_sends(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = priced_project(qa_project, qa_server.base_url, 4)
    plan = plan_json(cli, project)
    assert qa_server.stats()["chat_requests"] == 0  # no call
    assert not project.store_path.exists()  # the store is not created by a plan
    assert [list(row)[:len(KEYS)] for row in plan] == [KEYS] * 3  # the old keys first, then issue 24's
    by = {(r["stage"], r["model_id"]): r for r in plan}
    assert [(r["stage"], r["model_id"], r["requests"], r["cached"]) for r in plan] == [
        ("generate", "model-a", 12, 0), ("generate", "model-b", 12, 0), ("judge", "judge-1", 16, 0)]

    assert cli("run", project.yaml_path, "--no-progress", "--yes").exit_code == 0
    requests = sent(project.store_path, "generate", "model-a")
    tokens_in = sum(char_tokens(m) for m, _ in requests)  # the estimate from characters, per request
    tokens_out = sum(p["max_tokens"] for _, p in requests)  # no measurement yet: max_tokens (512 each)
    gen = by[("generate", "model-a")]
    assert (gen["tokens_in"], gen["tokens_out"]) == (tokens_in, 12 * 512)
    assert gen["tokens_out"] == tokens_out
    assert gen["cost"] == pytest.approx((tokens_in * 3.0 + tokens_out * 15.0) / 1e6)
    # 12 requests, 4 at a time (max_concurrency 4), 512 tokens each at the assumed 50 tokens/s
    assert gen["seconds"] == pytest.approx(math.ceil(12 / 4) * 512 / 50, abs=0.05)
    assert by[("generate", "model-b")]["cost"] is None  # no prices: null
    # the judge's prompts hold answers of the estimated length: more tokens than the prompts without them
    judge = by[("judge", "judge-1")]
    judged = sent(project.store_path, "judge", "judge-1")
    assert judge["tokens_out"] == 16 * 1024
    assert judge["tokens_in"] > sum(char_tokens(m) for m, _ in judged)


def test_after_a_run_everything_is_cached_and_costs_nothing(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = priced_project(qa_project, qa_server.base_url, 2)
    assert cli("run", project.yaml_path, "--no-progress", "--yes").exit_code == 0
    plan = plan_json(cli, project)
    assert [(r["requests"] - r["cached"], r["tokens_in"], r["tokens_out"], r["seconds"]) for r in plan] == [
        (0, 0, 0, 0.0)] * 3
    assert plan[0]["cost"] == 0.0 and plan[1]["cost"] is None


def test_a_new_item_is_planned_with_the_measured_output_length(qa_server: Any, qa_project: Any, cli: Any,
                                                              qa: Any) -> None:
    project = qa_project(qa_server.base_url, n_items=2)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    with sqlite3.connect(project.store_path) as db:
        mean_out = db.execute("SELECT avg(c.tokens_out) FROM requests r JOIN cache c USING (cache_key) "
                              "WHERE r.stage='generate' AND r.model_id='model-a'").fetchone()[0]
    qa.write_jsonl(project.dir / "items.jsonl", [qa.qa_item(i) for i in range(3)])
    gen = plan_json(cli, project)[0]
    assert (gen["requests"], gen["cached"]) == (9, 6)
    assert gen["tokens_out"] == 3 * round(mean_out)


def test_run_asks_above_the_cost_threshold_and_sends_nothing_without_yes(qa_server: Any, qa_project: Any,
                                                                         cli: Any) -> None:
    project = qa_project(qa_server.base_url, n_items=2, model={"price_in_per_mtok": 1e6, "price_out_per_mtok": 1e6})
    refused = cli("run", project.yaml_path, "--no-progress")
    assert refused.exit_code == 1
    assert "error: the plan costs about" in refused.stderr and "above 10 — pass --yes" in refused.stderr
    assert qa_server.stats()["chat_requests"] == 0
    lower = cli("run", project.yaml_path, "--no-progress", "--confirm-above", "1e12")
    assert lower.exit_code == 0, lower.output
    assert "plan" in lower.stderr and "judge-1" in lower.stderr  # the plan is printed first, to stderr


def test_run_with_yes_runs_whatever_the_cost(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url, n_items=1, model={"price_in_per_mtok": 1e6})
    result = cli("run", project.yaml_path, "--no-progress", "--yes")
    assert result.exit_code == 0, result.output
    assert qa_server.stats()["chat_requests"] > 0


def test_without_prices_run_prints_no_plan_unless_asked(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url, n_items=1)
    plain = cli("run", project.yaml_path, "--no-progress")
    assert plain.exit_code == 0 and "plan" not in plain.stderr
    asked = cli("run", project.yaml_path, "--no-progress", "--plan")
    assert asked.exit_code == 0 and "tokens" in asked.stderr and "judge-1" in asked.stderr
