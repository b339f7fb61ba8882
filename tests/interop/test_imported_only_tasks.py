"""An experiment whose generations are all imported may list no `models:`, for every task that generates
(issue 22): qa_bias, association and decision (vqa and caption: tests/e2e/test_import_published_outputs.py)
import, run only their judge/extractor stage (the imported model is never called) and report. perplexity
cannot: it needs the models' own prompt logprobs (tests/tasks/test_vlm_prompts.py)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from interop_fixture import FIXTURES, fixture_experiment

from dialectbias.api import open_experiment
from dialectbias.config import load_experiment
from dialectbias.tasks import get_task


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def write_yaml(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def without_models(path: Path) -> Path:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    del raw["models"]
    return write_yaml(path, raw)


@pytest.fixture(scope="module")
def probe_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:probe_responder") as server:
        yield server


def test_qa_bias_judges_an_imported_inspect_log_without_models(cli: Any, qa_server: Any, tmp_path: Path) -> None:
    exp = without_models(fixture_experiment(tmp_path / "exp", qa_server.base_url))
    result = cli("run", exp, "--no-progress")  # nothing imported yet: said so, nothing scored
    assert result.exit_code == 4 and "lists no models and no generation was imported" in result.output
    result = cli("import-generations", exp, FIXTURES / "inspect.eval", "--from", "inspect", "--model", "qwen-x")
    assert result.exit_code == 0, result.output
    qa_server.reset_stats()
    run = cli("run", exp, "--no-progress")
    assert run.exit_code == 0, run.output
    assert qa_server.stats()["chat_by_model"] == {"judge-model": 6}  # 3 items × 2 dialects; qwen-x never called
    assert cli("report", exp, "--out", tmp_path / "report").exit_code == 0
    rows = read_csv(tmp_path / "report" / "qa_bias_model_by_dialect.csv")
    assert {r["model"] for r in rows} == {"qwen-x", "dialect_avg"}
    assert "qwen-x (generations imported)" in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    _, task = open_experiment(exp)
    assert task.review_model_ids() == ["qwen-x"]


def test_qa_bias_without_models_runs_only_the_imported_requests(cli: Any, qa_server: Any, tmp_path: Path) -> None:
    """Half a log imported: the other half has no model to ask, so it is skipped, not sent."""
    exp = without_models(fixture_experiment(tmp_path / "exp", qa_server.base_url))
    full = (FIXTURES / "lm_eval_samples.jsonl").read_text(encoding="utf-8").splitlines()
    part = tmp_path / "part.jsonl"
    part.write_text("\n".join(x for x in full if json.loads(x)["doc"]["item_id"] == "q01") + "\n", encoding="utf-8")
    assert cli("import-generations", exp, part, "--from", "lm-eval", "--model", "m").exit_code == 0
    qa_server.reset_stats()
    run = cli("run", exp, "--no-progress")
    assert run.exit_code == 0, run.output
    assert qa_server.stats()["chat_by_model"] == {"judge-model": 2}  # q01's two dialects only


def association_config(base_url: str) -> dict[str, Any]:
    return {"name": "assoc-imp", "task": "association", "seed": 3,
            "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "samples": 2,
                        "traits": ["uneducated"], "prefix": ["default", "imagine"]}}


def test_association_scores_imported_answers_without_models(cli: Any, probe_server: Any, tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "assoc.yaml", association_config(probe_server.base_url))
    exp = load_experiment(path)
    task: Any = get_task(exp.task)(exp)
    lines = []
    for item in task.load_items():
        for prefix in ("default", "imagine"):
            p = task._prompt(item, prefix)  # every trait adjective to the dialect writer: bias +1
            writer = {a: p.dialect_writer if a in p.trait_adjectives else p.standard_writer for a in p.adjectives}
            lines.append({"item_id": item.id, "variant": "bavarian", "model": "elsewhere", "setting": "naming",
                          "prefix": prefix, "output": "\n".join(f"{a}: {writer[a]}" for a in p.adjectives)})
    gen = tmp_path / "gen.jsonl"
    gen.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    result = cli("import-generations", path, gen)
    assert result.exit_code == 0, result.output
    probe_server.reset_stats()
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    assert probe_server.stats()["chat_requests"] == 0
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    rows = read_csv(tmp_path / "report/association_bias_by_prefix.csv")
    assert {(r["model"], r["prefix"], r["n_prompts"], float(r["bias"])) for r in rows} == {
        ("elsewhere", "default", "2", 1.0), ("elsewhere", "imagine", "2", 1.0)}


def test_decision_through_an_exported_lm_eval_task_without_models(cli: Any, probe_server: Any,
                                                                 tmp_path: Path) -> None:
    """The request keys (scenario, setting, prefix) travel in the ids: the exported docs, answered as lm-eval
    logs them, land on their requests; the extractor reads them; the report scores them."""
    path = write_yaml(tmp_path / "dec.yaml", {
        "name": "dec-imp", "task": "decision", "seed": 3,
        "roles": {"extractor": {"provider": "openai", "base_url": probe_server.base_url, "model": "extractor"}},
        "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "samples": 2, "traits": ["uneducated"],
                    "scenarios": ["uneducated_1", "uneducated_2"], "prefix": ["default", "consider"]}})
    result = cli("export", path, "--lm-eval-task", tmp_path / "lm")
    assert result.exit_code == 0, result.output
    docs = [json.loads(x) for x in (tmp_path / "lm" / "dialectbias_dec_imp.jsonl").read_text("utf-8").splitlines()]
    assert len(docs) == 2 * 2 * 2  # samples × scenarios × prefixes
    assert all(set(d["request_keys"]) == {"scenario", "setting", "prefix"} for d in docs)
    assert docs[0]["id"] == (f"{docs[0]['item_id']}|bavarian|scenario={docs[0]['request_keys']['scenario']}"
                             f"|setting=naming|prefix={docs[0]['request_keys']['prefix']}")
    exp = load_experiment(path)
    task: Any = get_task(exp.task)(exp)
    items = {i.id: i for i in task.load_items()}
    samples = []
    for n, d in enumerate(docs):  # lm-eval's --log_samples lines, answered stereotypically
        item = items[d["item_id"]]
        scenario = next(s for s in task._trait_scenarios(item.metadata["trait"])
                        if s.name == d["request_keys"]["scenario"])
        p = task.prompt(item, scenario, d["request_keys"]["prefix"])
        assert p.text in d["prompt"]  # the doc carries the run's prompt
        by_writer = {p.dialect_writer: p.trait_option, p.standard_writer: p.opposite_option}
        answer = (f"Task 1: Writer A likes chess. Writer B likes tea.\n\nTask 2:\nWriter A: {by_writer['A']}\n"
                  f"Writer B: {by_writer['B']}")
        samples.append({"doc_id": n, "doc": d, "target": "", "resps": [[answer]], "filtered_resps": [answer],
                        "filter": "none", "metrics": ["exact_match"]})
    log = tmp_path / "samples_dialectbias_dec_imp_2026.jsonl"
    log.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
    result = cli("import-generations", path, log, "--from", "lm-eval", "--model", "elsewhere")
    assert result.exit_code == 0, result.output
    assert "8 sample(s): 8 imported" in result.stdout
    probe_server.reset_stats()
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    assert probe_server.stats()["chat_by_model"] == {"extractor": 8}
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    rows = read_csv(tmp_path / "report/decision_bias_by_trait.csv")
    assert {(r["model"], r["prefix"], r["n_answers"], r["n_extracted"], float(r["bias"])) for r in rows} == {
        ("elsewhere", "default", "4", "4", 1.0), ("elsewhere", "consider", "4", "4", 1.0)}
