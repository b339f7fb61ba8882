"""Repeated samples are independent draws (issue 19 item 6), through the CLI against the test server.

In the naming setting the decision probe's prompts repeat: a trait with one concept per pole gives only four
prompts per scenario (option order × writer order), so eight samples must repeat some. Each sample is still
its own request: its own cache entry (never answered from another sample's), its own seed (a seed-honouring
server would otherwise return the same answer for each copy and inflate `n`), both deterministic, so a rerun
sends nothing and raising `samples` sends exactly the new samples."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

#: one concept per pole: decision prompts differ only in option order and writer order (4 per scenario)
TRAITS = {"rural": {
    "trait": {"label": "rural", "adjectives": ["rustic", "provincial", "pastoral", "agrarian", "countrified"],
              "concepts": ["Farms"]},
    "opposite": {"label": "urban", "adjectives": ["metropolitan", "cosmopolitan", "civic", "citified", "downtown"],
                 "concepts": ["Skyscrapers"]}}}
MODEL = "model-a"
SAMPLES = 8


@pytest.fixture(scope="module")
def probe_server() -> Any:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:probe_responder") as server:
        yield server


def write_experiment(root: Path, base_url: str, task: str, samples: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "traits.yaml").write_text(yaml.safe_dump(TRAITS), encoding="utf-8")
    config: dict[str, Any] = {
        "name": f"repeats-{task}", "task": task, "seed": 5,
        "models": [{"id": MODEL, "provider": "openai", "base_url": base_url, "model": MODEL}],
        "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "traits": ["rural"],
                    "traits_file": "traits.yaml", "samples": samples, "n_resamples": 200}}
    if task == "decision":
        config["options"]["scenarios"] = ["rural_1"]
        config["roles"] = {"extractor": {"provider": "openai", "base_url": base_url, "model": "extractor"}}
    path = root / f"{task}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def generations(server: Any) -> list[dict[str, Any]]:
    """Bodies of the generation calls the server received (not the extractor's)."""
    return [r["body"] for r in server.requests() if r["body"]["model"] == MODEL]


def stored(exp: Path, task: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(exp.parent / f"repeats-{task}.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT r.request_id, r.cache_key, r.messages, r.params, s.cache_hit FROM requests r "
                            "JOIN current_requests USING (request_id) JOIN results s USING (request_id) "
                            "WHERE r.stage = 'generate' AND s.status = 'ok'").fetchall()
    finally:
        conn.close()


def run(cli: Any, exp: Path) -> None:
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output


def test_repeated_decision_prompts_are_separate_draws(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    exp = write_experiment(tmp_path, probe_server.base_url, "decision", SAMPLES)
    probe_server.reset_stats()
    run(cli, exp)
    rows = stored(exp, "decision")
    assert len(rows) == SAMPLES
    assert max(Counter(r["messages"] for r in rows).values()) > 1  # the naming prompts do repeat
    assert len({r["cache_key"] for r in rows}) == SAMPLES and not any(r["cache_hit"] for r in rows)
    sent = generations(probe_server)
    assert len(sent) == SAMPLES  # every sample was sent, the repeated prompts too
    seeds = [b["seed"] for b in sent]
    assert len(set(seeds)) == SAMPLES  # one seed per draw, not the experiment's seed for all
    assert sorted(seeds) == sorted(json.loads(r["params"])["seed"] for r in rows)

    probe_server.reset_stats()
    run(cli, exp)  # deterministic: the same requests, all stored
    assert probe_server.stats()["chat_requests"] == 0


def test_raising_samples_sends_exactly_the_new_samples(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    exp = write_experiment(tmp_path, probe_server.base_url, "decision", SAMPLES)
    run(cli, exp)
    first = {r["request_id"]: json.loads(r["params"])["seed"] for r in stored(exp, "decision")}
    exp = write_experiment(tmp_path, probe_server.base_url, "decision", 2 * SAMPLES)
    probe_server.reset_stats()
    run(cli, exp)
    rows = stored(exp, "decision")
    assert len(rows) == 2 * SAMPLES and set(first) <= {r["request_id"] for r in rows}
    sent = generations(probe_server)
    # every new sample is sent, none answered from an earlier sample's cache entry, although its prompt repeats
    assert len(sent) == SAMPLES and not any(r["cache_hit"] for r in rows)
    assert {b["seed"] for b in sent}.isdisjoint(first.values())


def test_association_samples_get_their_own_seeds(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    exp = write_experiment(tmp_path, probe_server.base_url, "association", SAMPLES)
    probe_server.reset_stats()
    run(cli, exp)
    seeds = [b["seed"] for b in generations(probe_server)]
    assert len(seeds) == SAMPLES and len(set(seeds)) == SAMPLES
    probe_server.reset_stats()
    run(cli, exp)
    assert probe_server.stats()["chat_requests"] == 0
