"""The decision task's experiment checks: the extractor role, scenarios, prefixes, per-language traits; and its
items (one request per item × scenario × prefix, the same draws under every prefix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.api import load_experiment
from dialectbias.errors import ConfigError
from dialectbias.run._stage import Skipped
from dialectbias.store import Store
from dialectbias.tasks import load_task
from dialectbias.tasks.probes.decision._prompt import DecisionPrompt

MODEL = {"id": "m", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
EXTRACTOR = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "x"}


def write(tmp_path: Path, roles: bool = True, **options: Any) -> Path:
    config: dict[str, Any] = {"name": "dec", "task": "decision", "models": [MODEL], "options": options}
    if roles:
        config["roles"] = {"extractor": EXTRACTOR}
    path = tmp_path / "dec.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_the_extractor_role_is_required(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="task 'decision' needs a model for role 'extractor'"):
        load_experiment(write(tmp_path, roles=False))


@pytest.mark.parametrize(("options", "message"), [
    ({"scenarios": ["rural_9"]}, r"unknown scenario\(s\) \['rural_9'\]"),
    ({"prefix": ["default", "given"]}, r"unknown prefix\(es\) \['given'\]"),
    ({"prefix": ["imagine", "imagine"]}, "a prefix is listed twice"),
    ({"traits": ["grumpy"]}, r"unknown trait\(s\) \['grumpy'\]"),
])
def test_bad_options_name_the_key(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_experiment(write(tmp_path, **options))


def requests(tmp_path: Path, **options: Any) -> list[Any]:
    exp = load_experiment(write(tmp_path, **options))
    task = load_task(exp)
    with Store.open(exp.store_path) as store:
        store.save_items(task.load_items())
        return list(task.stages()[0].build(store, exp.models[0]))


def test_one_request_per_item_scenario_and_prefix_with_shared_draws(tmp_path: Path) -> None:
    specs = requests(tmp_path, languages={"de": ["bavarian"], "bn": ["sylhet"]}, samples=2,
                     traits=["uneducated"], prefix=["default", "imagine"])
    assert not [s for s in specs if isinstance(s, Skipped)]
    assert len(specs) == 2 * 2 * 3 * 2  # languages × samples × scenarios × prefixes
    by_key: dict[tuple[str, str], list[DecisionPrompt]] = {}
    for spec in specs:
        by_key.setdefault((spec.item_id, spec.meta["scenario"]), []).append(
            DecisionPrompt.model_validate(spec.meta["prompt"]))
        assert spec.template == "decision/naming" and spec.params["max_tokens"] == 600
    for prompts in by_key.values():  # the two prefixes: same options, order and writers, other text
        a, b = (p.model_dump(exclude={"text"}) for p in prompts)
        assert a == b and prompts[0].text != prompts[1].text
    # Bengali naming items draw the Bengali concepts, German ones the paper's
    bn = {p.trait_option for (item, _), ps in by_key.items() if item.startswith("bn/") for p in ps}
    de = {p.trait_option for (item, _), ps in by_key.items() if item.startswith("de/") for p in ps}
    assert bn <= {"Rickshaw pullers", "Brick-kiln workers", "Farm labourers", "Construction helpers", "Street vendors"}
    assert de <= {"Plasterers", "Farmworkers", "Roofers", "Drywall installers", "Animal breeders"}
    assert "Writes in the Sylheti dialect of Bengali." in next(
        s.messages[0]["content"] for s in specs if s.item_id.startswith("bn/"))


def test_a_scenario_selection_limits_the_prompts(tmp_path: Path) -> None:
    specs = requests(tmp_path, samples=1, traits=["rural", "friendly"], scenarios=["rural_2"])
    built = [s for s in specs if not isinstance(s, Skipped)]
    assert [s.meta["scenario"] for s in built] == ["rural_2"]
    skipped = [s for s in specs if isinstance(s, Skipped)]
    assert len(skipped) == 1 and skipped[0].kind == "no decision scenario selected for trait 'friendly'"



def test_every_draw_has_its_own_seed_from_the_experiment_or_the_models_seed(tmp_path: Path) -> None:
    """One seed per request (sample, scenario, prefix), the same on every build; a model's `params.seed`
    replaces the experiment's as their base (issue 19: repeated samples are independent draws)."""
    options = {"samples": 3, "traits": ["rural"], "prefix": ["default", "imagine"]}

    def draws(name: str, **params: Any) -> list[Any]:
        (tmp_path / name).mkdir()
        path = write(tmp_path / name, **options)
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        config["models"][0]["params"] = params
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        exp = load_experiment(path)
        task = load_task(exp)
        with Store.open(exp.store_path) as store:
            store.save_items(task.load_items())
            specs = list(task.stages()[0].build(store, exp.models[0]))
        assert [s.chat_request().params["seed"] for s in specs] == [s.draw for s in specs]
        return [s.draw for s in specs]

    first = draws("first")
    assert len(first) == 3 * 3 * 2 and len(set(first)) == len(first)
    assert draws("again") == first
    own = draws("own", seed=7)
    assert len(set(own)) == len(own) and set(own).isdisjoint(first)
