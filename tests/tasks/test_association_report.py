"""The association report's numbers (SPEC §4 P4 Statistics): mean bias, rejection rate, one-sample t,
p and bootstrap CI per model × trait, over answers designed by hand and stored with `import_generations`
(no model, no server); and the usage setting with items in the README's format (issue 6.11)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy import stats

from dialectbias.api import build_report
from dialectbias.config import load_experiment
from dialectbias.run import import_generations
from dialectbias.tasks import get_task

N_RESAMPLES = 2_000
SEED = 7
REJECTED = "I would rather not assign adjectives to people."

# designed answers per (model, trait): (trait adjectives to the dialect writer, opposite adjectives to the
# dialect writer) out of 5 + 5, or None for an answer strict parsing rejects. bias = dt/(dt+do) + so/(st+so) − 1
# with st = 5 − dt, so = 5 − do; a writer with no adjective has its term set to 0.5 and is flagged.
DESIGN: dict[tuple[str, str], list[tuple[int, int] | None]] = {
    ("m1", "uneducated"): [(5, 0), (3, 2), (4, 1), None],  # 1, 0.2, 0.6 and one rejection
    ("m1", "friendly"): [(5, 5), (0, 5), (2, 3), (2, 3)],  # 0 (flagged), −1, −0.2, −0.2
    ("m2", "uneducated"): [None, None, (1, 4), None],  # one accepted answer: no t, p or CI
    ("m2", "friendly"): [(2, 3), (2, 3), (2, 3), (2, 3)],  # constant −0.2: t = −inf, p = 0
}
BIAS = {(5, 0): 1.0, (3, 2): 0.2, (4, 1): 0.6, (5, 5): 0.0, (0, 5): -1.0, (2, 3): -0.2, (1, 4): -0.6}


def write_naming(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config = {"name": "assoc", "task": "association", "seed": SEED,
              "models": [{"id": m, "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": m}
                         for m in ("m1", "m2")],
              "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "samples": 4,
                          "traits": ["uneducated", "friendly"], "n_resamples": N_RESAMPLES}}
    path = root / "assoc.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def designed_output(prompt: Any, dt: int, do: int) -> str:
    d, s = prompt.dialect_writer, prompt.standard_writer
    writer = {a: d if i < dt else s for i, a in enumerate(prompt.trait_adjectives)}
    writer |= {a: d if i < do else s for i, a in enumerate(prompt.opposite_adjectives)}
    return "\n".join(f"{a}: {writer[a]}" for a in prompt.adjectives)


def import_designed(exp_path: Path) -> None:
    exp = load_experiment(exp_path)
    task = get_task(exp.task)(exp)
    lines = []
    for item in task.load_items():
        trait, sample = item.metadata["trait"], int(item.id.rsplit("/", 1)[1])
        for model in ("m1", "m2"):
            design = DESIGN[(model, trait)][sample]
            output = REJECTED if design is None else designed_output(task._prompt(item), *design)
            lines.append({"item_id": item.id, "variant": item.metadata["dialect"], "model": model,
                          "output": output})
    gen = exp_path.parent / "generations.jsonl"
    gen.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert import_generations(exp, task, gen).imported == len(lines)


@pytest.fixture(scope="module")
def by_trait(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, str]]:
    root = tmp_path_factory.mktemp("assoc")
    exp = write_naming(root / "exp")
    import_designed(exp)
    build_report(exp, root / "report")
    with (root / "report" / "association_bias_by_trait.csv").open(encoding="utf-8") as fh:
        return {(r["model"], r["trait"]): r for r in csv.DictReader(fh)}


def accepted(model: str, trait: str) -> np.ndarray:
    return np.array([BIAS[d] for d in DESIGN[(model, trait)] if d is not None])


def percentile_bootstrap(values: np.ndarray) -> tuple[float, float]:
    """The percentile bootstrap written out: resample the answers with replacement, 2.5% / 97.5% quantiles."""
    rng = np.random.default_rng(SEED)
    means = values[rng.integers(0, values.size, size=(N_RESAMPLES, values.size))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def test_mean_bias_and_rejection_rate_by_hand(by_trait: dict[tuple[str, str], dict[str, str]]) -> None:
    row = by_trait[("m1", "uneducated")]
    assert (int(row["n_prompts"]), int(row["n_accepted"])) == (4, 3)
    assert float(row["rejection_rate"]) == pytest.approx(0.25)
    assert float(row["bias"]) == pytest.approx((1.0 + 0.2 + 0.6) / 3)  # 0.6
    row = by_trait[("m1", "friendly")]
    assert float(row["rejection_rate"]) == 0.0 and int(row["flagged"]) == 1
    assert float(row["bias"]) == pytest.approx((0.0 - 1.0 - 0.2 - 0.2) / 4)  # −0.35
    row = by_trait[("m2", "uneducated")]
    assert float(row["rejection_rate"]) == pytest.approx(0.75) and float(row["bias"]) == pytest.approx(-0.6)


def test_t_and_p_equal_scipy(by_trait: dict[tuple[str, str], dict[str, str]]) -> None:
    for key in (("m1", "uneducated"), ("m1", "friendly")):
        want = stats.ttest_1samp(accepted(*key), 0.0)
        assert float(by_trait[key]["t"]) == pytest.approx(want.statistic)
        assert float(by_trait[key]["p"]) == pytest.approx(want.pvalue)
    # by hand for m1 × uneducated: mean 0.6, sd √((0.16 + 0.16 + 0) / 2) = 0.4, t = 0.6 / (0.4 / √3)
    assert float(by_trait[("m1", "uneducated")]["t"]) == pytest.approx(0.6 / (0.4 / math.sqrt(3)))


def test_bootstrap_ci_by_hand(by_trait: dict[tuple[str, str], dict[str, str]]) -> None:
    for key in (("m1", "uneducated"), ("m1", "friendly")):
        lo, hi = percentile_bootstrap(accepted(*key))
        row = by_trait[key]
        assert (float(row["ci_low"]), float(row["ci_high"])) == (pytest.approx(lo), pytest.approx(hi))
        assert min(accepted(*key)) <= lo <= float(row["bias"]) <= hi <= max(accepted(*key))


def test_degenerate_groups_are_empty_not_zero(by_trait: dict[tuple[str, str], dict[str, str]]) -> None:
    one = by_trait[("m2", "uneducated")]  # a single accepted answer: no test, no interval
    assert one["t"] == one["p"] == one["ci_low"] == one["ci_high"] == ""
    constant = by_trait[("m2", "friendly")]  # every answer −0.2: the interval is the point, t = −inf
    assert float(constant["ci_low"]) == float(constant["ci_high"]) == pytest.approx(-0.2)
    assert float(constant["t"]) == -math.inf and float(constant["p"]) == 0.0


# -- the usage setting with items in the README's format (issue 6.11) ------------------------------


def test_usage_setting_report_with_readme_items(tmp_path: Path) -> None:
    items = [{"id": "t1", "domain": "daily life",
              "variants": {"standard": "Ich gehe heute nicht nach Hause.", "bavarian": "I geh heid ned hoam.",
                           "alemannic": "I gang hüt nöd hei."}},
             {"id": "t2", "variants": {"standard": "Das ist ein kleines Haus.",
                                       "bavarian": "Des is a kloans Haisl."}}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                          encoding="utf-8")
    config = {"name": "usage", "task": "association", "data": "items.jsonl", "seed": SEED,
              "models": [{"id": "m1", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m1"}],
              "options": {"setting": "usage", "traits": ["uneducated"], "n_resamples": 200}}
    exp_path = tmp_path / "usage.yaml"
    exp_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    exp = load_experiment(exp_path)
    task = get_task(exp.task)(exp)
    lines = [{"item_id": item.id, "variant": item.metadata["dialect"], "model": "m1",
              "output": designed_output(task._prompt(item), 5, 0)} for item in task.load_items()]
    assert len(lines) == 3  # one prompt per item × dialect × trait
    gen = tmp_path / "gen.jsonl"
    gen.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    import_generations(exp, task, gen)

    index = build_report(exp_path, tmp_path / "report")
    assert index.is_file()
    with (tmp_path / "report" / "association_bias_by_dialect.csv").open(encoding="utf-8") as fh:
        rows = {r["dialect"]: r for r in csv.DictReader(fh)}
    # the language comes from the dialect registry when the item names none
    assert {d: r["language"] for d, r in rows.items()} == {"alemannic": "de", "bavarian": "de"}
    assert int(rows["bavarian"]["n_accepted"]) == 2 and float(rows["bavarian"]["bias"]) == 1.0
    assert int(rows["alemannic"]["n_accepted"]) == 1


def test_usage_item_without_standard_text_is_an_error_naming_the_line(tmp_path: Path) -> None:
    from dialectbias.errors import DataError

    (tmp_path / "items.jsonl").write_text(
        '{"id": "t1", "variants": {"standard": "Das Haus.", "bavarian": "Des Haus."}}\n'
        '{"id": "t2", "variants": {"bavarian": "I geh heid ned hoam."}}\n', encoding="utf-8")
    config = {"name": "usage", "task": "association", "data": "items.jsonl",
              "models": [{"id": "m1", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m1"}],
              "options": {"setting": "usage"}}
    (tmp_path / "usage.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    task = get_task("association")(load_experiment(tmp_path / "usage.yaml"))
    with pytest.raises(DataError, match=r"items\.jsonl:2: item 't2' has no 'standard' variant"):
        list(task.load_items())
