"""The LoRA dialect generator end to end (issue 10 "Done means"): `dialectbias train-translator` trains an
adapter on a tiny random Llama, a `translate` experiment serves it with `provider: hf` + `adapter:` and sends
the training instruction verbatim (`options.prompt: instruction`, `prompt_format: raw`), `dialectbias run`
stores its translations (garbage from a random model: counted as failures by reason) and `dialectbias status`
shows them."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from dialectbias.train import instruction_prompt
from tiny_llm import build_tiny_llama, write_corpus

ITEMS = [{"id": "q1", "variants": {"standard": "তোমার নাম কী?"}},
         {"id": "q2", "variants": {"standard": "আমরা ভাত খাব।"}},
         {"id": "q3", "variants": {"standard": "বোরো ধান কাকে বলে?"}}]
TARGETS = ["sylhet", "chittagong"]


def test_translate_experiment_on_the_trained_adapter(cli: Any, tmp_path: Path) -> None:
    base = build_tiny_llama(tmp_path / "base")
    corpus = write_corpus(tmp_path / "corpus")
    adapter = tmp_path / "adapter"
    trained = cli("train-translator", corpus, "--base-model", base, "--out", adapter, "--max-steps", "4",
                  "--grad-accum", "1", "--learning-rate", "0.01", "--logging-steps", "1", "--num-threads", "1")
    assert trained.exit_code == 0, trained.output
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                          encoding="utf-8")
    exp = tmp_path / "lora.yaml"
    translator = {"provider": "hf", "model": str(base), "adapter": str(adapter), "prompt_format": "raw",
                  "num_threads": 1, "params": {"temperature": 0.7, "max_tokens": 12, "seed": 0}}
    exp.write_text(yaml.safe_dump({"name": "lora", "task": "translate", "data": "items.jsonl",
                                   "roles": {"translator": translator},
                                   "options": {"targets": TARGETS, "prompt": "instruction"}}, allow_unicode=True),
                   encoding="utf-8")
    run = cli("run", exp)
    # a random model's continuations are rarely Bengali: exit 4 (no usable translation) is expected, 3 is not
    assert run.exit_code in (0, 4), run.output
    counts = re.search(r"translate: (\d+) translated · (\d+) failed", run.stdout)
    assert counts and int(counts[1]) + int(counts[2]) == len(ITEMS) * len(TARGETS), run.stdout
    assert f"zero-shot prompts: {len(ITEMS) * len(TARGETS)} instruction prompt" in run.stdout

    with sqlite3.connect(tmp_path / "lora.sqlite") as db:
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT r.item_id, r.variant, r.template, r.messages, r.params, s.status, s.output "
                          "FROM requests r JOIN results s ON s.request_id = r.request_id").fetchall()
    assert len(rows) == len(ITEMS) * len(TARGETS)
    texts = {i["id"]: i["variants"]["standard"] for i in ITEMS}
    for row in rows:
        assert row["template"] == "translate/instruction" and row["status"] == "ok"
        (message,) = json.loads(row["messages"])
        assert message["content"] == instruction_prompt("Bengali", row["variant"].title(), texts[row["item_id"]])
        params = json.loads(row["params"])
        assert params["temperature"] == 0.7 and "\n" in params["stop"] and "Standard Bengali:" in params["stop"]
        assert row["output"] is not None and "\n" not in row["output"]

    status = cli("status", exp)
    assert status.exit_code == 0, status.output
    assert "translate · translator" in status.stdout and f"done {len(rows)}" in status.stdout
    again = cli("run", exp)  # everything cached: no model call, the same counts
    assert again.exit_code == run.exit_code
    with sqlite3.connect(tmp_path / "lora.sqlite") as db:
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == len(rows)
