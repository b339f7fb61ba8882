"""The association report's study statistics over designed answers (no model, no server): naming vs usage
(Welch), dialect vs noise, larger vs smaller model, per topic, the paper's rejection rule — each number
checked against scipy or by hand."""

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

SEED = 5
N_RES = 500
# answers per (model, setting or condition): designed as (trait adjectives to the dialect writer, opposite
# adjectives to the dialect writer) out of 5 + 5; bias = dt/(dt+do) + (5−do)/((5−dt)+(5−do)) − 1
BIAS = {(5, 0): 1.0, (4, 1): 0.6, (3, 2): 0.2, (2, 3): -0.2, (5, 5): 0.0}
ITEMS = [
    {"id": "t1", "domain": "school", "variants": {"standard": "Ich gehe heute nach Hause.",
                                                   "bavarian": "I geh heit hoam.", "noisy": "Ich gehe und nach."}},
    {"id": "t2", "domain": "school", "variants": {"standard": "Das ist ein Haus.", "bavarian": "Des is a Haus.",
                                                   "noisy": "Das ist ein Hus."}},
    {"id": "t3", "domain": "weather", "variants": {"standard": "Es regnet schon wieder.",
                                                    "alemannic": "S rägnet scho wider.",
                                                    "noisy": "Es regnet schn wieder."}},
    {"id": "t4", "domain": "weather", "variants": {"standard": "Morgen wird es kalt.",
                                                    "alemannic": "Morn wirds chalt.", "noisy": "Morgen wird kalt."}},
]
MODELS = [{"id": "big", "family": "fam", "params_b": 70}, {"id": "small", "family": "fam", "params_b": 8}]


def design(model: str, setting: str, dialect: str, index: int) -> tuple[int, int] | None:
    """Dialect texts: strongly stereotypical for big, milder for small; noisy: around 0; naming: mild.
    The 4th naming sample of `small` is rejected (a preamble line)."""
    if setting == "naming":
        if model == "small" and index == 3:
            return None
        return [(4, 1), (3, 2), (4, 1), (3, 2)][index]
    if dialect == "noisy":
        return [(3, 2), (2, 3), (3, 2), (2, 3)][index]
    return [(5, 0), (5, 0), (4, 1), (5, 0)][index] if model == "big" else [(4, 1), (3, 2), (4, 1), (3, 2)][index]


def designed_output(prompt: Any, dt: int, do: int) -> str:
    d, s = prompt.dialect_writer, prompt.standard_writer
    writer = {a: d if i < dt else s for i, a in enumerate(prompt.trait_adjectives)}
    writer |= {a: d if i < do else s for i, a in enumerate(prompt.opposite_adjectives)}
    return "\n".join(f"{a}: {writer[a]}" for a in prompt.adjectives)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, str, str], list[float]]]:
    root = tmp_path_factory.mktemp("stats")
    (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                      encoding="utf-8")
    config = {"name": "stats", "task": "association", "data": "items.jsonl", "seed": SEED,
              "models": [{**m, "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": m["id"]}
                         for m in MODELS],
              "options": {"setting": "both", "languages": {"de": ["bavarian"]}, "samples": 4,
                          "traits": ["uneducated"], "n_resamples": N_RES}}
    exp_path = root / "stats.yaml"
    exp_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    exp = load_experiment(exp_path)
    task = get_task(exp.task)(exp)
    lines, values = [], {}
    for item in task.load_items():
        setting, dialect = item.metadata["setting"], item.metadata["dialect"]
        # naming items end in their sample number; usage items come from t1 … t4
        index = int(item.id.rsplit("/", 1)[1]) if setting == "naming" else int(item.metadata["source_item"][1:]) - 1
        for model in ("big", "small"):
            d = design(model, setting, dialect, index)
            prompt = task._prompt(item)
            output = (f"Sure, here you go:\n{designed_output(prompt, 5, 0)}" if d is None
                      else designed_output(prompt, *d))
            lines.append({"item_id": item.id, "variant": dialect, "model": model, "output": output})
            if d is not None:
                key = (model, setting, "noisy" if dialect == "noisy" else "dialect")
                values.setdefault(key, []).append(BIAS[d])
    gen = root / "gen.jsonl"
    gen.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    import_generations(exp, task, gen)
    build_report(exp_path, root / "report")
    return root / "report", values


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_bias_by_trait_excludes_noise_and_tests_at_0001(report: Any) -> None:
    out, values = report
    table = {(r["model"], r["setting"]): r for r in rows(out / "association_bias_by_trait.csv")}
    usage = values[("big", "usage", "dialect")]  # 1, 1, 0.6, 1
    row = table[("big", "usage")]
    assert int(row["n_accepted"]) == 4 and float(row["bias"]) == pytest.approx(np.mean(usage))
    ref = stats.ttest_1samp(usage, 0.0)
    assert float(row["p"]) == pytest.approx(ref.pvalue) and row["significant"] == str(ref.pvalue < 0.001)
    assert float(row["cohens_d"]) == pytest.approx(np.mean(usage) / np.std(usage, ddof=1))
    naming = table[("small", "naming")]
    assert (int(naming["n_prompts"]), int(naming["n_accepted"])) == (4, 3)


def test_naming_vs_usage_is_welch(report: Any) -> None:
    out, values = report
    table = {r["model"]: r for r in rows(out / "association_naming_vs_usage.csv")}
    for model in ("big", "small"):
        a, b = values[(model, "naming", "dialect")], values[(model, "usage", "dialect")]
        ref = stats.ttest_ind(a, b, equal_var=False)
        row = table[model]
        assert float(row["diff"]) == pytest.approx(np.mean(a) - np.mean(b))
        assert float(row["t"]) == pytest.approx(ref.statistic) and float(row["p"]) == pytest.approx(ref.pvalue)
        assert row["significant"] == str(ref.pvalue < 0.05)
    pooled_a = values[("big", "naming", "dialect")] + values[("small", "naming", "dialect")]
    pooled_b = values[("big", "usage", "dialect")] + values[("small", "usage", "dialect")]
    assert float(table["all models"]["p"]) == pytest.approx(stats.ttest_ind(pooled_a, pooled_b, equal_var=False).pvalue)


def test_dialect_vs_noise(report: Any) -> None:
    out, values = report
    table = {r["model"]: r for r in rows(out / "association_dialect_vs_noise.csv")}
    a, b = values[("big", "usage", "dialect")], values[("big", "usage", "noisy")]  # mean 0.9 vs 0.0
    row = table["big"]
    assert (int(row["n_dialect"]), int(row["n_noisy"])) == (4, 4)
    assert float(row["bias_noisy"]) == pytest.approx(0.0) and float(row["diff"]) == pytest.approx(0.9)
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert float(row["p"]) == pytest.approx(ref.pvalue) and row["significant"] == "True"
    pooled = math.sqrt((3 * np.var(a, ddof=1) + 3 * np.var(b, ddof=1)) / 6)
    assert float(row["cohens_d"]) == pytest.approx(0.9 / pooled)
    assert float(row["ci_low"]) <= 0.9 <= float(row["ci_high"])
    parity = {(r["tokenizer"], r["variant"]): r for r in rows(out / "association_token_lengths.csv")}
    # whitespace tokens: noisy 4 + 4 + 4 + 3 = 15, dialect 4 + 4 + 4 + 3 = 15, standard 5 + 4 + 4 + 4 = 17
    assert float(parity[("whitespace", "noisy")]["ratio_to_dialect"]) == pytest.approx(15 / 15)
    assert float(parity[("whitespace", "noisy")]["ratio_to_standard"]) == pytest.approx(15 / 17)


def test_larger_vs_smaller_model(report: Any) -> None:
    out, values = report
    table = {r["setting"]: r for r in rows(out / "association_model_size.csv")}
    row = table["usage"]
    assert (row["family"], row["larger"], row["smaller"]) == ("fam", "big", "small")
    a, b = values[("big", "usage", "dialect")], values[("small", "usage", "dialect")]
    assert float(row["p"]) == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue)
    assert float(row["diff"]) == pytest.approx(np.mean(a) - np.mean(b))


def test_per_topic_and_rejections(report: Any) -> None:
    out, _ = report
    topics = {(r["model"], r["topic"]): r for r in rows(out / "association_bias_by_topic.csv")}
    assert float(topics[("big", "school")]["bias"]) == pytest.approx(1.0)  # t1, t2
    assert float(topics[("big", "weather")]["bias"]) == pytest.approx(0.8)  # t3 0.6, t4 1.0
    rej = {(r["model"], r["setting"]): r for r in rows(out / "association_rejections.csv")}
    # small, naming: 1 of 4 rejected by us; the paper's rule rejects the same one (11 lines, not 10)
    assert int(rej[("small", "naming")]["rejected"]) == 1 and int(rej[("small", "naming")]["rejected_paper_rule"]) == 1
    assert float(rej[("big", "usage")]["rejection_rate_paper_rule"]) == 0.0
    # the released script's own bias: dialect rows 1, 1, 0.6, 1 and noisy rows 0.2, −0.2, 0.2, −0.2
    assert float(rej[("big", "usage")]["mean_bias_paper_rule"]) == pytest.approx(3.6 / 8)
    answers = rows(out / "association_answers.csv")
    assert all(r["bias_paper_rule"] == r["bias"] for r in answers)  # no zero denominator in this design
    # pooled over both settings (Figure 8): small has 1 rejection in 4 naming + 8 usage prompts
    assert float(rej[("small", "all")]["rejection_rate"]) == pytest.approx(1 / 12)
    html = (out / "index.html").read_text(encoding="utf-8")
    for heading in ("Naming vs usage", "Noisy-text control", "Token-length parity", "Larger vs smaller model",
                    "Bias per topic", "Rejection rate: ours and the paper", "naming and usage settings"):
        assert heading in html
    for png in ("association_bias_ci.png", "association_dialect_vs_noise.png", "association_rejections.png",
                "association_bias_dialects.png"):
        assert (out / png).stat().st_size > 1000


def test_every_table_column_is_explained(report: Any, tmp_path: Path) -> None:
    from dialectbias.store import Store

    out, _ = report
    exp = load_experiment(out.parent / "stats.yaml")
    task = get_task(exp.task)(exp)
    with Store.open(exp.store_path, create=False) as store:
        sections = task.report(store, tmp_path).sections
    assert len(sections) >= 10
    assert {s.heading: s.unexplained_columns() for s in sections} == {s.heading: [] for s in sections}
