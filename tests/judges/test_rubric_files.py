"""Rubric files: packaged rubrics by name, user rubrics as YAML, errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from dialectbias.errors import ConfigError
from dialectbias.judges import load_rubric, packaged_rubrics, parse_structured

USER_RUBRIC = """\
# a user's rubric: helpfulness of an answer, no Python needed
name: helpfulness
description: How helpful the answer is to a speaker of the dialect.
reasoning: true
reasoning_max_chars: 600
fields:
  - name: on_topic
    type: boolean
    description: the answer addresses the question
  - name: helpfulness
    type: integer
    minimum: 1
    maximum: 7
    weight: 2
    description: how much the answer helps
    anchors:
      1: not at all
      4: somewhat
      7: fully
  - name: politeness
    type: integer
    minimum: 1
    maximum: 7
    anchors: {1: rude, 7: very polite}
score: weighted_sum
confidence: true
ceilings:
  - field: helpfulness
    max: 2
    when: {field: on_topic, value: false}
checks: [language]
"""


def write(tmp_path: Path, text: str, name: str = "my_rubric.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def line(text: str, needle: str) -> int:
    """1-based line of the first line of `text` containing `needle`."""
    return next(i for i, row in enumerate(text.splitlines(), 1) if needle in row)


def error_of(tmp_path: Path, text: str) -> str:
    write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_rubric("my_rubric.yaml", base_dir=tmp_path)
    return str(info.value)


def test_packaged_rubrics_are_listed_and_load() -> None:
    assert {"rlaif", "caption", "translation_fidelity"} <= set(packaged_rubrics())
    for name in packaged_rubrics():
        rubric = load_rubric(name)
        assert rubric.name == name
        Draft202012Validator.check_schema(rubric.json_schema())


def test_a_packaged_rubric_is_loaded_once() -> None:
    assert load_rubric("rlaif") is load_rubric("rlaif")


def test_an_unknown_rubric_name_lists_the_packaged_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown rubric 'rlaf': packaged rubrics are caption, rlaif"):
        load_rubric("rlaf")


def test_a_user_rubric_file_loads_relative_to_the_experiment_folder(tmp_path: Path) -> None:
    write(tmp_path, USER_RUBRIC)
    rubric = load_rubric("my_rubric.yaml", base_dir=tmp_path)
    assert rubric.name == "helpfulness"
    assert list(rubric.json_schema()["properties"]) == [
        "reasoning", "on_topic", "helpfulness", "politeness", "confidence"]
    assert rubric.json_schema()["properties"]["reasoning"]["maxLength"] == 600
    assert rubric.checks == ("language",)


def test_a_user_rubric_judges_end_to_end(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, USER_RUBRIC))
    answer = {"reasoning": "উত্তরটি প্রশ্নের বাইরে।", "on_topic": False, "helpfulness": 6, "politeness": 7,
              "confidence": 3}
    assert Draft202012Validator(rubric.json_schema()).is_valid(answer)
    parsed = parse_structured(json.dumps(answer, ensure_ascii=False), rubric.validator())
    assert parsed.status == "ok"
    result = rubric.evaluate(parsed.value)
    assert result.clipped == {"helpfulness": (6, 2)}
    assert result.flags == ["ceiling: helpfulness 6 clipped to 2 (on_topic == false)"]
    assert result.score == pytest.approx(2 * 2 / 7 + 7 / 7)  # weighted_sum on the clipped value
    assert result.confidence == 3
    assert "- helpfulness (an integer from 1 to 7): how much the answer helps\n  1 = not at all, 4 = somewhat, " \
           "7 = fully" in rubric.scale_text()


def test_a_rubric_path_in_a_subfolder(tmp_path: Path) -> None:
    (tmp_path / "rubrics").mkdir()
    write(tmp_path / "rubrics", USER_RUBRIC, "help.yml")
    assert load_rubric("rubrics/help.yml", base_dir=tmp_path).name == "helpfulness"


def test_a_missing_rubric_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: rubric file not found"):
        load_rubric("nope.yaml", base_dir=tmp_path)


def test_invalid_yaml_names_file_line_and_column(tmp_path: Path) -> None:
    message = error_of(tmp_path, "name: x\nfields:\n  - name: a\n   type: boolean\n")
    assert message.startswith(f"{tmp_path / 'my_rubric.yaml'}:4:")
    assert "not valid YAML" in message


def test_a_misspelled_key_names_file_and_line(tmp_path: Path) -> None:
    text = USER_RUBRIC.replace("    weight: 2\n", "    wieght: 2\n")
    assert line(text, "wieght") == 14
    assert error_of(tmp_path, text).splitlines() == [
        f"{tmp_path / 'my_rubric.yaml'}: invalid rubric",
        "  - fields.1.wieght (line 14): unknown key (check the spelling)"]


def test_an_anchor_out_of_range_names_its_line(tmp_path: Path) -> None:
    text = USER_RUBRIC.replace("      7: fully\n", "      8: fully\n")
    assert line(text, "8: fully") == 19
    assert "  - fields.1.anchors.8 (line 19): Value error, anchor 8 is outside the field's range 1–7" in (
        error_of(tmp_path, text).splitlines())


def test_a_ceiling_on_an_unknown_field_names_its_line(tmp_path: Path) -> None:
    text = USER_RUBRIC.replace("  - field: helpfulness\n", "  - field: helpfulnes\n")
    assert line(text, "field: helpfulnes") == 28
    assert "  - ceilings.0.field (line 28): Value error, no field named 'helpfulnes'" in (
        error_of(tmp_path, text).splitlines())


def test_duplicate_field_names_name_the_line(tmp_path: Path) -> None:
    text = USER_RUBRIC.replace("  - name: politeness\n", "  - name: helpfulness\n")
    assert line(text, "weight: 2") + 6 == 20  # the second `- name: helpfulness`
    assert ("  - fields.2.name (line 20): Value error, duplicate field name 'helpfulness' (also at fields.1.name)"
            in error_of(tmp_path, text).splitlines())


def test_problems_in_several_keys_are_reported_together(tmp_path: Path) -> None:
    text = (USER_RUBRIC.replace("    weight: 2\n", "    wieght: 2\n").replace("{1: rude", "{0: rude")
            + "colour: red\n")
    assert error_of(tmp_path, text).splitlines()[1:] == [
        f"  - fields.1.wieght (line {line(text, 'wieght')}): unknown key (check the spelling)",
        f"  - fields.2.anchors.0 (line {line(text, '0: rude')}): "
        "Value error, anchor 0 is outside the field's range 1–7",
        f"  - colour (line {line(text, 'colour')}): unknown key (check the spelling)"]


def test_unquoted_yes_no_in_an_enum_gets_a_hint(tmp_path: Path) -> None:
    text = "name: t\nscore: none\nfields:\n  - name: kept\n    type: string\n    enum: [yes, partial, no]\n"
    message = error_of(tmp_path, text)
    assert "fields.0.enum (line 6)" in message and 'quote the text ("yes")' in message


def test_a_rubric_without_fields_is_rejected(tmp_path: Path) -> None:
    message = error_of(tmp_path, "name: t\nscore: none\nfields: []\n")
    assert "  - fields (line 3): Value error, a rubric needs at least one field" in message.splitlines()


def test_a_file_that_is_not_a_mapping_is_rejected(tmp_path: Path) -> None:
    assert error_of(tmp_path, "- just\n- a list\n").endswith(
        "my_rubric.yaml: expected a mapping of keys (name, description, fields, score, …)")
