"""`dialectbias export --inspect-dataset / --lm-eval-task`: every prompt the run sends, under an id that leads
back to its request (checked against the requests `dialectbias run` stored), in the formats the harnesses read."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from interop_fixture import fixture_experiment

from dialectbias.errors import DataError
from dialectbias.interop import parse_sample_id, sample_id


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("item", "variant", "keys", "text"), [
    ("q1", "sylhet", {}, "q1|sylhet"),
    ("q1", "sylhet", {"strategy": "cot"}, "q1|sylhet|strategy=cot"),
    ("a|b=c%", "std", {"prefix": "x|y", "sample": 3}, "a%7Cb%3Dc%25|std|prefix=x%7Cy|sample=3"),
])
def test_sample_ids_round_trip(item: str, variant: str, keys: dict[str, Any], text: str) -> None:
    assert sample_id(item, variant, keys) == text
    assert parse_sample_id(text, "here") == (item, variant, {k: str(v) for k, v in keys.items()})


@pytest.mark.parametrize("text", ["q1", "|sylhet", "q1|sylhet|strategy"])
def test_ids_that_are_not_ours_are_named(text: str) -> None:
    with pytest.raises(DataError, match=rf"here: sample id '{text}' is not one `dialectbias export` writes"):
        parse_sample_id(text, "here")


def stored_requests(store: Path) -> dict[tuple[str, str, str], tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT model_id, item_id, variant, request_id, messages, params FROM requests "
                          "WHERE stage = 'generate'").fetchall()
    return {(m, i, v): (r, json.loads(msgs), json.loads(params)) for m, i, v, r, msgs, params in rows}


def test_the_inspect_dataset_holds_the_prompts_the_run_sent(cli: Any, session_server: Any, tmp_path: Path) -> None:
    exp = fixture_experiment(tmp_path / "exp", session_server.base_url)
    assert cli("run", exp, "--no-progress").exit_code == 0
    out = tmp_path / "ds.jsonl"
    result = cli("export", exp, "--inspect-dataset", out)
    assert result.exit_code == 0, result.output
    assert "9 prompts →" in result.stdout
    assert "  --max-tokens 512 --temperature 0\n" in result.stdout  # the run's settings, as inspect options
    rows = read_jsonl(out)
    sent = stored_requests(tmp_path / "exp" / "bnqa.sqlite")
    assert len(rows) == 9 == len(sent) // 2
    for row in rows:
        meta = row["metadata"]
        assert row["id"] == f"{meta['item_id']}|{meta['variant']}"
        assert meta["task"] == "qa_bias" and meta["request_keys"] == {}
        for model in ("model-a", "model-b"):
            request_id, messages, _ = sent[(model, meta["item_id"], meta["variant"])]
            assert meta["request_ids"][model] == request_id
            assert messages == [{"role": "user", "content": row["input"]}]  # the very text the run sent


def test_the_lm_eval_task_sends_the_run_s_prompt_and_settings(cli: Any, session_server: Any, tmp_path: Path) -> None:
    exp = fixture_experiment(tmp_path / "exp", session_server.base_url)
    assert cli("run", exp, "--no-progress").exit_code == 0
    out = tmp_path / "lm"
    result = cli("export", exp, "--lm-eval-task", out)
    assert result.exit_code == 0, result.output
    assert "lm-eval tasks: dialectbias_bnqa" in result.stdout
    config = yaml.safe_load((out / "dialectbias_bnqa.yaml").read_text(encoding="utf-8"))
    assert config["output_type"] == "generate_until" and config["dataset_path"] == "json"
    assert config["dataset_kwargs"]["data_files"]["test"] == str((out / "dialectbias_bnqa.jsonl").resolve())
    assert config["doc_to_text"] == "{{prompt}}" and "description" not in config  # no system message to send
    sent = stored_requests(tmp_path / "exp" / "bnqa.sqlite")
    params = sent[("model-a", "q01", "standard")][2]
    assert config["generation_kwargs"] == {"until": [], "do_sample": False, "temperature": params["temperature"],
                                           "max_gen_toks": params["max_tokens"]}
    docs = read_jsonl(out / "dialectbias_bnqa.jsonl")
    assert {d["id"] for d in docs} == {f"q0{i}|{v}" for i in (1, 2, 3) for v in ("standard", "chittagong", "sylhet")}
    for d in docs:
        assert sent[("model-a", d["item_id"], d["variant"])][1] == [{"role": "user", "content": d["prompt"]}]
    # the settings follow the experiment: a new answer budget is in the next export
    raw = yaml.safe_load(exp.read_text(encoding="utf-8"))
    raw["options"] = {"max_tokens": 77}
    exp.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    assert cli("export", exp, "--lm-eval-task", out).exit_code == 0
    config = yaml.safe_load((out / "dialectbias_bnqa.yaml").read_text(encoding="utf-8"))
    assert config["generation_kwargs"]["max_gen_toks"] == 77


def test_an_experiment_without_models_exports_the_same_prompts(cli: Any, tmp_path: Path) -> None:
    listed = fixture_experiment(tmp_path / "a")
    bare = fixture_experiment(tmp_path / "b")
    raw = yaml.safe_load(bare.read_text(encoding="utf-8"))
    del raw["models"]
    bare.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    for exp, out in ((listed, tmp_path / "a.jsonl"), (bare, tmp_path / "b.jsonl")):
        assert cli("export", exp, "--inspect-dataset", out).exit_code == 0
    a, b = read_jsonl(tmp_path / "a.jsonl"), read_jsonl(tmp_path / "b.jsonl")
    assert [(r["id"], r["input"]) for r in a] == [(r["id"], r["input"]) for r in b]
    assert all(r["metadata"]["request_ids"] == {} for r in b)


def test_images_go_to_inspect_and_are_refused_for_lm_eval(cli: Any, tmp_path: Path, qa: Any) -> None:
    from PIL import Image

    exp = fixture_experiment(tmp_path / "exp")
    Image.new("RGB", (4, 4), "red").save(tmp_path / "exp" / "map.png")
    items = [{**qa.qa_item(0), "image": "map.png"}]
    qa.write_jsonl(tmp_path / "exp" / "items.jsonl", items)
    assert cli("export", exp, "--inspect-dataset", tmp_path / "ds.jsonl").exit_code == 0
    row = read_jsonl(tmp_path / "ds.jsonl")[0]
    image, text = row["input"][0]["content"]
    assert image["type"] == "image" and image["image"].startswith("data:image/png;base64,")
    assert base64.b64decode(image["image"].split(",", 1)[1]) == (tmp_path / "exp" / "map.png").read_bytes()
    assert text["type"] == "text" and "ঢাকা" in text["text"]
    result = cli("export", exp, "--lm-eval-task", tmp_path / "lm")
    assert result.exit_code == 1
    assert "q01|chittagong: the prompt holds an image, which an lm-eval generate_until task cannot send" in \
        " ".join(result.stderr.split())


def test_a_task_without_generations_says_why(cli: Any, tmp_path: Path, qa: Any) -> None:
    qa.write_jsonl(tmp_path / "items.jsonl", [{"id": "q1", "variants": {"standard": "আমি", "sylhet": "আঁই"}}])
    config = {"name": "ppl", "task": "perplexity", "data": "items.jsonl",
              "models": [{"id": "m", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}]}
    path = tmp_path / "ppl.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = cli("export", path, "--inspect-dataset", tmp_path / "ds.jsonl")
    assert result.exit_code == 1
    assert "task 'perplexity' has no generation stage to export: perplexity needs each model's own prompt token " \
        "logprobs" in " ".join(result.stderr.split())
