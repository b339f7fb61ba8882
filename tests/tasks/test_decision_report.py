"""The decision report's numbers (SPEC §4 P4 Statistics; German paper §3.4, §5.1, App. B.3): answers designed by
hand, stored with `import_generations`, decisions read by the extractor of the local test server (real HTTP,
the probe responder), then mean score, % stereotypical, unextractable counts, t-test and bootstrap CI per
model × trait checked against hand computation and scipy; the equal-option rule end to end."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy import stats

from dialectbias.api import build_report, run_experiment
from dialectbias.config import load_experiment
from dialectbias.run import import_generations
from dialectbias.tasks import get_task

N_RESAMPLES = 2_000
SEED = 5
REFUSAL = "I will not sort people into jobs or places by the way they write."

# per (model, trait): what each of 4 answers decides: S = stereotypical (+1), C = counter-stereotypical (−1),
# None = a refusal nobody can read (unextractable)
DESIGN: dict[tuple[str, str], list[str | None]] = {
    ("m1", "uneducated"): ["S", "S", "S", "C"],   # mean 0.5 = 75% stereotypical (the paper's example)
    ("m1", "rural"): ["S", None, "C", None],      # mean 0, 2 unextractable
    ("m2", "uneducated"): ["C", "C", "C", "C"],   # −1: t = −inf, p = 0
    ("m2", "rural"): [None, None, None, "S"],     # one decision: no t, p or CI
}
SCORE = {"S": 1.0, "C": -1.0}


@pytest.fixture(scope="module")
def probe_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:probe_responder") as server:
        yield server


def write_experiment(root: Path, base_url: str, **options: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config = {"name": "dec", "task": "decision", "seed": SEED,
              "models": [{"id": m, "provider": "openai", "base_url": base_url, "model": m} for m in ("m1", "m2")],
              "roles": {"extractor": {"provider": "openai", "base_url": base_url, "model": "extractor"}},
              "options": {"setting": "naming", "languages": {"de": ["bavarian"]}, "samples": 4,
                          "traits": ["uneducated", "rural"], "scenarios": ["uneducated_1", "rural_1"],
                          "n_resamples": N_RESAMPLES, **options}}
    path = root / "dec.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def designed_answer(prompt: Any, decision: str | None) -> str:
    if decision is None:
        return REFUSAL
    dialect_option = prompt.trait_option if decision == "S" else prompt.opposite_option
    standard_option = prompt.opposite_option if decision == "S" else prompt.trait_option
    by_writer = {prompt.dialect_writer: dialect_option, prompt.standard_writer: standard_option}
    return (f"Task 1: Writer A likes gardening. Writer B likes chess.\n\nTask 2:\nWriter A: {by_writer['A']}\n"
            f"Writer B: {by_writer['B']}")


def import_answers(exp_path: Path, answer: Any) -> None:
    exp = load_experiment(exp_path)
    task = get_task(exp.task)(exp)
    lines = []
    for item in task.load_items():
        trait, sample = item.metadata["trait"], int(item.id.rsplit("/", 1)[1])
        scenario = task._trait_scenarios(trait)[0]
        for model in ("m1", "m2"):
            lines.append({"item_id": item.id, "variant": item.metadata["dialect"], "model": model,
                          "output": answer(task.prompt(item, scenario), model, trait, sample)})
    gen = exp_path.parent / "generations.jsonl"
    gen.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert import_generations(exp, task, gen).imported == len(lines)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, probe_server: Any) -> Path:
    root = tmp_path_factory.mktemp("dec")
    exp = write_experiment(root / "exp", probe_server.base_url)
    import_answers(exp, lambda p, model, trait, i: designed_answer(p, DESIGN[(model, trait)][i]))
    summary = run_experiment(exp, progress=False)
    totals = {(s.stage, s.model_id): (s.total, s.failed) for s in summary.stages}
    assert totals[("extract", "extractor")] == (16, 0)  # imported answers: only the extractor is called
    build_report(exp, root / "report")
    return root / "report"


def by_trait(report: Path) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["model"], r["trait"]): r for r in read_csv(report / "decision_bias_by_trait.csv")}


def scores(model: str, trait: str) -> np.ndarray:
    return np.array([SCORE[d] for d in DESIGN[(model, trait)] if d is not None])


def test_counts_mean_and_share_by_hand(report: Path) -> None:
    rows = by_trait(report)
    r = rows[("m1", "uneducated")]
    assert (int(r["n_answers"]), int(r["n_extracted"]), int(r["n_unextractable"])) == (4, 4, 0)
    assert float(r["bias"]) == pytest.approx(0.5) and float(r["pct_stereotypical"]) == pytest.approx(75.0)
    assert float(r["pct_counter"]) == pytest.approx(25.0) and r["prefix"] == "default" and r["setting"] == "naming"
    r = rows[("m1", "rural")]
    assert (int(r["n_extracted"]), int(r["n_unextractable"])) == (2, 2) and float(r["bias"]) == pytest.approx(0.0)
    assert float(rows[("m2", "uneducated")]["bias"]) == -1.0


def test_t_p_and_ci_equal_scipy_and_the_bootstrap_written_out(report: Path) -> None:
    rows = by_trait(report)
    for key in (("m1", "uneducated"), ("m1", "rural")):
        want = stats.ttest_1samp(scores(*key), 0.0)
        assert float(rows[key]["t"]) == pytest.approx(want.statistic)
        assert float(rows[key]["p"]) == pytest.approx(want.pvalue)
        rng = np.random.default_rng(SEED)
        values = scores(*key)
        means = values[rng.integers(0, values.size, size=(N_RESAMPLES, values.size))].mean(axis=1)
        lo, hi = np.quantile(means, [0.025, 0.975])
        assert (float(rows[key]["ci_low"]), float(rows[key]["ci_high"])) == (pytest.approx(lo), pytest.approx(hi))
    # by hand: mean 0.5, sd √((3·0.25 + 2.25) / 3) = 1, t = 0.5 / (1 / √4) = 1
    assert float(rows[("m1", "uneducated")]["t"]) == pytest.approx(1.0)
    assert rows[("m1", "uneducated")]["significant"] == "False"
    constant = rows[("m2", "uneducated")]
    assert float(constant["t"]) == -math.inf and float(constant["p"]) == 0.0 and constant["significant"] == "True"
    single = rows[("m2", "rural")]
    assert single["t"] == single["p"] == single["ci_low"] == single["ci_high"] == ""


def test_unextractable_answers_are_counted_per_model_trait_setting(report: Path) -> None:
    table = {(r["model"], r["trait"], r["setting"]): r for r in read_csv(report / "decision_unextractable.csv")}
    assert {r["condition"] for r in table.values()} == {"dialect"}
    assert {k: int(v["n_unextractable"]) for k, v in table.items()} == {
        ("m1", "rural", "naming"): 2, ("m1", "uneducated", "naming"): 0,
        ("m2", "rural", "naming"): 3, ("m2", "uneducated", "naming"): 0}
    assert float(table[("m2", "rural", "naming")]["unextractable_rate"]) == pytest.approx(0.75)
    # the extractor's readings all agree with the regex reading of the designed answers
    assert sum(int(r["n_regex_disagrees"]) for r in table.values()) == 0
    assert sum(int(r["n_regex_checked"]) for r in table.values()) == sum(
        int(r["n_json"]) + int(r["n_regex_extractor"]) for r in table.values()) == 11
    for r in table.values():  # every answer is either read (by some method) or counted unextractable
        read = int(r["n_json"]) + int(r["n_regex_extractor"]) + int(r["n_regex_generation"])
        assert read + int(r["n_unextractable"]) == int(r["n_answers"]) == 4
    answers = read_csv(report / "decision_answers.csv")
    assert len(answers) == 16 and sum(a["extracted"] == "False" for a in answers) == 5
    assert all(a["reason"].startswith("extractor: no decision (unclear)") for a in answers if a["extracted"] == "False")
    html = (report / "index.html").read_text(encoding="utf-8")
    assert "Unextractable answers per model, trait, setting and condition" in html and REFUSAL not in html


def test_each_extraction_is_a_judgment_row_with_its_score(report: Path) -> None:
    import sqlite3

    store = report.parent / "exp" / "dec.sqlite"
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT model_id, judge_id, rubric, score, parse_status, parsed FROM judgments").fetchall()
    assert len(rows) == 16 and {r[1] for r in rows} == {"extractor"} and {r[2] for r in rows} == {
        "decision_extraction"}
    scored = sorted(r[3] for r in rows if r[3] is not None)
    assert scored == sorted([*scores("m1", "uneducated"), *scores("m1", "rural"), *scores("m2", "uneducated"),
                             *scores("m2", "rural")])
    assert all(json.loads(r[5])["extraction"]["method"] in ("json", "regex_extractor", "none") for r in rows)


def test_equal_option_scores_end_to_end(tmp_path: Path, probe_server: Any) -> None:
    """App. B.3: both writers neutral → 0; one neutral → ±0.5 as the other assignment is (counter-)stereotypical."""
    exp = write_experiment(tmp_path / "exp", probe_server.base_url, allow_neutral=True, traits=["uneducated"],
                           scenarios=["uneducated_1"])

    def answer(p: Any, model: str, trait: str, i: int) -> str:
        std = [p.opposite_option, "None", "Both", p.trait_option][i]  # the standard writer's assignment
        dia = ["None", "Both", p.trait_option, "None"][i]
        by_writer = {p.dialect_writer: dia, p.standard_writer: std}
        return f"Task 2:\nWriter A: {by_writer['A']}\nWriter B: {by_writer['B']}"

    import_answers(exp, answer)
    run_experiment(exp, progress=False)
    build_report(exp, tmp_path / "report")
    answers = read_csv(tmp_path / "report" / "decision_answers.csv")
    got = sorted((a["model"], a["item_id"], float(a["score"])) for a in answers)
    # i = 0: dialect none, standard opposite (stereotypical) → +0.5; 1: both neutral → 0;
    # 2: dialect trait (stereotypical), standard both → +0.5; 3: dialect none, standard trait (counter) → −0.5
    assert [s for _, _, s in got] == [0.5, 0.0, 0.5, -0.5] * 2
    row = read_csv(tmp_path / "report" / "decision_bias_by_trait.csv")[0]
    assert float(row["bias"]) == pytest.approx(0.125) and float(row["pct_stereotypical"]) == pytest.approx(50.0)


def test_failed_extractor_calls_fall_back_to_the_answer_and_are_counted(tmp_path: Path) -> None:
    """Every 2nd extractor call fails (HTTP 500, no retry): those answers are read by the regex fallback from the
    model's answer itself and counted as n_extractor_failed; nothing is dropped."""
    from dialectbias.testing import TestServer

    faults = {"rules": [{"kind": "500", "match": "<<<", "every": 2}]}
    with TestServer(faults=faults, responder="dialectbias.testing:probe_responder") as server:
        exp = write_experiment(tmp_path / "exp", server.base_url, traits=["uneducated"], scenarios=["uneducated_1"])
        config = yaml.safe_load(exp.read_text(encoding="utf-8"))
        config["roles"]["extractor"]["max_retries"] = 0
        config["roles"]["extractor"]["max_concurrency"] = 1
        exp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        import_answers(exp, lambda p, model, trait, i: designed_answer(p, DESIGN[(model, trait)][i]))
        summary = run_experiment(exp, progress=False)
    totals = {(s.stage, s.model_id): (s.total, s.failed) for s in summary.stages}
    assert totals[("extract", "extractor")] == (8, 4)
    build_report(exp, tmp_path / "report")
    answers = read_csv(tmp_path / "report" / "decision_answers.csv")
    failed = [a for a in answers if a["extractor_status"] == "failed"]
    assert len(answers) == 8 and len(failed) == 4
    assert all(a["extracted"] == "True" and a["method"] == "regex_generation" for a in failed)
    rows = by_trait(tmp_path / "report")
    assert sum(int(r["n_extractor_failed"]) for r in rows.values()) == 4
    assert {k: float(r["bias"]) for k, r in rows.items()} == {("m1", "uneducated"): 0.5, ("m2", "uneducated"): -1.0}


def test_the_regex_check_flags_an_extractor_that_disagrees_with_the_answer() -> None:
    from dialectbias.tasks.probes.decision._extract import Extraction
    from dialectbias.tasks.probes.decision._prompt import DecisionPrompt
    from dialectbias.tasks.probes.decision._task import _regex_agrees

    p = DecisionPrompt(text="x", dialect_writer="A", trait_option="Roofers", opposite_option="Neurologists",
                       options=["Roofers", "Neurologists"], scenario="uneducated_1")
    answer = "Task 2:\nWriter A: Neurologists\nWriter B: Roofers"
    agree = Extraction(method="json", writer_a="opposite", writer_b="trait")
    differ = Extraction(method="json", writer_a="trait", writer_b="opposite")
    assert _regex_agrees(agree, answer, p) is True and _regex_agrees(differ, answer, p) is False
    assert _regex_agrees(differ, "Both would do well.", p) is None  # the regex cannot read it: no check
    assert _regex_agrees(Extraction(method="none", reason="x"), answer, p) is None
