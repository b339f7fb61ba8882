"""The translate task without a server: field groups of any item shape, targets, prompts, config errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.api import load_experiment, open_experiment
from dialectbias.errors import ConfigError
from dialectbias.tasks.translate._fields import TEXT_FIELD, assemble_variant, plan_variant
from dialectbias.tasks.translate._prompt import Example, render_prompt, resolve_target, template_name

VQA = {"question": "ছবির খাবারটির নাম কী?", "options": ["ইলিশ মাছ", "রুই মাছ", "১৯৭১", "পাঙ্গাস মাছ"],
       "answer_index": 0, "answer": "রুই মাছ", "caption": "থালায় ইলিশ মাছ ভাজা।", "image_id": 7}


# -- field groups ---------------------------------------------------------------------------------------


def test_a_string_variant_is_one_group_and_comes_back_a_string() -> None:
    plan = plan_variant("তোমার নাম কী?")
    assert [(g.name, g.texts, g.is_list) for g in plan.groups] == [(TEXT_FIELD, ("তোমার নাম কী?",), False)]
    assert assemble_variant("তোমার নাম কী?", plan, {TEXT_FIELD: "তুমার নাম কিতা?"}) == "তুমার নাম কিতা?"


def test_an_object_variant_translates_strings_and_string_lists_and_copies_the_rest() -> None:
    plan = plan_variant(VQA)
    assert [(g.name, g.is_list, len(g.texts)) for g in plan.groups] == [
        ("question", False, 1), ("options", True, 4), ("caption", False, 1)]
    assert plan.derived == {"answer": ("options", 1)}  # the answer names option 1: it follows it
    new = assemble_variant(VQA, plan, {"question": "Q", "options": ["a", "b", "c", "d"], "caption": "C"})
    assert new == {"question": "Q", "options": ["a", "b", "c", "d"], "answer_index": 0, "answer": "b",
                   "caption": "C", "image_id": 7}
    assert VQA["options"][0] == "ইলিশ মাছ"  # the source is not modified


def test_fields_restrict_the_groups_and_missing_ones_are_reported() -> None:
    plan = plan_variant(VQA, ["question", "options", "hint", "answer_index"])
    assert [g.name for g in plan.groups] == ["question", "options"]
    assert plan.missing == ("hint", "answer_index (not a string or a list of strings)")
    new = assemble_variant(VQA, plan, {"question": "Q", "options": ["a", "b", "c", "d"]})
    assert new["caption"] == VQA["caption"] and new["answer"] == "b"  # answer derived from the options


@pytest.mark.parametrize("value", ["", "   ", 42, None])
def test_nothing_to_translate(value: Any) -> None:
    assert plan_variant(value).groups == ()


# -- targets and prompts -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind", "script", "labels"), [
    ("sylhet", "dialect", "bengali", ("Standard Bengali:", "Sylhet dialect:")),
    ("bavarian", "dialect", "german", ("Standard German:", "Bavarian dialect:")),
    ("english", "language", "latin", ("Bengali:", "English:")),
    ("hindi", "language", "devanagari", ("Bengali:", "Hindi:")),
    ("urdu", "language", "urdu", ("Bengali:", "Urdu:")),
])
def test_targets(name: str, kind: str, script: str, labels: tuple[str, str]) -> None:
    t = resolve_target(name, extra={}, source_language="bn", scripts={})
    assert (t.kind, t.script, t.source_label, t.target_label) == (kind, script, *labels)


def test_a_dialect_added_in_the_experiment_and_a_script_override() -> None:
    t = resolve_target("chakma", extra={"bn": ["chakma"]}, source_language="bn", scripts={"chakma": "latin"})
    assert (t.kind, t.code, t.script) == ("dialect", "bn", "latin")
    assert template_name(t, None) == "translate/dialect_bn"


def test_one_template_per_language_and_user_overrides(tmp_path: Path) -> None:
    def name(target: str, user: Path | None = None) -> str:
        return template_name(resolve_target(target, extra={"xx": ["somewhere"]}, source_language="bn", scripts={}),
                             user)

    assert [name(t) for t in ("sylhet", "bavarian", "hindi", "somewhere")] == [
        "translate/dialect_bn", "translate/dialect_de", "translate/language", "translate/dialect"]
    (tmp_path / "translate").mkdir()
    (tmp_path / "translate" / "sylhet.j2").write_text("{{ source_label }} {{ text }}\n{{ target_label }}", "utf-8")
    assert name("sylhet", tmp_path) == "translate/sylhet" and name("chittagong", tmp_path) == "translate/dialect_bn"


def test_the_rag_prompt_shows_the_examples_with_their_own_dialect_and_ends_with_the_query() -> None:
    target = resolve_target("sylhet", extra={}, source_language="bn", scripts={})
    examples = [Example("p1", "তুমি কী খেয়েছো?", "তুমি কিতা খাইছো?", "sylhet", 1.2),
                Example("p2", "তোমার নাম কী?", "তোঁয়ার নাম কী?", "chittagong", 0.9)]
    prompt = render_prompt("translate/dialect_bn", None, target, "তোমার বাড়ি কোথায়?", numbered=False, n_lines=1,
                           examples=examples)
    assert "Standard Bengali: তুমি কী খেয়েছো?\nSylhet dialect: তুমি কিতা খাইছো?" in prompt
    assert "Standard Bengali: তোমার নাম কী?\nChittagong dialect: তোঁয়ার নাম কী?" in prompt
    assert prompt.endswith("Standard Bengali: তোমার বাড়ি কোথায়?\nSylhet dialect:")
    zero_shot = render_prompt("translate/dialect_bn", None, target, "তোমার বাড়ি কোথায়?", numbered=False,
                              n_lines=1, examples=[])
    assert "Examples" not in zero_shot and zero_shot.endswith("Sylhet dialect:")


def test_the_language_prompt_asks_to_preserve_named_entities_and_lists_stay_numbered() -> None:
    target = resolve_target("urdu", extra={}, source_language="bn", scripts={})
    prompt = render_prompt("translate/language", None, target, "1. ইলিশ মাছ\n2. রুই মাছ", numbered=True, n_lines=2,
                           examples=[])
    assert "into Urdu, written in Perso-Arabic script" in prompt and "Preserve named entities" in prompt
    assert "exactly 2 numbered lines" in prompt
    assert prompt.endswith("Bengali:\n1. ইলিশ মাছ\n2. রুই মাছ\nUrdu:")


# -- the experiment file -----------------------------------------------------------------------------------


def write(tmp_path: Path, options: dict[str, Any], **top: Any) -> Path:
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "variants": {"standard": "তোমার নাম কী?"}}\n', "utf-8")
    config = {"name": "tr", "task": "translate", "data": "items.jsonl",
              "roles": {"translator": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}},
              "options": options, **top}
    path = tmp_path / "tr.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), "utf-8")
    return path


def test_a_translate_experiment_needs_no_models_but_a_translator(tmp_path: Path) -> None:
    exp, task = open_experiment(write(tmp_path, {"targets": ["sylhet", "english"]}))
    assert exp.models == [] and [s.name for s in task.stages()] == ["translate"]
    assert [m.id for m in task.stages()[0].models] == ["translator"]
    path = write(tmp_path, {"targets": ["sylhet"]})
    config = yaml.safe_load(path.read_text("utf-8"))
    config.pop("roles")
    path.write_text(yaml.safe_dump(config), "utf-8")
    with pytest.raises(ConfigError, match="needs a model for role 'translator'"):
        load_experiment(path)


def test_other_tasks_still_need_models(tmp_path: Path) -> None:
    path = write(tmp_path, {})
    config = yaml.safe_load(path.read_text("utf-8"))
    config.update(task="perplexity", options={})  # a task that needs the models' own logprobs
    path.write_text(yaml.safe_dump(config), "utf-8")
    with pytest.raises(ConfigError, match="models: task 'perplexity' needs at least one model"):
        load_experiment(path)


@pytest.mark.parametrize(("options", "top", "message"), [
    ({"targets": ["sylhte"]}, {}, r"did you mean 'sylhet'"),
    ({"targets": ["standard"]}, {}, "is the source variant"),
    ({"targets": ["sylhet", "sylhet"]}, {}, "listed twice"),
    ({"targets": []}, {}, "targets"),
    ({"targets": ["sylhet"], "scripts": {"sylhet": "klingon"}}, {}, "unknown script 'klingon'"),
    ({"targets": ["sylhet"], "corpus": "nowhere.yaml"}, {}, "nowhere.yaml: file not found"),
    ({"targets": ["sylhet"], "index": "no_index_here"}, {}, "no retrieval index at .*no_index_here"),
    ({"targets": ["sylhet"], "k": 0}, {}, "k"),
    ({"targets": ["sylhet"], "temprature": 0}, {}, "temprature"),
    ({"targets": ["sylhet"]}, {"models": [{"id": "a", "provider": "openai", "base_url": "http://127.0.0.1:9/v1",
                                           "model": "a"}]}, "move the model under `roles:"),
])
def test_config_errors_name_the_key(tmp_path: Path, options: dict[str, Any], top: dict[str, Any],
                                    message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_experiment(write(tmp_path, options, **top))


def test_a_corpus_without_its_index_says_how_to_build_it(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    (tmp_path / "corpus.yaml").write_text("name: c\nfiles: [{path: x.csv, dialect: dialect}]\n", "utf-8")
    with pytest.raises(ConfigError, match=r"build it first \(`dialectbias index build corpus.yaml`\)"):
        load_experiment(write(tmp_path, {"targets": ["sylhet"], "corpus": "corpus.yaml"}))
