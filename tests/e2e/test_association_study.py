"""An association study on the German parallel texts, end to end through the CLI against the local test server
(German paper §3.3, §5–6): `build noise`, a run with the naming and usage settings and the noisy control,
and the report's statistics tables (needs ../shared/data/german_dialect_bias)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import GERMAN, VASHANTOR, shared_path

PER_DIALECT = 4
TRAITS = ["uneducated", "friendly"]
MODELS = [{"id": "llama-70b", "family": "llama", "params_b": 70}, {"id": "llama-8b", "family": "llama", "params_b": 8}]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, cli: Any) -> Path:
    pairs = shared_path(*GERMAN, "parallel_pairs.csv", why="the study reads its texts")
    from dialectbias.testing import TestServer

    root = tmp_path_factory.mktemp("study")
    picked: dict[str, int] = {}
    items = []
    for r in rows(pairs):  # the paper's corpus: the first 50 kept rows per dialect
        if r["used_in_tasks"] != "True" or picked.get(r["language"], 0) >= PER_DIALECT:
            continue
        picked[r["language"]] = picked.get(r["language"], 0) + 1
        items.append({"id": f"{r['language']}-{r['id']}", "language": "de",
                      "variants": {"standard": r["standard_text"], r["language"]: r["dialect_text"]}})
    (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                      encoding="utf-8")
    res = cli("build", "noise", root / "items.jsonl", "--vocabulary",
              pairs.parent / "deu_news_2024_10K-words_cleaned_5000.txt", "--p", "0.5", "--seed", "0",
              "--out", root / "items_noisy.jsonl")
    assert res.exit_code == 0, res.output
    with TestServer(responder="dialectbias.testing:association_responder") as server:
        config = {"name": "de-study", "task": "association", "data": "items_noisy.jsonl", "seed": 1,
                  "models": [{**m, "provider": "openai", "base_url": server.base_url, "model": m["id"]}
                             for m in MODELS],
                  "options": {"setting": "both", "languages": {"de": sorted(picked)}, "samples": 3,
                              "traits": TRAITS, "n_resamples": 1000}}
        exp = root / "de-study.yaml"
        exp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        res = cli("run", exp, "--no-progress")
        assert res.exit_code == 0, res.output
    res = cli("report", exp, "--out", root / "report")
    assert res.exit_code == 0, res.output
    return root / "report"


def test_bias_tables_have_sane_values(study: Path) -> None:
    by_trait = {(r["model"], r["setting"], r["trait"]): r for r in rows(study / "association_bias_by_trait.csv")}
    assert set(by_trait) == {(m["id"], s, t) for m in MODELS for s in ("naming", "usage") for t in TRAITS}
    for (_, setting, _), r in by_trait.items():
        n = 7 * 3 if setting == "naming" else 7 * PER_DIALECT  # naming: dialects × samples; usage: texts
        assert int(r["n_prompts"]) == n and 0 < int(r["n_accepted"]) <= n
        assert -1 <= float(r["ci_low"]) <= float(r["bias"]) <= float(r["ci_high"]) <= 1
        assert 0 <= float(r["p"]) <= 1
        # the stand-in model follows the stereotype 4 times in 5 when it can read the labels (expected 0.6)
        # and flips a coin on texts (expected 0)
        if setting == "naming":
            assert float(r["bias"]) > 0.3 and r["significant"] == "True"
        else:
            assert abs(float(r["bias"])) < 0.35


def test_naming_vs_usage_and_model_size(study: Path) -> None:
    vs = {r["model"]: r for r in rows(study / "association_naming_vs_usage.csv") if r["trait"] == "uneducated"}
    assert set(vs) == {"llama-70b", "llama-8b", "all models"}
    assert float(vs["all models"]["diff"]) > 0.3 and vs["all models"]["significant"] == "True"
    sizes = rows(study / "association_model_size.csv")
    assert {(r["larger"], r["smaller"]) for r in sizes} == {("llama-70b", "llama-8b")}
    assert len(sizes) == 2 * len(TRAITS) and all(0 <= float(r["p"]) <= 1 for r in sizes)


def test_noise_control_and_token_parity(study: Path) -> None:
    vs = rows(study / "association_dialect_vs_noise.csv")
    assert {(r["model"], r["trait"]) for r in vs} == {(m["id"], t) for m in MODELS for t in TRAITS}
    for r in vs:
        assert int(r["n_dialect"]) > 0 and int(r["n_noisy"]) > 0 and 0 <= float(r["p"]) <= 1
        assert float(r["ci_low"]) <= float(r["diff"]) <= float(r["ci_high"])
    parity = {(r["tokenizer"], r["variant"]): r for r in rows(study / "association_token_lengths.csv")}
    # noise at p = 0.5 keeps the word count close to the standard text's
    assert 0.8 < float(parity[("whitespace", "noisy")]["ratio_to_standard"]) < 1.2
    assert float(parity[("words", "noisy")]["mean_tokens"]) > 20


def test_rejections_by_both_rules_and_the_html(study: Path) -> None:
    rej = rows(study / "association_rejections.csv")
    settings = ("naming", "usage", "all")
    assert {(r["model"], r["setting"]) for r in rej} == {(m["id"], s) for m in MODELS for s in settings}
    for r in rej:
        # numbered lists pass our parser but not the paper's script: its rate is never lower
        assert float(r["rejection_rate_paper_rule"]) >= float(r["rejection_rate"])
    per_setting = [r for r in rej if r["setting"] != "all"]
    assert sum(int(r["rejected_paper_rule"]) for r in per_setting) > sum(int(r["rejected"]) for r in per_setting) > 0
    html = (study / "index.html").read_text(encoding="utf-8")
    for heading in ("Naming vs usage", "Noisy-text control", "Token-length parity", "Larger vs smaller model",
                    "Rejection rate: ours and the paper", "Bias per dialect over all models"):
        assert heading in html


def test_bengali_usage_study_with_noise(tmp_path: Path, cli: Any) -> None:
    """Vashantor pairs: a Bengali vocabulary from the train split, noisy items from the test split, a usage run."""
    vashantor = shared_path(*VASHANTOR)
    from dialectbias.testing import TestServer

    res = cli("build", "vocabulary", *sorted((vashantor / "Train").glob("*.csv")), "--column", "standard_text",
              "--out", tmp_path / "bn_words.txt")
    assert res.exit_code == 0, res.output
    items = []
    for f in sorted((vashantor / "Test").glob("*.csv")):
        for i, r in enumerate(rows(f)[:3]):
            dialect = r["dialect"].strip().lower()
            variants = {"standard": r["standard_text"], dialect: r["dialect_text"]}
            items.append({"id": f"{dialect}-{i}", "variants": variants})
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                          encoding="utf-8")
    res = cli("build", "noise", tmp_path / "items.jsonl", "--vocabulary", tmp_path / "bn_words.txt",
              "--out", tmp_path / "noisy.jsonl")
    assert res.exit_code == 0, res.output
    noisy = [json.loads(line) for line in (tmp_path / "noisy.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(i["language"] == "bn" and i["variants"]["noisy"] for i in noisy)
    with TestServer(responder="dialectbias.testing:association_responder") as server:
        config = {"name": "bn-study", "task": "association", "data": "noisy.jsonl",
                  "models": [{"id": "m", "provider": "openai", "base_url": server.base_url, "model": "m"}],
                  "options": {"setting": "usage", "traits": ["uneducated"], "n_resamples": 200}}
        exp = tmp_path / "bn.yaml"
        exp.write_text(yaml.safe_dump(config), encoding="utf-8")
        res = cli("run", exp, "--no-progress")
        assert res.exit_code == 0, res.output
    res = cli("report", exp, "--out", tmp_path / "report")
    assert res.exit_code == 0, res.output
    by_dialect = rows(tmp_path / "report" / "association_bias_by_dialect.csv")
    assert {r["dialect"] for r in by_dialect} == {i["id"].split("-")[0] for i in items}
    assert {r["language"] for r in by_dialect} == {"bn"}
    vs = rows(tmp_path / "report" / "association_dialect_vs_noise.csv")
    assert len(vs) == 1 and int(vs[0]["n_noisy"]) > 0 and 0 <= float(vs[0]["p"]) <= 1
