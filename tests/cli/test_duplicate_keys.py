"""Issue 19.3: a key given twice in a user's YAML file is an error naming the file, the key and both lines,
through the command line, before any model call (plain YAML keeps the second value without a word)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the `nth` line of `text` starting with `needle`."""
    lines = [i for i, row in enumerate(text.splitlines(), 1) if row.startswith(needle)]
    return lines[nth - 1]


def refused(cli: Any, qa_server: Any, path: Path, command: str = "run") -> str:
    """The error of `dialectbias <command> path`: exit 1, one message, no traceback, no model call."""
    result = cli(command, path, *(["--no-progress"] if command == "run" else []))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert qa_server.stats()["chat_requests"] == 0
    return result.stderr


def test_data_given_twice_names_the_key_and_both_lines(qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    qa.write_jsonl(tmp_path / "other.jsonl", [qa.qa_item(5)])
    text = project.yaml_path.read_text(encoding="utf-8") + "data: other.jsonl\n"
    project.yaml_path.write_text(text, encoding="utf-8")
    first, second = line_of(text, "data:"), line_of(text, "data:", 2)
    error = refused(cli, qa_server, project.yaml_path)
    assert error.startswith(f"error: {project.yaml_path}:{second}: key 'data' given twice "
                            f"(lines {first} and {second}); keep one")
    assert not project.store_path.exists()


def test_options_given_twice_is_named_not_another_line(qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    text = (project.yaml_path.read_text(encoding="utf-8") + "options:\n  n_resamples: 50\n"
            + "seed: 3\noptions:\n  n_resamples: 60\n")
    project.yaml_path.write_text(text, encoding="utf-8")
    first, second = line_of(text, "options:"), line_of(text, "options:", 2)
    error = refused(cli, qa_server, project.yaml_path, "plan")
    assert f"key 'options' given twice (lines {first} and {second})" in error


def test_a_key_repeated_in_a_nested_mapping_is_named_with_its_path(qa: Any, qa_server: Any, cli: Any,
                                                                   tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    text = project.yaml_path.read_text(encoding="utf-8")
    text += "options:\n  n_resamples: 50\n  max_tokens: 200\n  n_resamples: 60\n"
    project.yaml_path.write_text(text, encoding="utf-8")
    first, second = line_of(text, "  n_resamples:"), line_of(text, "  n_resamples:", 2)
    error = refused(cli, qa_server, project.yaml_path)
    assert f"{project.yaml_path}:{second}: key 'options.n_resamples' given twice (lines {first} and {second})" in error


def test_a_key_repeated_in_a_model_entry_is_named_with_its_index(qa: Any, qa_server: Any, cli: Any,
                                                                 tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    text = project.yaml_path.read_text(encoding="utf-8")
    first = line_of(text, "  max_retries:")  # in models[0]
    lines = text.splitlines(keepends=True)
    lines.insert(first, "  max_retries: 0\n")
    project.yaml_path.write_text("".join(lines), encoding="utf-8")
    error = refused(cli, qa_server, project.yaml_path)
    assert f"key 'models[0].max_retries' given twice (lines {first} and {first + 1})" in error


def test_a_key_repeated_in_a_rubric_file_names_the_rubric_file(qa: Any, qa_server: Any, cli: Any,
                                                               tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    rubric = ("name: helpfulness\nfields:\n  - name: helpfulness\n    type: integer\n    minimum: 1\n"
              "    maximum: 5\n    maximum: 7\nscore: mean\n")
    (tmp_path / "helpfulness.yaml").write_text(rubric, encoding="utf-8")
    project.config["judges"][0]["rubric"] = "helpfulness.yaml"
    project.rewrite()
    error = refused(cli, qa_server, project.yaml_path)
    assert f"{tmp_path / 'helpfulness.yaml'}:7: key 'fields[0].maximum' given twice (lines 6 and 7)" in error


def test_a_key_repeated_in_a_corpus_file_names_the_corpus_file(cli: Any, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.yaml"
    corpus.write_text("name: vashantor\nfiles:\n  - path: a.csv\n    standard: s\n    dialect_text: d\n"
                      "    dialect: v\nname: other\n", encoding="utf-8")
    result = cli("index", "build", corpus)
    assert result.exit_code == 1, result.output
    assert f"{corpus}:7: key 'name' given twice (lines 1 and 7)" in result.stderr
    assert not (tmp_path / "corpus.index").exists()
