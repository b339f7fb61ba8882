"""options.parser (docs/departures.md): with `replicate: paper` the released script's rule (PROCEDURES.md §1.4)
decides which answers count and their bias; by default our strict parser does. Hand-designed answers imported
through `import_generations`, numbers checked by hand in the report's CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.api import build_report
from dialectbias.config import load_experiment
from dialectbias.run import import_generations
from dialectbias.tasks import get_task


def designed(prompt: Any, dt: int, do: int) -> list[str]:
    d, s = prompt.dialect_writer, prompt.standard_writer
    writer = {a: d if i < dt else s for i, a in enumerate(prompt.trait_adjectives)}
    writer |= {a: d if i < do else s for i, a in enumerate(prompt.opposite_adjectives)}
    return [f"{a}: {writer[a]}" for a in prompt.adjectives]


# sample -> the answer: both rules accept (bias 1); a trailing newline (11 lines for the script, bias 0.2 for
# ours); a numbered list (the script reads "1." as the writer, ours bias 0.6); a refusal (both reject)
ANSWERS = {
    0: lambda p: "\n".join(designed(p, 5, 0)),
    1: lambda p: "\n".join(designed(p, 3, 2)) + "\n",
    2: lambda p: "\n".join(f"{i}. {line}" for i, line in enumerate(designed(p, 4, 1), 1)),
    3: lambda p: "I would rather not assign adjectives to people.",
}


def run(root: Path, replicate: str) -> dict[str, str]:
    root.mkdir(parents=True)
    config = {"name": "assoc", "task": "association", "seed": 3, "replicate": replicate,
              "models": [{"id": "m1", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m1"}],
              "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "samples": 4,
                          "traits": ["uneducated"], "n_resamples": 200}}
    path = root / "assoc.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    exp = load_experiment(path)
    task = get_task(exp.task)(exp)
    lines = [{"item_id": item.id, "variant": item.metadata["dialect"], "model": "m1",
              "output": ANSWERS[int(item.id.rsplit("/", 1)[1])](task._prompt(item))} for item in task.load_items()]
    gen = root / "generations.jsonl"
    gen.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert import_generations(exp, task, gen).imported == 4
    build_report(path, root / "report")
    with (root / "report" / "association_bias_by_trait.csv").open(encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    return row


def test_our_parser_is_the_default(tmp_path: Path) -> None:
    row = run(tmp_path / "toolkit", "toolkit")
    assert int(row["n_accepted"]) == 3 and float(row["rejection_rate"]) == pytest.approx(0.25)
    assert float(row["bias"]) == pytest.approx((1.0 + 0.2 + 0.6) / 3)


def test_replicate_paper_uses_the_released_scripts_rule(tmp_path: Path) -> None:
    row = run(tmp_path / "paper", "paper")
    assert int(row["n_accepted"]) == 1 and float(row["rejection_rate"]) == pytest.approx(0.75)
    assert float(row["bias"]) == pytest.approx(1.0)
    with (tmp_path / "paper" / "report" / "departures.csv").open(encoding="utf-8") as fh:
        used = {r["option"]: (r["value"], r["used"]) for r in csv.DictReader(fh)}
    assert used["parser"] == ("paper", "paper") and used["t_test"] == ("student", "paper")
