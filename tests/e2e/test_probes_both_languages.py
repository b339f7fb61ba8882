"""Both stereotype probes end to end on real parallel texts, German and Bengali (issue 11 "Done means"): usage-setting
items from the German study's 350 pairs (`parallel_pairs.csv`, `used_in_tasks`) and from Vashantor's row-aligned
standard/dialect files, `association` and `decision` runs against the local test server (real HTTP, the probe
responder, the decision extractor as a role model) under two writer prefixes, then the reports. Needs
../shared/data: skipped without it."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.api import build_report, run_experiment
from dialectbias.text import NOISY, add_noise
from shared_data import GERMAN, VASHANTOR, shared_path

#: WikiDIR codes of the German pairs -> the registry's dialect names
GERMAN_DIALECTS = {"als": "alemannic", "bar": "bavarian", "frr": "north_frisian", "ksh": "ripuarian",
                   "nds": "low_german", "pfl": "rhine_franconian", "stq": "saterfrisian"}
BENGALI_DIALECTS = ("barishal", "chittagong", "mymensingh", "noakhali", "sylhet")
TRAITS = ["uneducated", "rural"]


def german_items(per_dialect: int) -> list[dict[str, Any]]:
    """One item per pair used in the study (`used_in_tasks`), the first `per_dialect` of two dialects."""
    pairs = shared_path(*GERMAN, "parallel_pairs.csv")
    items: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    with pairs.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            code = row["language"]
            if row["used_in_tasks"] != "True" or code not in ("bar", "als") or taken.get(code, 0) >= per_dialect:
                continue
            taken[code] = taken.get(code, 0) + 1
            items.append({"id": f"{code}-{row['id']}", "language": "de", "domain": f"topic-{len(items) % 2}",
                          "variants": {"standard": row["standard_text"], GERMAN_DIALECTS[code]: row["dialect_text"]}})
    return items


def with_noise(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The noisy-text control (German paper §6.2): a noised copy of each standard text as a `noisy` variant."""
    vocabulary = shared_path(*GERMAN, "deu_news_2024_10K-words_cleaned_5000.txt")
    return [{**i, "variants": {**i["variants"], NOISY: add_noise(i["variants"]["standard"], p=0.5,
                                                                 vocabulary=vocabulary, seed=k)}}
            for k, i in enumerate(items)]


def bengali_items(n: int) -> list[dict[str, Any]]:
    """Rows aligned across the five Vashantor files: the standard sentence and its five dialect versions (rows
    whose dialect text equals the standard text carry no dialect signal and are left out of that item)."""
    test_split = shared_path(*VASHANTOR, "Test")
    columns = {}
    for dialect in BENGALI_DIALECTS:
        with (test_split / f"{dialect.capitalize()} Test Translation.csv").open(encoding="utf-8", newline="") as fh:
            columns[dialect] = list(csv.DictReader(fh))
    items = []
    for i in range(n):
        standard = columns["sylhet"][i]["standard_text"].strip()
        variants = {"standard": standard}
        for dialect in BENGALI_DIALECTS:
            text = columns[dialect][i]["dialect_text"].strip()
            if text and text != standard:
                variants[dialect] = text
        items.append({"id": f"vash-test-{i:04d}", "variants": variants})
    return items


def write_study(root: Path, task: str, items: list[dict[str, Any]], base_url: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                      encoding="utf-8")
    config: dict[str, Any] = {
        "name": f"{root.name}-{task}", "task": task, "data": "items.jsonl", "seed": 3,
        "models": [{"id": "model-a", "provider": "openai", "base_url": base_url, "model": "model-a"}],
        "options": {"setting": "usage", "traits": TRAITS, "prefix": ["default", "consider"], "n_resamples": 200}}
    if task == "decision":
        config["roles"] = {"extractor": {"provider": "openai", "base_url": base_url, "model": "extractor"}}
    path = root / f"{task}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def probe_server() -> Any:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:probe_responder") as server:
        yield server


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("language", ["de", "bn"])
def test_association_and_decision_on_parallel_texts(language: str, tmp_path: Path, probe_server: Any) -> None:
    items = with_noise(german_items(per_dialect=2)) if language == "de" else bengali_items(3)
    n_pairs = sum(len(i["variants"]) - 1 for i in items)
    dialects = {d for i in items for d in i["variants"] if d not in ("standard", NOISY)}
    for task in ("association", "decision"):
        exp = write_study(tmp_path / language, task, items, probe_server.base_url)
        summary = run_experiment(exp, progress=False)
        per_prompt = 3 if task == "decision" else 1  # three scenarios per trait
        expected = n_pairs * len(TRAITS) * per_prompt * 2  # × two prefixes
        totals = {(s.stage, s.model_id): (s.total, s.failed) for s in summary.stages}
        assert totals[("generate", "model-a")] == (expected, 0)
        out = tmp_path / language / f"report-{task}"
        build_report(exp, out)
        assert (out / "index.html").is_file()
        if task == "association":
            answers = read_csv(out / "association_answers.csv")
            assert len(answers) == expected and {a["prefix"] for a in answers} == {"default", "consider"}
            assert {a["language"] for a in answers} == {language}
            by_prefix = {r["prefix"]: r for r in read_csv(out / "association_bias_by_prefix.csv")}
            assert set(by_prefix) == {"default", "consider"}
            n_dialect = sum(a["dialect"] != NOISY for a in answers)  # the prefix tables leave the control out
            assert all(int(r["n_prompts"]) == n_dialect // 2 for r in by_prefix.values())
            assert {r["prefix"] for r in read_csv(out / "association_prefix_vs_default.csv")} == {"consider"}
            continue
        assert totals[("extract", "extractor")] == (expected, 0)
        answers = read_csv(out / "decision_answers.csv")
        assert len(answers) == expected
        assert {a["dialect"] for a in answers} == dialects | ({NOISY} if language == "de" else set())
        assert {a["language"] for a in answers} == {language}
        # the responder refuses about 1 in 8 answers: unextractable, counted, never dropped
        unextractable = sum(a["extracted"] == "False" for a in answers)
        assert 0 < unextractable < expected / 2
        table = read_csv(out / "decision_unextractable.csv")
        assert sum(int(r["n_unextractable"]) for r in table) == unextractable
        assert sum(int(r["n_answers"]) for r in table) == expected
        by_prefix = {r["prefix"]: r for r in read_csv(out / "decision_bias_by_prefix.csv")}
        assert set(by_prefix) == {"default", "consider"}
        n_dialect = sum(a["dialect"] != NOISY for a in answers)
        assert all(int(r["n_prompts"]) == n_dialect // 2 for r in by_prefix.values())
        compared = read_csv(out / "decision_prefix_vs_default.csv")
        assert {r["prefix"] for r in compared} == {"consider"} and {r["trait"] for r in compared} == set(TRAITS)
        # the responder's two profiles have 14 (Writer A) and 13 (Writer B) words once the labels are removed
        assert {(a["dialect_writer"], a["profile_words_dialect"], a["profile_words_standard"]) for a in answers
                if a["extracted"] == "True"} <= {("A", "14", "13"), ("B", "13", "14")}
        # the marked words of the profiles: every scenario × dialect has words on both sides
        marked = read_csv(out / "decision_marked_words.csv")
        assert {r["side"] for r in marked} == {"dialect", "standard"} and {r["dialect"] for r in marked} == dialects
        by_dialect = read_csv(out / "decision_bias_by_dialect.csv")
        assert {r["dialect"] for r in by_dialect} == dialects  # the noisy control is not a dialect
        if language == "de":
            noise = read_csv(out / "decision_dialect_vs_noise.csv")
            assert {(r["trait"], r["control"]) for r in noise} == {(t, NOISY) for t in TRAITS}
            assert {r["topic"] for r in read_csv(out / "decision_bias_by_topic.csv")} == {"topic-0", "topic-1"}
        # the options come from the language's traits: Bengali prompts use the concepts written for Bangladesh
        options = {a["trait_option"] for a in answers if a["trait"] == "uneducated"}
        assert options <= ({"Rickshaw pullers", "Brick-kiln workers", "Farm labourers", "Construction helpers",
                            "Street vendors"} if language == "bn" else
                           {"Plasterers", "Farmworkers", "Roofers", "Drywall installers", "Animal breeders"})
        again = run_experiment(exp, progress=False)
        assert again.calls_made == 0
