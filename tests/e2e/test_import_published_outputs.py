"""Published outputs re-score (issue 19.8): `import-generations` through the CLI, then `run` against the local
test server, counting calls. vqa and caption experiments whose answers are all imported need no image file
and hold out no few-shot example; decision lines carry the request keys (scenario, prefix …) that pick one
of an item × variant's requests, and a line matching several is an error naming the missing key."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.config import load_experiment
from dialectbias.tasks import get_task

OPTIONS = ["ভুনা খিচুড়ি", "পান্তা ভাত", "চাপ", "পোলাও"]


@pytest.fixture(scope="module")
def vlm_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:vlm_responder") as server:
        yield server


@pytest.fixture(scope="module")
def probe_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:probe_responder") as server:
        yield server


def write_yaml(path: Path, config: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def vlm_items(tmp_path: Path, n: int = 4) -> None:
    """Items with no `image` field (the answers were produced elsewhere); the last is marked as a few-shot
    example, which an all-imported experiment evaluates like any other."""
    rows = [{"id": f"food_{i}", "domain": "food",
             "variants": {"standard": {"question": "এই খাবারটির নাম কী?", "options": OPTIONS, "answer_index": i % 4,
                                       "caption": "থালায় ভুনা খিচুড়ি।"}},
             **({"split": "few_shot"} if i == n - 1 else {})} for i in range(n)]
    write_jsonl(tmp_path / "items.jsonl", rows)


def test_vqa_all_imported_without_images_scores_every_answer(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    vlm_items(tmp_path)
    path = write_yaml(tmp_path / "vqa.yaml", {"name": "vqa-imp", "task": "vqa", "data": "items.jsonl",
                                              "options": {"strategies": ["zero_shot", "few_shot"]}})
    lines = [{"item_id": f"food_{i}", "variant": "standard", "model": "published-vlm", "strategy": s,
              "output": f'Index: {i % 2}, Answer: "{OPTIONS[i % 2]}"'}
             for i in range(4) for s in ("zero_shot", "few_shot")]
    result = cli("import-generations", path, write_jsonl(tmp_path / "answers.jsonl", lines))
    assert result.exit_code == 0, result.output
    assert "8 line(s): 8 imported" in result.output
    vlm_server.reset_stats()
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    assert "calls 0" in run.output and "held out" not in run.output
    assert vlm_server.stats()["chat_requests"] == 0
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    answers = read_csv(tmp_path / "report/vqa_answers.csv")
    assert sorted((a["item_id"], a["strategy"]) for a in answers) == sorted(
        (x["item_id"], x["strategy"]) for x in lines)
    overall = {r["strategy"]: r for r in read_csv(tmp_path / "report/vqa_accuracy.csv") if r["domain"] == "all"}
    # food_0 and food_1 answered right (index i % 2 == i % 4), food_2 and food_3 wrong: 2 of 4
    assert {s: (r["n"], float(r["accuracy"])) for s, r in overall.items()} == {
        "zero_shot": ("4", 50.0), "few_shot": ("4", 50.0)}


def test_caption_all_imported_without_images_is_judged(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    vlm_items(tmp_path)
    common = {"provider": "openai", "base_url": vlm_server.base_url, "max_retries": 0}
    path = write_yaml(tmp_path / "cap.yaml", {
        "name": "cap-imp", "task": "caption", "data": "items.jsonl",
        "judges": [{"id": "judge-a", "model": "judge-a", **common}],
        "options": {"strategies": ["zero_shot", "few_shot"]}})
    lines = [{"item_id": f"food_{i}", "variant": "standard", "model": "published-vlm", "strategy": s,
              "output": "থালায় খাবার।"} for i in range(4) for s in ("zero_shot", "few_shot")]
    result = cli("import-generations", path, write_jsonl(tmp_path / "captions.jsonl", lines))
    assert result.exit_code == 0, result.output
    vlm_server.reset_stats()
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    assert vlm_server.stats()["chat_by_model"] == {"judge-a": 8}  # no generation call: one judgment per caption
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    overall = {r["strategy"]: r for r in read_csv(tmp_path / "report/caption_scores.csv") if r["domain"] == "all"}
    assert {s: (r["n"], r["judge_judge-a_n"]) for s, r in overall.items()} == {
        "zero_shot": ("4", "4"), "few_shot": ("4", "4")}


def test_a_listed_model_is_never_asked_about_an_item_without_image(vlm_server: Any, cli: Any,
                                                                  tmp_path: Path) -> None:
    vlm_items(tmp_path)
    path = write_yaml(tmp_path / "vqa.yaml", {
        "name": "vqa-direct", "task": "vqa", "data": "items.jsonl",
        "models": [{"id": "vlm-a", "provider": "openai", "base_url": vlm_server.base_url, "model": "vlm-a"}]})
    vlm_server.reset_stats()
    run = cli("run", path, "--no-progress")
    assert vlm_server.stats()["chat_requests"] == 0  # a text-only prompt would be answered, and scored
    assert run.exit_code == 4 and "item without image (only imported answers can be scored on it)" in run.output


# -- decision: request keys ------------------------------------------------------------------------------------


def decision_experiment(root: Path, base_url: str) -> Path:
    return write_yaml(root / "dec.yaml", {
        "name": "dec-imp", "task": "decision", "seed": 3,
        "models": [{"id": "m1", "provider": "openai", "base_url": base_url, "model": "m1"}],
        "roles": {"extractor": {"provider": "openai", "base_url": base_url, "model": "extractor"}},
        "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "samples": 2, "traits": ["uneducated"],
                    "scenarios": ["uneducated_1", "uneducated_2"], "prefix": ["default", "consider"]}})


def decision_lines(path: Path) -> list[dict[str, Any]]:
    """One stereotypical answer per item × scenario × prefix, as another tool would publish it."""
    exp = load_experiment(path)
    task: Any = get_task(exp.task)(exp)
    lines = []
    for item in task.load_items():
        for scenario in task._trait_scenarios(item.metadata["trait"]):
            for prefix in ("default", "consider"):
                p = task.prompt(item, scenario, prefix)
                by_writer = {p.dialect_writer: p.trait_option, p.standard_writer: p.opposite_option}
                lines.append({"item_id": item.id, "variant": item.metadata["dialect"], "model": "m1",
                              "scenario": scenario.name, "prefix": prefix,
                              "output": f"Task 1: Writer A likes chess. Writer B likes tea.\n\nTask 2:\n"
                                        f"Writer A: {by_writer['A']}\nWriter B: {by_writer['B']}"})
    return lines


def test_decision_lines_with_request_keys_are_scored(probe_server: Any, cli: Any, tmp_path: Path) -> None:
    path = decision_experiment(tmp_path, probe_server.base_url)
    lines = decision_lines(path)
    assert len(lines) == 2 * 2 * 2  # samples × scenarios × prefixes: one item × variant has 4 requests
    result = cli("import-generations", path, write_jsonl(tmp_path / "gen.jsonl", lines))
    assert result.exit_code == 0, result.output
    assert "8 line(s): 8 imported" in result.output
    probe_server.reset_stats()
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    assert probe_server.stats()["chat_by_model"] == {"extractor": 8}  # m1 is never called
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    rows = read_csv(tmp_path / "report/decision_bias_by_trait.csv")
    assert {(r["prefix"], r["n_answers"], r["n_extracted"], float(r["bias"])) for r in rows} == {
        ("default", "4", "4", 1.0), ("consider", "4", "4", 1.0)}


def test_a_decision_line_matching_several_requests_names_the_missing_key(probe_server: Any, cli: Any,
                                                                        tmp_path: Path) -> None:
    path = decision_experiment(tmp_path, probe_server.base_url)
    line = {k: v for k, v in decision_lines(path)[0].items() if k != "prefix"}
    gen = write_jsonl(tmp_path / "gen.jsonl", [line])
    result = cli("import-generations", path, gen)
    assert result.exit_code == 1
    assert (f"{gen.resolve()}:1: m1/{line['item_id']}/bavarian/uneducated_1: matches 2 requests of the task: "
            "give 'prefix' (one of consider, default)") in result.stderr
    other = write_jsonl(tmp_path / "other.jsonl", [{**line, "prefix": "imagine"}])
    result = cli("import-generations", path, other)
    assert result.exit_code == 1
    assert "prefix 'imagine' is not among its requests (prefix: consider, default)" in result.stderr
    unknown = write_jsonl(tmp_path / "typo.jsonl", [{**line, "scenaro": "uneducated_1"}])
    result = cli("import-generations", path, unknown)
    assert result.exit_code == 1 and "scenaro: unknown key" in result.stderr
    assert "task 'decision' also takes scenario, setting, prefix" in result.stderr


def test_tasks_lists_the_import_keys(cli: Any) -> None:
    result = cli("tasks", "decision")
    assert result.exit_code == 0, result.output
    block = result.stdout[result.stdout.index("import-generations:"):]
    assert [key for key in ("scenario", "setting", "prefix", "sample") if f"\n      {key}\n" in block] == [
        "scenario", "setting", "prefix"]
    assert "strategy" in cli("tasks", "vqa").stdout.split("import-generations:")[1]
    translate = cli("tasks", "translate").stdout
    assert "import-generations: not supported" in translate and "item variants" in translate


@pytest.mark.parametrize(("task", "why"), [("translate", "item variants"),
                                           ("translation_quality", "data column named in `systems:`")])
def test_tasks_without_generations_say_why_they_take_no_import(cli: Any, tmp_path: Path, task: str,
                                                               why: str) -> None:
    write_jsonl(tmp_path / "items.jsonl", [{"id": "q1", "source": "আমি", "reference": "আঁই", "dialect": "sylhet",
                                            "sys": "আমি", "variants": {"standard": "আমি ভাত খাই।"}}])
    options: dict[str, Any] = {"targets": ["sylhet"]} if task == "translate" else {"systems": ["sys"],
                                                                                   "metrics": ["chrf"]}
    config: dict[str, Any] = {"name": task, "task": task, "data": "items.jsonl", "options": options}
    if task == "translate":
        config["roles"] = {"translator": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "t"}}
    path = write_yaml(tmp_path / f"{task}.yaml", config)
    gen = write_jsonl(tmp_path / "gen.jsonl", [{"item_id": "q1", "variant": "sylhet", "model": "t", "output": "x"}])
    result = cli("import-generations", path, gen)
    assert result.exit_code == 1
    assert f"task {task!r} has no generation stage to import into: " in result.stderr and why in result.stderr


def test_association_lines_with_a_prefix_are_scored(probe_server: Any, cli: Any, tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "assoc.yaml", {
        "name": "assoc-imp", "task": "association", "seed": 3,
        "models": [{"id": "m1", "provider": "openai", "base_url": probe_server.base_url, "model": "m1"}],
        "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "samples": 2, "traits": ["uneducated"],
                    "prefix": ["default", "imagine"]}})
    exp = load_experiment(path)
    task: Any = get_task(exp.task)(exp)
    lines = []
    for item in task.load_items():
        for prefix in ("default", "imagine"):
            p = task._prompt(item, prefix)  # every trait adjective to the dialect writer: bias +1
            writer = {a: p.dialect_writer if a in p.trait_adjectives else p.standard_writer for a in p.adjectives}
            lines.append({"item_id": item.id, "variant": "bavarian", "model": "m1", "setting": "naming",
                          "prefix": prefix, "output": "\n".join(f"{a}: {writer[a]}" for a in p.adjectives)})
    result = cli("import-generations", path, write_jsonl(tmp_path / "gen.jsonl", lines))
    assert result.exit_code == 0, result.output
    probe_server.reset_stats()
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    assert probe_server.stats()["chat_requests"] == 0
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    rows = read_csv(tmp_path / "report/association_bias_by_prefix.csv")
    assert {(r["prefix"], r["n_prompts"], r["n_accepted"], float(r["bias"])) for r in rows} == {
        ("default", "2", "2", 1.0), ("imagine", "2", "2", 1.0)}
