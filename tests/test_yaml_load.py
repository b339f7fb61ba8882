"""Issue 19.3: the one YAML reader refuses a key given twice, at any depth, naming the file, the key and both
lines; every user YAML file the package reads goes through it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from dialectbias._yaml import load_yaml
from dialectbias.errors import ConfigError, DataError


def error(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_yaml(text, "f.yaml", ConfigError)
    return str(caught.value)


def test_a_top_level_key_given_twice_names_it_and_both_lines() -> None:
    assert error("name: a\ntask: qa_bias\nname: b\n") == "f.yaml:3: key 'name' given twice (lines 1 and 3); keep one"


def test_a_key_given_twice_inside_a_list_item_is_named_with_its_path() -> None:
    assert "key 'models[1].id' given twice (lines 4 and 5)" in error(
        "models:\n  - id: a\n    model: m\n  - id: b\n    id: c\n")


def test_a_key_given_twice_in_a_flow_mapping_is_found() -> None:
    assert "key 'anchors.1' given twice (lines 1 and 1)" in error("anchors: {1: low, 5: high, 1: again}\n")


def test_keys_equal_as_values_are_duplicates_and_keys_of_other_types_are_not() -> None:
    assert "given twice (lines 1 and 2)" in error("true: a\nyes: b\n")  # both the boolean True
    assert load_yaml("1: a\n'1': b\n", "f.yaml", ConfigError)[0] == {1: "a", "1": "b"}


def test_the_same_key_in_two_mappings_is_no_duplicate() -> None:
    data, node = load_yaml("a: {x: 1}\nb: {x: 2}\nc: [{x: 1}, {x: 2}]\n", "f.yaml", ConfigError)
    assert data == {"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]}
    assert node is not None


def test_explicit_keys_overriding_a_merged_mapping_are_no_duplicates() -> None:
    data, _ = load_yaml("base: &b {x: 1, y: 2}\nmine:\n  <<: *b\n  x: 3\n", "f.yaml", ConfigError)
    assert data["mine"] == {"x": 3, "y": 2}


def test_an_empty_document_is_none_and_invalid_yaml_names_line_and_column() -> None:
    assert load_yaml("# nothing\n", "f.yaml", ConfigError) == (None, None)
    assert error("a: [1\n").startswith("f.yaml:2:1: not valid YAML: ")


def test_the_error_type_is_the_callers() -> None:
    with pytest.raises(DataError, match=r"^f\.yaml:2: key 'a' given twice"):
        load_yaml("a: 1\na: 2\n", "f.yaml", DataError)


@pytest.mark.parametrize("name", sorted(p.name for p in (resources.files("dialectbias") / "resources").iterdir()
                                        if p.name.endswith(".yaml")))
def test_every_packaged_resource_has_unique_keys(name: str) -> None:
    text = (resources.files("dialectbias") / "resources" / name).read_text(encoding="utf-8")
    assert load_yaml(text, name, ConfigError)[0]


def test_traits_file_with_a_key_given_twice(tmp_path: Path) -> None:
    from dialectbias.tasks.probes._traits import load_traits

    path = tmp_path / "traits.yaml"
    path.write_text("friendly:\n  trait: {label: a, adjectives: [x], concepts: [y]}\n"
                    "  trait: {label: b, adjectives: [x], concepts: [y]}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"traits\.yaml:3: key 'friendly\.trait' given twice \(lines 2 and 3\)"):
        load_traits(path)


def test_decision_scenarios_file_with_a_trait_given_twice(tmp_path: Path) -> None:
    from dialectbias.tasks.probes.decision._prompt import load_scenarios

    path = tmp_path / "scenarios.yaml"
    path.write_text("educated:\n  - {name: a, situation: s, decision: d}\n"
                    "educated:\n  - {name: b, situation: s, decision: d}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"scenarios\.yaml:3: key 'educated' given twice \(lines 1 and 3\)"):
        load_scenarios(path)


def test_topics_file_with_a_domain_given_twice(tmp_path: Path) -> None:
    from dialectbias.build import load_topics

    path = tmp_path / "topics.yaml"
    path.write_text("health:\n  factual: [a]\nhealth:\n  factual: [b]\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"topics\.yaml:3: key 'health' given twice \(lines 1 and 3\)"):
        load_topics(path)


def test_train_translator_recipe_with_a_key_given_twice(tmp_path: Path) -> None:
    from dialectbias.cli._train import load_recipe

    path = tmp_path / "recipe.yaml"
    path.write_text("epochs: 1\nlora_r: 8\nepochs: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"recipe\.yaml:3: key 'epochs' given twice \(lines 1 and 3\)"):
        load_recipe(path, {})
