"""Errors through the installed command: one clear message naming what is at fault, never a traceback
and never the API key."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from dialectbias.tasks.qa_bias import QABiasOptions
from dialectbias.testing import TestServer

RIGHT_KEY = "sk-right-5f1c2d3e4a5b6c7d8e9f"
WRONG_KEY = "sk-wrong-0a9b8c7d6e5f4a3b2c1d"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def error_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def assert_no_traceback(result: Any) -> None:
    assert "Traceback" not in result.output
    assert "Exception" not in result.output


@pytest.fixture(scope="module")
def keyed_server(qa: Any):
    with TestServer(api_key=RIGHT_KEY, responder=qa.RESPONDER) as server:
        yield server


def test_bad_yaml_is_one_line_naming_file_and_line(qa: Any, tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("name: bnqa\ntask: qa_bias\nmodels: [\n", encoding="utf-8")
    result = qa.run_subprocess("run", path, "--no-progress")
    assert result.exit_code == 1
    assert_no_traceback(result)
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(f"error: {path}:4:1: not valid YAML")
    assert "<unicode string>" not in result.stderr


def test_unknown_key_names_file_key_and_line(qa: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1")
    text = project.yaml_path.read_text(encoding="utf-8").replace("max_retries:", "max_retrys:", 1)
    project.yaml_path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("  max_retrys: 3") + 1
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert_no_traceback(result)
    (first,) = error_lines(result)
    assert first == f"error: {project.yaml_path}: invalid experiment file"
    assert f"models.0.max_retrys (line {line}): unknown key" in result.stderr


def test_duplicate_item_id_is_one_error_naming_file_and_lines(qa: Any, tmp_path: Path) -> None:
    items = [qa.qa_item(0), qa.qa_item(1), {**qa.qa_item(2), "id": "q01"}]
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1", items=items)
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert_no_traceback(result)
    assert error_lines(result) == [
        f"error: {tmp_path / 'items.jsonl'}:3: duplicate id 'q01' (first seen at line 1)"]
    assert result.stdout == ""


def test_unreachable_server_fails_naming_the_model_and_base_url(qa: Any, tmp_path: Path) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    project = qa.make_project(tmp_path, base_url, model={"max_retries": 0}, judge={"max_retries": 0})
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert_no_traceback(result)
    # each model stops after its first consecutive failures instead of failing every request
    stopped = [line for line in error_lines(result) if "stopped" in line]
    assert len(stopped) == 2 and all(f"at {base_url}: cannot connect" in line for line in stopped)
    assert f"model 'model-b' at {base_url}: cannot connect" in result.stdout


def test_summary_error_lines_have_no_literal_markup(qa: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, f"http://127.0.0.1:{closed_port()}/v1", model={"max_retries": 0})
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert "[yellow]" not in result.stdout and "[/]" not in result.stdout


def test_an_error_repeated_by_every_request_is_printed_once(qa: Any, tmp_path: Path) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    project = qa.make_project(tmp_path, base_url, model={"max_retries": 0})
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert result.stdout.count(f"model 'model-a' at {base_url}: cannot connect") == 1


def test_missing_key_variable_is_one_error_naming_it(qa: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1", model={"api_key_env": "DB_TEST_UNSET_KEY"})
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert_no_traceback(result)
    assert error_lines(result) == ["error: model 'model-a': environment variable DB_TEST_UNSET_KEY (named by "
                                   "api_key_env) is not set"]


def test_wrong_api_key_fails_and_is_never_shown_or_stored(qa: Any, cli: Any, keyed_server: Any,
                                                           tmp_path: Path) -> None:
    keyed_server.reset_stats()
    project = qa.make_project(tmp_path, keyed_server.base_url, model={"api_key_env": "DB_TEST_KEY"},
                              judge={"api_key_env": "DB_TEST_KEY"})
    env = qa.subprocess_env(DB_TEST_KEY=WRONG_KEY)
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress", env=env)
    assert result.exit_code == 1
    assert_no_traceback(result)
    # a 401 stops the model at once: one clear error per model, not one per request
    (line,) = [line for line in error_lines(result) if "model-a" in line]
    assert all(text in line for text in ("HTTP 401", "api_key_env", "stopped"))
    assert 0 < keyed_server.stats()["unauthorized"] <= 2 * 16
    for fmt in ("csv", "jsonl", "parquet"):
        exported = cli("export", project.yaml_path, "--format", fmt, "--out", tmp_path / "out")
        assert exported.exit_code == 0, exported.output
        assert WRONG_KEY not in exported.output
    reported = cli("report", project.yaml_path, "--out", tmp_path / "report")
    assert reported.exit_code == 4, reported.output  # written, but nothing in it is scored (issue 19.12)
    assert WRONG_KEY not in result.output and WRONG_KEY not in reported.output
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "bnqa.sqlite" for p in files) and any(p.suffix == ".parquet" for p in files)
    for path in files:
        data = path.read_bytes()
        assert WRONG_KEY.encode() not in data and WRONG_KEY[9:].encode() not in data, path


def test_an_unexpected_exception_is_one_message_not_a_traceback(cli: Any, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import dialectbias.api as api

    def broken(*_: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(api, "report_experiment", broken)
    monkeypatch.delenv("DIALECTBIAS_DEBUG", raising=False)
    result = cli("report", tmp_path / "exp.yaml", "--out", tmp_path / "r")
    assert result.exit_code == 1
    assert "internal error: RuntimeError: boom" in result.stderr and "Traceback" not in result.output


# -- errors that name the line, once (issue 7.5) ---------------------------------------------------------


def yaml_line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if needle in line)


def test_a_provider_typo_is_printed_once_per_entry_with_its_line(qa: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1", judge={"provider": "opnai"})
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: {project.yaml_path}: invalid experiment file",
        f"  - judges.0.provider (line {yaml_line(project.yaml_path, 'provider: opnai')}): unknown provider "
        "'opnai' (did you mean 'openai'?); expected one of: hf, openai, vllm"]


def test_an_options_typo_is_one_error_with_its_line(qa: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1")
    project.rewrite(options={"judge_max_tokns": 100})
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: {project.yaml_path}: invalid experiment file",
        f"  - options.judge_max_tokns (line {yaml_line(project.yaml_path, 'judge_max_tokns')}): unknown key (did "
        f"you mean 'judge_max_tokens'? known: {', '.join(QABiasOptions.model_fields)})"]


def test_a_variants_typo_names_file_line_and_closest_name(qa: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1")
    project.rewrite(variants=["standard", "chitagong"])
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"error: {project.yaml_path}:{yaml_line(project.yaml_path, '- chitagong')}: variants: unknown variant "
        "'chitagong' (did you mean 'chittagong'? add it to the registry with `dialects: {<language>: [chitagong]}` "
        "in the experiment file)"]


def test_a_csv_with_wrong_columns_lists_expected_and_found(qa: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1")
    (tmp_path / "items.csv").write_text("qid,standard,chittagong\nq1,নদী,গাঙ\n", encoding="utf-8")
    project.rewrite(data="items.csv")
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"error: {tmp_path / 'items.csv'}:1: missing column(s) id, variants.standard; expected columns: id, "
        "variants.standard, variants.<dialect>, … (or one 'variants' column holding a JSON object), optional "
        "domain, question_type, gold, validated_by; found: qid, standard, chittagong"]
