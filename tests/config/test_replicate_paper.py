"""`replicate: paper` (issue 21 item 9, docs/departures.md): every declared departure takes the paper's value,
a contradicting explicit option is an error naming its key and line, the settings feed the compile fingerprint
and the report / export say which value each departure took."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from dialectbias.api import load_experiment
from dialectbias.config import Departure, declared_departures
from dialectbias.errors import ConfigError
from dialectbias.run._runner import _fingerprint
from dialectbias.store import Store
from dialectbias.tasks import load_task

MODEL = {"id": "m", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
EXTRACTOR = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "x"}


def write(tmp_path: Path, replicate: str | None = None, **options: Any) -> Path:
    config: dict[str, Any] = {"name": "dec", "task": "decision", "models": [MODEL],
                              "roles": {"extractor": EXTRACTOR}, "options": {"traits": ["rural"], **options}}
    if replicate:
        config["replicate"] = replicate
    path = tmp_path / "dec.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")
    PAPER: ClassVar[dict[str, Departure]] = {"a": Departure(1, "base §1", "x"), "b": Departure(2, "base §2", "y")}
    a: int = 0
    b: int = 0


class _Child(_Base):
    PAPER: ClassVar[dict[str, Departure]] = {"b": Departure(3, "child §2", "z")}


def test_a_subclass_adds_to_and_replaces_its_parents_departures() -> None:
    assert {k: d.paper for k, d in declared_departures(_Child).items()} == {"a": 1, "b": 3}


def test_the_default_is_toolkit_with_toolkit_values(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path))
    task = load_task(exp)
    assert exp.replicate == "toolkit"
    assert (task.options.max_tokens, task.options.extractor_temperature) == (600, 0.0)
    used = {d.option: d.used for d in exp.departures}
    assert used["max_tokens"] == "toolkit default" and used["extractor_temperature"] == "toolkit default"


def test_replicate_paper_sets_every_declared_departure(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, "paper"))
    task = load_task(exp)
    assert (task.options.max_tokens, task.options.extractor_temperature) == (350, 0.7)
    declared = declared_departures(type(task.options))
    assert declared and all(getattr(task.options, k) == d.paper for k, d in declared.items())
    assert {d.used for d in exp.departures} == {"paper"}
    # the generation requests really carry the paper's decoding settings
    with Store.open(exp.store_path) as store:
        store.save_items(task.load_items())
        spec = next(iter(task.stages()[0].build(store, exp.models[0])))
    assert spec.params["max_tokens"] == 350


def test_an_explicit_option_equal_to_the_paper_is_fine_and_counted_as_paper(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, "paper", max_tokens=350))
    assert {d.option: d.used for d in exp.departures}["max_tokens"] == "paper"
    exp = load_experiment(write(tmp_path, None, max_tokens=900))
    assert {d.option: d.used for d in exp.departures}["max_tokens"] == "own value"


def test_an_explicit_option_contradicting_the_paper_names_key_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "paper", max_tokens=600)
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "max_tokens" in text)
    message = str(info.value)
    assert f"options.max_tokens (line {line}): 600 contradicts `replicate: paper`" in message
    assert "the paper's value is 350" in message


def test_replicate_takes_only_known_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="replicate"):
        load_experiment(write(tmp_path, "papers"))


def test_the_departures_feed_the_compile_fingerprint(tmp_path: Path) -> None:
    def fingerprint(path: Path) -> str | None:
        exp = load_experiment(path)
        task = load_task(exp)
        return _fingerprint(exp, [], task.stages()[0], exp.models[0], ())

    toolkit, paper = fingerprint(write(tmp_path)), fingerprint(write(tmp_path, "paper"))
    assert toolkit and paper and toolkit != paper
    assert fingerprint(write(tmp_path, None, max_tokens=350, extractor_temperature=0.7)) not in (None, toolkit)


def test_the_report_states_which_values_were_used(tmp_path: Path) -> None:
    from dialectbias.report import ReportContent
    from dialectbias.report.build import write_report

    path = write(tmp_path, "paper")
    exp = load_experiment(path)
    Store.open(exp.store_path).close()
    out = tmp_path / "report"
    index = write_report(exp, lambda store, out_dir: ReportContent(title="t", sections=[]), out)
    rows = list(csv.DictReader((out / "departures.csv").open(encoding="utf-8")))
    by_option = {r["option"]: r for r in rows}
    assert by_option["max_tokens"]["value"] == "350" and by_option["max_tokens"]["used"] == "paper"
    assert by_option["extractor_temperature"]["paper_value"] == "0.7"
    html = index.read_text(encoding="utf-8")
    assert "Departures from the papers" in html and "replicate: paper" in html
