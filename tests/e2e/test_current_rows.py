"""Current rows only (issue 6.8, 7.7): after the experiment changes, export marks superseded rows, and
status, the run summary and the report speak of the experiment as it is now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectbias.store import Store
from dialectbias.tasks.qa_bias._report import final_scores


def two_judge_project(qa: Any, qa_server: Any, qa_project: Any) -> Any:
    """4 items × 3 variants × 2 models = 24 generations; 2 judges × 2 models × 4 items × 2 dialects = 32."""
    project = qa_project(qa_server.base_url, n_items=4)
    judge = project.config["judges"][0]
    project.config["judges"].append({**judge, "id": "judge-2", "model": "judge-model-2", "role": "secondary"})
    project.rewrite()
    return project


def run(cli: Any, project: Any, expect: int = 0) -> Any:
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == expect, result.output
    return result


def export(cli: Any, qa: Any, project: Any, out: Path) -> dict[str, list[dict[str, Any]]]:
    result = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    return {name: qa.read_jsonl(out / f"{name}.jsonl") for name in ("generations", "judgments")}


def status(cli: Any, qa: Any, project: Any) -> tuple[str, dict[tuple[str, str], dict[str, str]]]:
    result = cli("status", project.yaml_path)
    assert result.exit_code == 0, result.output
    return result.stdout, {(b["stage"], b["model"]): b for b in qa.parse_table(result.stdout)}


def edit_item_text(qa: Any, project: Any, n_items: int = 4) -> None:
    """Item q01's sylhet question is reworded."""
    items = [qa.qa_item(i) for i in range(n_items)]
    items[0]["variants"]["sylhet"] = items[0]["variants"]["sylhet"].replace("কিতা", "কিতা অয়")
    qa.write_jsonl(project.dir / "items.jsonl", items)


def test_edited_item_export_marks_the_old_generation_and_judgments_superseded(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    project = two_judge_project(qa, qa_server, qa_project)
    run(cli, project)
    edit_item_text(qa, project)
    run(cli, project)
    result = cli("export", project.yaml_path, "--format", "jsonl", "--out", tmp_path / "export")
    assert "26 generations" in result.stdout and "(2 superseded: current=false)" in result.stdout
    assert "(4 superseded: current=false)" in result.stdout  # the judgments' line
    rows = export(cli, qa, project, tmp_path / "export")
    gens, judgments = rows["generations"], rows["judgments"]
    assert (len(gens), len(judgments)) == (26, 36)  # everything is kept for provenance …
    assert sum(g["current"] for g in gens) == 24 and sum(j["current"] for j in judgments) == 32  # … and marked
    old_gens = [g for g in gens if not g["current"]]
    assert {(g["model"], g["item_id"], g["variant"]) for g in old_gens} == {
        ("model-a", "q01", "sylhet"), ("model-b", "q01", "sylhet")}
    assert all("কিতা অয়" not in g["rendered_prompt"] for g in old_gens)
    old_judgments = {(j["judge_id"], j["model_id"], j["item_id"], j["variant"]) for j in judgments if not j["current"]}
    assert old_judgments == {(jd, m, "q01", "sylhet") for jd in ("judge-1", "judge-2") for m in ("model-a", "model-b")}
    # the report reads the current judgments: one per (judge, model, item, dialect), the new ones
    current_ids = {j["request_id"] for j in judgments if j["current"]}
    with Store.open(project.store_path, create=False) as store:
        for judge in ("judge-1", "judge-2"):
            scores = final_scores(store, judge, ["model-a", "model-b"])
            assert len(scores) == 16 and set(scores.request_id) <= current_ids
    text, blocks = status(cli, qa, project)
    assert {k: (b["requests"], b["superseded"]) for k, b in blocks.items()} == {
        ("generate", "model-a"): ("12", "1"), ("generate", "model-b"): ("12", "1"),
        ("judge", "judge-1"): ("16", "2"), ("judge", "judge-2"): ("16", "2")}
    assert "judgments: 32 · " in text and "superseded: 4" in text


def test_changed_params_status_counts_no_old_failure(qa_server: Any, qa_project: Any, cli: Any, qa: Any) -> None:
    project = qa_project(qa_server.base_url, n_items=2, model={"max_retries": 0})
    qa_server.set_faults([{"kind": "500", "match": "model-b"}])  # every call of model-b fails
    run(cli, project, expect=3)
    qa_server.set_faults(None)
    project.config["models"][1]["params"] = {"temperature": 0.3}  # new requests for model-b
    project.rewrite()
    result = run(cli, project)
    summary = {(b["stage"], b["model"]): b for b in qa.parse_table(result.stdout)}
    assert (summary[("generate", "model-b")]["requests"], summary[("generate", "model-b")]["failed"]) == ("6", "0")
    _, blocks = status(cli, qa, project)
    b = blocks[("generate", "model-b")]
    assert (b["requests"], b["done"], b["failed"], b["pending"], b["superseded"]) == ("6", "6", "0", "0", "6")
    assert blocks[("judge", "judge-1")]["failed"] == "0"


def interrupt_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run stops while generating (as Ctrl-C would), after the generate stage was compiled."""
    from dialectbias.run._executor import LocalExecutor

    original = LocalExecutor.run_stage

    async def stop_in_generate(self: Any, stage: Any, *args: Any, **kwargs: Any) -> None:
        if stage.name == "generate":
            raise KeyboardInterrupt
        await original(self, stage, *args, **kwargs)

    monkeypatch.setattr(LocalExecutor, "run_stage", stop_in_generate)


def test_interrupted_first_run_shows_the_judge_stage_not_compiled(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    project = qa_project(qa_server.base_url, n_items=2)
    interrupt_generation(monkeypatch)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 130
    text, blocks = status(cli, qa, project)
    assert blocks[("generate", "model-a")]["pending"] == "6"
    assert ("judge", "judge-1") in blocks
    assert "judge · judge-1\n  not compiled yet: the next run builds its requests after generate" in text


def test_interrupted_rerun_keeps_judgments_of_unchanged_answers_and_says_the_judge_is_outdated(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    project = qa_project(qa_server.base_url, n_items=4)
    run(cli, project)
    edit_item_text(qa, project)
    interrupt_generation(monkeypatch)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 130
    text, blocks = status(cli, qa, project)
    assert (blocks[("generate", "model-a")]["pending"], blocks[("generate", "model-a")]["superseded"]) == ("1", "1")
    judge = blocks[("judge", "judge-1")]
    assert (judge["requests"], judge["superseded"]) == ("14", "2")  # the judgments of q01/sylhet's old answers
    assert "judge · judge-1\n  outdated: compiled before the last generate; rebuilt by the next run\n" in text
    judgments = export(cli, qa, project, tmp_path / "export")["judgments"]
    assert {(j["model_id"], j["item_id"], j["variant"]) for j in judgments if not j["current"]} == {
        ("model-a", "q01", "sylhet"), ("model-b", "q01", "sylhet")}


def test_a_model_removed_from_the_experiment_is_superseded(qa_server: Any, qa_project: Any, cli: Any,
                                                           qa: Any, tmp_path: Path) -> None:
    project = qa_project(qa_server.base_url, n_items=2)
    run(cli, project)
    project.config["models"] = project.config["models"][:1]
    project.rewrite()
    result = run(cli, project)
    assert "judge judge-1: 4 judgments" in result.stdout  # model-a only: 2 items × 2 dialects
    text, blocks = status(cli, qa, project)
    assert blocks[("generate", "model-b")]["superseded"] == "6"
    assert "generate · model-b\n  no longer in the experiment\n  superseded 6" in text
    rows = export(cli, qa, project, tmp_path / "export")
    assert {g["model"] for g in rows["generations"] if g["current"]} == {"model-a"}
    assert json.dumps(sorted({j["model_id"] for j in rows["judgments"] if j["current"]})) == '["model-a"]'
