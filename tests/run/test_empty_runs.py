"""Runs that produce nothing say so (issue 6.10): empty data, items without a dialect variant, missing
variant cells, all judgments unscored, all association answers rejected; and oversized items (issue 7.8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dialectbias.api import run_experiment
from dialectbias.cli import _data  # noqa: F401 - registers `build questions`
from dialectbias.cli._app import EXIT_EMPTY, EXIT_ERROR
from dialectbias.store import Store


def error_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def warning_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("warning:")]


def run(cli: Any, project: Any) -> Any:
    return cli("run", project.yaml_path, "--no-progress")


# -- empty data ---------------------------------------------------------------------------------


def test_an_empty_data_file_is_an_error_naming_it(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url, items=[])
    result = run(cli, project)
    assert result.exit_code == EXIT_ERROR
    assert error_lines(result) == [
        f"error: {project.dir / 'items.jsonl'}: the data file is empty; expected one JSON object per line, "
        'e.g. {"id": "q001", "variants": {"standard": "…", "chittagong": "…"}}']
    assert qa_server.stats()["requests_total"] == 0


def test_a_whitespace_only_data_file_is_an_error_naming_it(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url)
    (project.dir / "items.jsonl").write_text("\n   \n\t\n", encoding="utf-8")
    result = run(cli, project)
    assert result.exit_code == EXIT_ERROR
    assert error_lines(result)[0].startswith(f"error: {project.dir / 'items.jsonl'}: the data file is empty;")


def test_a_csv_with_only_a_header_has_no_items(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url)
    (project.dir / "items.csv").write_text("id,variants.standard,variants.sylhet\n", encoding="utf-8")
    project.rewrite(data="items.csv")
    result = run(cli, project)
    assert result.exit_code == EXIT_ERROR
    assert error_lines(result)[0].startswith(f"error: {project.dir / 'items.csv'}: no items (no data rows); "
                                             "expected a header row id,variants.standard,")


# -- items without dialect variants ----------------------------------------------------------------------


def test_standard_only_items_from_build_questions_are_an_error(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url)
    built = cli("build", "questions", "--out", project.dir / "items.jsonl")
    assert built.exit_code == 0, built.output
    result = run(cli, project)
    assert result.exit_code == EXIT_ERROR
    (line,) = error_lines(result)
    assert line.startswith(f"error: {project.dir / 'items.jsonl'}: no item has a dialect variant, only "
                           "'standard', so task 'qa_bias' has nothing to compare. Add the dialect versions by hand")
    assert "with a `task: translate` experiment and `dialectbias export EXP --items OUT`." in line
    assert qa_server.stats()["requests_total"] == 0


def test_variants_keeping_only_standard_is_the_same_error(qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url)
    project.rewrite(variants=["standard"])
    (line,) = error_lines(run(cli, project))
    assert f"no item has a dialect variant among variants: ['standard'] of {project.yaml_path}, only" in line


def test_some_standard_only_items_are_a_counted_warning(qa: Any, qa_server: Any, qa_project: Any,
                                                        cli: Any) -> None:
    lonely = [{**qa.qa_item(i), "variants": {"standard": qa.qa_item(i)["variants"]["standard"]}} for i in (1, 2)]
    project = qa_project(qa_server.base_url, items=[qa.qa_item(0), *lonely, qa.qa_item(3)])
    result = run(cli, project)
    assert result.exit_code == 0, result.output
    assert warning_lines(result) == [
        f"warning: 2 of 4 items in {project.dir / 'items.jsonl'} have no dialect variant, only 'standard', so "
        "nothing compares with them: 'q02' (line 2); 'q03' (line 3). Add the dialect versions by hand, e.g. "
        '"variants": {"standard": "…", "chittagong": "…"} (CSV: a variants.chittagong column), or translate '
        "standard-only items (what `dialectbias build questions` writes) with a `task: translate` experiment and "
        "`dialectbias export EXP --items OUT`."]


def test_a_csv_row_missing_its_dialect_cell_is_a_counted_warning(qa: Any, qa_server: Any, qa_project: Any,
                                                                 cli: Any) -> None:
    project = qa_project(qa_server.base_url)
    rows = ["id,variants.standard,variants.chittagong,variants.sylhet"]
    for i in range(3):
        v = qa.qa_item(i)["variants"]
        rows.append(f"q{i + 1:02d},{v['standard']},{v['chittagong']},{'' if i == 1 else v['sylhet']}")
    (project.dir / "items.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    project.rewrite(data="items.csv")
    result = run(cli, project)
    assert result.exit_code == 0, result.output
    assert warning_lines(result) == [f"warning: variant 'sylhet' missing (absent or empty) in 1 of 3 items in "
                                     f"{project.dir / 'items.csv'}: 'q02' (line 3)"]


def test_input_warnings_are_repeated_when_a_run_reuses_the_stored_items(qa: Any, qa_server: Any,
                                                                        qa_project: Any) -> None:
    item = {**qa.qa_item(1), "variants": {"standard": "প্রশ্ন?", "chittagong": "প্রশ্ন?"}}
    project = qa_project(qa_server.base_url, items=[qa.qa_item(0), item])
    first = run_experiment(project.yaml_path, progress=False)
    again = run_experiment(project.yaml_path, progress=False)
    assert again.calls_made == 0 and again.empty == []
    assert first.warnings == again.warnings
    assert len(first.warnings) == 1 and first.warnings[0].startswith("variant 'sylhet' missing")


# -- stages without a usable result ----------------------------------------------------------------------


def test_all_judgments_unscored_exits_with_its_own_code(qa: Any, qa_server: Any, qa_project: Any,
                                                        cli: Any) -> None:
    qa_server.set_faults([{"kind": "invalid_json", "match": "STANDARD QUESTION"}])
    project = qa_project(qa_server.base_url, n_items=2)
    result = run(cli, project)
    assert result.exit_code == EXIT_EMPTY, result.output
    assert error_lines(result) == [
        "error: stage judge produced no usable result: judge-1: 0 of 8 judgments scored (8 unscored: the judge's "
        "answer failed validation; 0 with no answer)"]
    assert not warning_lines(result)


def test_one_judge_without_scores_is_a_warning(qa: Any, qa_server: Any, qa_project: Any) -> None:
    qa_server.set_faults([{"kind": "invalid_json", "match": "judge-2-model"}])
    project = qa_project(qa_server.base_url, n_items=2)
    judges = [*project.config["judges"], {**project.config["judges"][0], "id": "judge-2", "model": "judge-2-model",
                                          "role": "secondary"}]
    project.rewrite(judges=judges)
    summary = run_experiment(project.yaml_path, progress=False)
    assert summary.empty == []
    assert summary.warnings == ["judge · judge-2: no usable result: 0 of 8 judgments scored (8 unscored: the "
                                "judge's answer failed validation; 0 with no answer)"]


def test_all_generations_failed_exits_empty(qa: Any, qa_server: Any, qa_project: Any, cli: Any) -> None:
    qa_server.set_faults([{"kind": "500"}])
    project = qa_project(qa_server.base_url, n_items=1, model={"max_retries": 0})
    result = run(cli, project)
    assert result.exit_code == EXIT_EMPTY, result.output
    assert error_lines(result) == [
        "error: stage generate produced no usable result: model-a: 0 of 3 requests succeeded (3 failed, 0 not "
        "done); model-b: 0 of 3 requests succeeded (3 failed, 0 not done)",
        "error: stage judge produced no usable result: judge-1: no judge requests (no successful generation pair "
        "to judge)"]
    assert "6 request(s) failed after retries; run again to retry them." in result.stdout


def test_all_association_answers_rejected_exits_empty(qa_server: Any, tmp_path: Path, cli: Any) -> None:
    # the QA responder answers every prompt with a Bengali sentence: strict parsing rejects each one
    config = {"name": "assoc", "task": "association",
              "models": [{"id": "model-a", "provider": "openai", "base_url": qa_server.base_url, "model": "m",
                          "max_retries": 0}],
              "options": {"traits": ["friendly"], "samples": 2}}
    path = tmp_path / "assoc.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = cli("run", path, "--no-progress")
    assert result.exit_code == EXIT_EMPTY, result.output
    assert error_lines(result) == ["error: stage generate produced no usable result: model-a: 0 of 2 answers "
                                   "accepted (2 rejected by strict parsing)"]


# -- oversized inputs (issue 7.8) --------------------------------------------------------------------


def test_an_oversized_item_is_refused_counted_and_named(qa: Any, qa_server: Any, qa_project: Any,
                                                        cli: Any) -> None:
    big = {**qa.qa_item(1)}
    big["variants"] = {**big["variants"], "chittagong": "ক" * 1001}
    large = {**qa.qa_item(2), "gold": "খ" * 150}
    project = qa_project(qa_server.base_url, items=[qa.qa_item(0), big, large])
    project.rewrite(limits={"warn_field_chars": 100, "max_field_chars": 1000})
    result = run(cli, project)
    assert result.exit_code == 0, result.output
    source = project.dir / "items.jsonl"
    assert warning_lines(result) == [
        f"warning: 1 item in {source} refused (not stored, not sent): a field is longer than "
        "limits.max_field_chars = 1,000 characters: 'q02' (line 2) variants.chittagong (1,001 characters)",
        f"warning: 1 item in {source} with a field longer than limits.warn_field_chars = 100 characters (sent as "
        "is): 'q03' (line 3) gold (150 characters)"]
    with Store.open(project.store_path) as store:
        assert [item.id for item in store.iter_items()] == ["q01", "q03"]
        sent = store.query("SELECT DISTINCT item_id FROM requests ORDER BY 1")
    assert [r[0] for r in sent] == ["q01", "q03"]


def test_every_item_refused_is_an_error(qa: Any, qa_server: Any, qa_project: Any, cli: Any) -> None:
    project = qa_project(qa_server.base_url, n_items=2)
    project.rewrite(limits={"warn_field_chars": 5, "max_field_chars": 10})
    result = run(cli, project)
    assert result.exit_code == EXIT_ERROR
    (line,) = error_lines(result)
    assert line.startswith(f"error: {project.dir / 'items.jsonl'}: no usable items: every item was refused for a "
                           "field longer than limits.max_field_chars = 10 characters: 'q01' (line 1) variants.")
    assert qa_server.stats()["requests_total"] == 0
