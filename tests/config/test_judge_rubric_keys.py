"""Judge entries take `rubric:` and `template:` (issue 8): errors name the file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectbias.api import load_experiment
from dialectbias.errors import ConfigError

BASE = """\
name: t
task: qa_bias
data: items.jsonl
models:
  - {id: m, provider: openai, base_url: "http://127.0.0.1:9/v1", model: m%s}
judges:
  - {id: j, provider: openai, base_url: "http://127.0.0.1:9/v1", model: j%s}
"""


def write(tmp_path: Path, model: str = "", judge: str = "") -> Path:
    (tmp_path / "items.jsonl").write_text('{"id": "q", "variants": {"standard": "ক", "sylhet": "খ"}}\n',
                                          encoding="utf-8")
    path = tmp_path / "exp.yaml"
    path.write_text(BASE % (model, judge), encoding="utf-8")
    return path


def error(path: Path) -> str:
    with pytest.raises(ConfigError) as exc:
        load_experiment(path)
    return str(exc.value)


def test_a_model_entry_refuses_judge_keys(tmp_path: Path) -> None:
    msg = error(write(tmp_path, model=", rubric: rlaif"))
    assert "models.0.rubric (line 5): only a judge takes 'rubric'" in msg


def test_unknown_rubric_and_missing_template_name_the_line(tmp_path: Path) -> None:
    msg = error(write(tmp_path, judge=", rubric: rlaf, template: nope.j2"))
    assert "judges.0.rubric (line 7): unknown rubric 'rlaf'" in msg
    assert f"judges.0.template (line 7): {tmp_path / 'nope.j2'}: template file not found" in msg


def test_a_rubric_file_is_resolved_next_to_the_experiment_and_its_errors_name_it(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("name: r\nfields: []\nscore: mean\n", encoding="utf-8")
    msg = error(write(tmp_path, judge=", rubric: r.yaml"))
    assert "judges.0.rubric (line 7): " in msg and f"{tmp_path / 'r.yaml'}: invalid rubric" in msg


def test_a_check_qa_bias_does_not_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("name: r\nfields: [{name: q, type: integer, minimum: 0, maximum: 1}]\n"
                                     "score: mean\nchecks: [language]\n", encoding="utf-8")
    msg = error(write(tmp_path, judge=", rubric: r.yaml"))
    assert "exp.yaml:7: judge 'j': rubric 'r' declares check(s) language, which qa_bias does not run" in msg


def test_judges_default_to_rlaif_and_take_a_packaged_rubric(tmp_path: Path) -> None:
    from dialectbias.tasks.qa_bias import QABiasTask

    exp = load_experiment(write(tmp_path, judge=", rubric: caption"))
    assert QABiasTask(exp).rubrics["j"].name == "caption"
    exp = load_experiment(write(tmp_path))
    assert QABiasTask(exp).rubrics["j"].name == "rlaif"
    assert "rubric" not in exp.judges[0].identity()
