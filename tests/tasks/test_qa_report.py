"""The qa_bias report over a synthetic store: Table 4/5 CSVs, breakdowns, gap, paired tests, plots."""

from __future__ import annotations

import csv
import itertools
import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dialectbias.api import build_report
from dialectbias.config import load_experiment
from dialectbias.data import Item
from dialectbias.metrics import critical_bias_sensitivity, lin_ccc, paired_test
from dialectbias.store import OVERRIDE_KIND, Store, dumps
from dialectbias.tasks import load_task
from dialectbias.tasks.qa_bias._report import load_judgments
from store_sql import connection, reorder_keys

MODELS = {"m-small": ("fam", 3), "m-large": ("fam", 70)}
DIALECTS = ["chittagong", "sylhet", "tangail"]
JUDGES = [("judge-p", "primary"), ("judge-s1", "secondary"), ("judge-s2", "secondary")]
ITEMS = [("q1", "definitional", "health"), ("q2", "factual", "health"), ("q3", "definitional", "farming"),
         ("q4", "factual", "farming")]
FIELDS = ["dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length"]
WEIGHTS = [3.0, 2.5, 2.0, 1.5, 1.0]


def likert_for(judge: str, model: str, item: str, dialect: str) -> list[int]:
    base = {"m-small": 2, "m-large": 4}[model] + (DIALECTS.index(dialect) == 2) - (item == "q1")
    noise = {"judge-p": 0, "judge-s1": (int(item[1]) % 2), "judge-s2": 1}[judge]
    return [max(0, min(5, base + (noise if k % 2 else 0))) for k in range(5)]


def score(likert: list[int]) -> float:
    return sum(w * v for w, v in zip(WEIGHTS, likert, strict=True)) / 5


def write_project(root: Path, *, cbs_threshold: float = 4.0) -> Path:
    (root / "items.jsonl").write_text("".join(json.dumps({"id": i, "variants": {"standard": "x", **{
        d: "y" for d in DIALECTS}}}) + "\n" for i, _, _ in ITEMS), encoding="utf-8")
    lines = ["name: rep", "task: qa_bias", "data: items.jsonl", "store: rep.sqlite",
             f"variants: [standard, {', '.join(DIALECTS)}]", "seed: 3", "options:", "  n_resamples: 500",
             f"  cbs_threshold: {cbs_threshold}", "models:"]
    for m, (fam, size) in MODELS.items():
        lines += [f"  - {{id: {m}, provider: openai, base_url: 'http://127.0.0.1:9/v1', model: {m}, "
                  f"family: {fam}, params_b: {size}}}"]
    lines.append("judges:")
    for j, role in JUDGES:
        lines += [f"  - {{id: {j}, provider: openai, base_url: 'http://127.0.0.1:9/v1', model: {j}, "
                  f"role: {role}}}"]
    (root / "exp.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "exp.yaml"


def insert_judgment(conn: sqlite3.Connection, rid: str, judge: str, model: str, item: str, dialect: str,
                    likert: list[int] | None, **extra: Any) -> None:
    conn.execute("INSERT INTO requests (request_id, stage, model_id, item_id, variant, template, "
                 "prompt_hash, "
                 "messages, params, cache_key, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 (rid, "judge", judge, item, dialect, "t", rid, "[]", "{}", rid, 0.0))
    parsed = None if likert is None else dumps({"chain_of_thought_reasoning": "…", "script_valid": True,
                                                "refusal": False, **dict(zip(FIELDS, likert, strict=True)),
                                                "confidence": extra.get("confidence", 5)})
    row = {"request_id": rid, "judge_id": judge, "model_id": model, "item_id": item, "variant": dialect,
           "rubric": "rlaif", "raw_output": parsed or "garbage", "parsed": parsed,
           "score": None if likert is None else score(likert), "confidence": None if likert is None else 5,
           "parse_status": "failed" if likert is None else "ok", "needs_review": int(likert is None),
           "flagged": 0, "reason": None if likert is not None else "invalid JSON", **extra}
    conn.execute(f"INSERT INTO judgments (rid, {','.join(row)}) SELECT rid, {','.join('?' * len(row))} "
                 "FROM requests WHERE request_id = ?", (*row.values(), rid))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    exp = write_project(tmp_path)
    task = load_task(load_experiment(exp))
    with Store.open(tmp_path / "rep.sqlite") as store:
        store.save_items(Item(id=i, question_type=qt, domain=dom, variants={"standard": "x", **{
            d: "y" for d in DIALECTS}}) for i, qt, dom in ITEMS)
        conn = connection(store)
        conn.execute("BEGIN")
        for (judge, _), model, (item, _, _), dialect in itertools.product(JUDGES, MODELS, ITEMS, DIALECTS):
            rid = f"{judge}/{model}/{item}/{dialect}"
            if (judge, model, item, dialect) == ("judge-p", "m-small", "q2", "sylhet"):
                # an older judgment of the same key that a later one supersedes
                insert_judgment(conn, rid + "/old", judge, model, item, dialect, [0, 0, 0, 0, 0],
                                scoring=task.scoring(judge))
            if (judge, model, item, dialect) == ("judge-s1", "m-large", "q3", "tangail"):
                insert_judgment(conn, rid, judge, model, item, dialect, None, scoring=task.scoring(judge))  # unscored
                continue
            extra = {"reason": "zeroed: refusal: judge and code agree (pattern bn_sorry)", "score": 0.0} if (
                judge, model, item, dialect) == ("judge-p", "m-small", "q4", "chittagong") else {}
            # written as the current settings would (the `scoring` fingerprint): the report reads them as they are
            insert_judgment(conn, rid, judge, model, item, dialect, likert_for(judge, model, item, dialect),
                            scoring=task.scoring(judge), **extra)
        # two annotators override one primary judgment: their mean counts (review.human_score: mean, the
        # default), or the latest one (latest)
        target = "judge-p/m-large/q1/sylhet"
        for value, annotator in ((1.0, "ann-a"), (9.5, "ann-b")):
            conn.execute("INSERT INTO annotations (target_id, annotator, kind, value, created_at) VALUES "
                         "(?,?,?,?,?)",
                         (target, annotator, OVERRIDE_KIND, dumps({"score": value}), time.time()))
        conn.execute("COMMIT")
    return exp


def primary_score(model: str, item: str, dialect: str) -> float:
    if (model, item, dialect) == ("m-large", "q1", "sylhet"):
        return (1.0 + 9.5) / 2
    if (model, item, dialect) == ("m-small", "q4", "chittagong"):
        return 0.0
    return score(likert_for("judge-p", model, item, dialect))


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def header(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as fh:
        return next(csv.reader(fh))


def test_load_judgments_latest_overrides_and_likert(project: Path) -> None:
    with Store.open(project.parent / "rep.sqlite", create=False) as store:
        frame = load_judgments(store, [j for j, _ in JUDGES], list(MODELS), FIELDS, human="latest")
        mean = load_judgments(store, [j for j, _ in JUDGES], list(MODELS), FIELDS)
    assert len(frame) == len(JUDGES) * len(MODELS) * len(ITEMS) * len(DIALECTS)
    key = (frame.judge_id == "judge-p") & (frame.model_id == "m-small") & (frame.item_id == "q2")
    latest = frame[key & (frame.variant == "sylhet")].iloc[0]
    assert latest.judge_score == score(likert_for("judge-p", "m-small", "q2", "sylhet"))
    assert [latest[f] for f in FIELDS] == likert_for("judge-p", "m-small", "q2", "sylhet")
    over = frame[(frame.judge_id == "judge-p") & (frame.model_id == "m-large") & (frame.item_id == "q1")
                 & (frame.variant == "sylhet")].iloc[0]
    assert over.human_score == 9.5 and over.final_score == 9.5 and over.judge_score != 9.5
    assert mean.loc[over.name, "final_score"] == 5.25  # the default: the mean of ann-a's 1.0 and ann-b's 9.5
    failed = frame[(frame.judge_id == "judge-s1") & (frame.model_id == "m-large") & (frame.item_id == "q3")
                   & (frame.variant == "tangail")].iloc[0]
    assert failed.parse_status == "failed" and math.isnan(failed.judge_score)
    assert math.isnan(failed[FIELDS[0]])
    zeroed = frame[(frame.zeroed == 1)]
    assert len(zeroed) == 1 and zeroed.iloc[0].final_score == 0.0


def test_report_tables(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    html = build_report(project, out).read_text(encoding="utf-8")

    # Table 4 with the override and the zeroed judgment
    t4 = read(out / "qa_bias_model_by_dialect.csv").set_index("model")
    for m, d in itertools.product(MODELS, DIALECTS):
        assert t4.loc[m, d] == pytest.approx(np.mean([primary_score(m, i, d) for i, _, _ in ITEMS]))

    # Table 5
    agree_path = out / "qa_bias_judge_agreement.csv"
    assert header(agree_path)[:11] == ["primary", "secondary", "scope", "group", "n", "ccc", "cbs", "pearson",
                                       "spearman", "mean_abs_diff", "pass"]
    agree = read(agree_path)
    assert len(agree) == 2 * (1 + len(DIALECTS) + len(MODELS))
    overall = agree[agree.scope == "overall"].set_index("secondary")
    keys = [(m, i, d) for m, (i, _, _), d in itertools.product(MODELS, ITEMS, DIALECTS)]
    p = [score(likert_for("judge-p", *k)) if k != ("m-small", "q4", "chittagong") else 0.0 for k in keys]
    s = [score(likert_for("judge-s1", *k)) for k in keys]
    ok = [k != ("m-large", "q3", "tangail") for k in keys]  # the unscored secondary judgment is dropped
    pp, ss = np.array(p)[ok], np.array(s)[ok]
    assert overall.loc["judge-s1", "n"] == 23 and overall.loc["judge-s1", "dropped_unscored"] == 1
    assert overall.loc["judge-s1", "ccc"] == pytest.approx(lin_ccc(pp, ss))  # judge scores, not the override
    assert overall.loc["judge-s1", "cbs"] == pytest.approx(critical_bias_sensitivity(pp, ss, threshold=4.0))
    assert set(agree["pass"]) <= {"PASS", "FAIL"}
    # m-large's primary scores are all ≥ 4 except the zero-free cells → CBS undefined there: empty, FAIL
    large = agree[(agree.scope == "model") & (agree.group == "m-large")]
    assert large.cbs.isna().all() and (large["pass"] == "FAIL").all()
    assert large.note.str.contains("CBS undefined").all()
    with (out / "qa_bias_judge_agreement.csv").open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["group"] == "m-large"]
    assert all(r["cbs"] == "" for r in rows)  # undefined is empty, never 0

    kappa = read(out / "qa_bias_judge_kappa.csv")
    assert header(out / "qa_bias_judge_kappa.csv") == ["primary", "secondary", "field", "n",
                                                        "kappa_quadratic", "note"]
    assert len(kappa) == 2 * 5
    assert header(out / "qa_bias_judge_alpha.csv") == ["judges", "units", "alpha_interval", "note"]

    # breakdowns
    assert header(out / "qa_bias_by_question_type.csv") == ["model", "question_type", "n", "mean_score", "ci_low",
                                                              "ci_high"]
    qt = read(out / "qa_bias_by_question_type.csv").set_index(["model", "question_type"])
    want = np.mean([primary_score("m-small", i, d) for i in ("q1", "q3") for d in DIALECTS])
    assert qt.loc[("m-small", "definitional"), "mean_score"] == pytest.approx(want)
    assert (qt.ci_low <= qt.mean_score + 1e-9).all() and (qt.mean_score <= qt.ci_high + 1e-9).all()
    dom = read(out / "qa_bias_by_domain.csv").set_index(["model", "domain"])
    want = np.mean([primary_score("m-large", i, d) for i in ("q3", "q4") for d in DIALECTS])
    assert dom.loc[("m-large", "farming"), "mean_score"] == pytest.approx(want)
    assert dom.ci_low.notna().all()
    size = read(out / "qa_bias_by_model_size.csv")
    assert list(size.columns) == ["model", "family", "params_b", "avg_score", "mean_gap", "gap_ci_low", "gap_ci_high",
                                  "dialects_scored"]
    assert size.set_index("model").loc["m-large", "mean_gap"] == pytest.approx(10 - t4.loc["m-large", "avg"])
    size_ci = size.set_index("model").loc["m-large", ["gap_ci_low", "gap_ci_high"]].tolist()
    assert size_ci == pytest.approx(read(out / "qa_bias_gap.csv").set_index(["model", "dialect"]).loc[
        ("m-large", "all"), ["ci_low", "ci_high"]].tolist())
    scale = read(out / "qa_bias_scale_by_family.csv").set_index("family")
    assert scale.loc["fam", "spearman_params_vs_score"] == pytest.approx(1.0)

    # the gap with CIs
    gap_path = out / "qa_bias_gap.csv"
    assert header(gap_path) == ["model", "dialect", "n", "mean_score", "gap", "ci_low", "ci_high"]
    gap = read(gap_path).set_index(["model", "dialect"])
    cell = gap.loc[("m-small", "sylhet")]
    assert cell.mean_score == pytest.approx(t4.loc["m-small", "sylhet"]) and cell.n == 4
    assert cell.ci_low <= cell.gap <= cell.ci_high
    assert gap.loc[("m-small", "all"), "mean_score"] == pytest.approx(t4.loc["m-small", "avg"])

    # paired tests
    dia = read(out / "qa_bias_paired_dialects.csv")
    assert len(dia) == len(MODELS) * 3
    row = dia[(dia.model == "m-large") & (dia.dialect_a == "chittagong")
              & (dia.dialect_b == "sylhet")].iloc[0]
    a = [primary_score("m-large", i, "chittagong") for i, _, _ in ITEMS]
    b = [primary_score("m-large", i, "sylhet") for i, _, _ in ITEMS]
    want_t = paired_test(a, b)
    assert row.mean_diff == pytest.approx(want_t.mean_diff) and row.t_pvalue == pytest.approx(want_t.t_pvalue)
    models = read(out / "qa_bias_paired_models.csv")
    assert len(models) == 1 and models.n[0] == 12

    counts = read(out / "qa_bias_counts.csv").set_index("model")
    assert counts.loc["m-small", "zeroed (script/refusal)"] == 1
    assert counts.loc["m-large", "overridden"] == 1 and counts.loc["m-large", "changed by review"] == 1

    # plots: PNG + SVG on disk, embedded in the HTML
    for stem in ("qa_bias_heatmap", "qa_bias_gap", "qa_bias_agreement_scatter"):
        assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.svg").stat().st_size > 0
    assert html.count("data:image/png;base64,") == 3
    assert "Multi-judge validation (Table 5)" in html and "CBS undefined" in html


def test_report_does_not_depend_on_storage_order(project: Path, tmp_path: Path) -> None:
    texts = set()
    store_path = project.parent / "rep.sqlite"
    for i, order in enumerate(["request_id", "request_id DESC", "score DESC"]):
        with sqlite3.connect(store_path) as db:  # the same rows stored in another order (their keys')
            db.execute("DELETE FROM judgments WHERE request_id LIKE '%/old'")  # (a key's latest: the last key)
            reorder_keys(db, order)
        build_report(project, tmp_path / f"r{i}")
        texts.add(tuple((tmp_path / f"r{i}" / name).read_text() for name in (
            "qa_bias_model_by_dialect.csv", "qa_bias_gap.csv", "qa_bias_judge_agreement.csv",
            "qa_bias_paired_dialects.csv")))
    assert len(texts) == 1


def test_report_without_secondary_judges(tmp_path: Path, project: Path) -> None:
    text = project.read_text(encoding="utf-8")
    cut = text[text.index("  - {id: judge-s1"):]
    project.write_text(text.replace(cut, ""), encoding="utf-8")
    out = tmp_path / "solo"
    html = build_report(project, out).read_text(encoding="utf-8")
    assert not (out / "qa_bias_judge_agreement.csv").exists()
    assert "No secondary judge" in html and (out / "qa_bias_gap.csv").exists()


def test_model_missing_a_dialect_has_no_avg_and_sorts_last(project: Path, tmp_path: Path) -> None:
    # m-large scores higher everywhere; remove its primary judgments in tangail: its row is incomplete
    with sqlite3.connect(project.parent / "rep.sqlite") as db:
        db.execute("DELETE FROM judgments WHERE judge_id = 'judge-p' AND model_id = 'm-large' "
                   "AND variant = 'tangail'")
    out = tmp_path / "gap"
    build_report(project, out)
    with (out / "qa_bias_model_by_dialect.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["model"] for r in rows] == ["m-small", "m-large", "dialect_avg"]  # complete rows first
    small, large, avg_row = rows
    assert large["avg"] == "" and large["tangail"] == "" and large["dialects_scored"] == "2"
    assert small["dialects_scored"] == "3"
    want_small = np.mean([primary_score("m-small", i, d) for i, _, _ in ITEMS for d in DIALECTS])
    assert float(small["avg"]) == pytest.approx(want_small)
    # the dialect average is over the complete rows only (here m-small alone)
    for d in DIALECTS:
        assert float(avg_row[d]) == pytest.approx(float(small[d]))
    assert float(avg_row["avg"]) == pytest.approx(want_small)

    # the gap table agrees: no 'all' value for the incomplete model, aggregates over complete models
    gap = read(out / "qa_bias_gap.csv").set_index(["model", "dialect"])
    assert math.isnan(gap.loc[("m-large", "all"), "mean_score"])
    assert gap.loc[("m-small", "all"), "mean_score"] == pytest.approx(want_small)
    for d in DIALECTS:
        assert gap.loc[("all", d), "mean_score"] == pytest.approx(float(avg_row[d]))
    assert gap.loc[("all", "all"), "mean_score"] == pytest.approx(float(avg_row["avg"]))

    # and it never feeds the size tables as if complete
    size = read(out / "qa_bias_by_model_size.csv").set_index("model")
    assert math.isnan(size.loc["m-large", "avg_score"]) and size.loc["m-large", "dialects_scored"] == 2
    assert math.isnan(size.loc["m-large", "gap_ci_low"]) and not math.isnan(size.loc["m-small", "gap_ci_low"])
    scale = read(out / "qa_bias_scale_by_family.csv").set_index("family")
    assert scale.loc["fam", "n_models"] == 1 and math.isnan(scale.loc["fam", "spearman_params_vs_score"])


def test_load_judgments_keeps_each_keys_latest_in_key_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several current judgments of one key (judge, model, item, variant): the last stored wins, rows come sorted
    by judge, model, variant, item, as pandas' drop_duplicates(keep='last') + a stable sort give them."""
    from dialectbias.tasks.qa_bias import _report as report_module

    rng = np.random.default_rng(3)
    n = 3000
    rows = {"judge": rng.integers(0, 2, n), "model": rng.integers(0, 3, n),
            "item_id": [f"q{i}" for i in rng.integers(0, 40, n)], "variant": [f"v{i}" for i in rng.integers(0, 4, n)],
            "score": rng.integers(0, 11, n).astype(float), "human_score": [None] * n,
            "confidence": rng.integers(1, 6, n),
            "needs_review": [0] * n, "flagged": [0] * n, "zeroed": [0] * n, "unscored": [0] * n,
            "out_of_range": [0] * n, "f": rng.random(n)}
    rows["human_score"][7] = 2.5

    def chunks(*_: Any, **__: Any) -> Any:
        for start in range(0, n, 700):
            yield {k: tuple(v[start:start + 700]) for k, v in rows.items()}

    monkeypatch.setattr(report_module, "judgment_columns", chunks)
    got = load_judgments(None, ["j0", "j1"], ["m0", "m1", "m2"], ["f"])  # type: ignore[arg-type]
    ref = pd.DataFrame({"judge_id": [f"j{i}" for i in rows["judge"]], "model_id": [f"m{i}" for i in rows["model"]],
                        "item_id": rows["item_id"], "variant": rows["variant"], "judge_score": rows["score"],
                        "row": np.arange(n)})
    ref = ref.drop_duplicates(["judge_id", "model_id", "item_id", "variant"], keep="last").sort_values(
        ["judge_id", "model_id", "variant", "item_id"], kind="stable")
    assert len(got) == len(ref) < n
    assert got[["judge_id", "model_id", "item_id", "variant"]].astype(str).values.tolist() == \
        ref[["judge_id", "model_id", "item_id", "variant"]].values.tolist()
    assert got.judge_score.tolist() == ref.judge_score.tolist()
    assert got.f.tolist() == pytest.approx(np.asarray(rows["f"], dtype=np.float32)[ref.row].tolist())
    human = got.human_score.notna()
    assert (got.final_score[human] == got.human_score[human]).all()
    assert (got.final_score[~human] == got.judge_score[~human]).all()


def test_the_column_buffers_grow_and_keep_every_value() -> None:
    from dialectbias.tasks.qa_bias._report import _Buffers

    buffers = _Buffers({"a": np.int16, "b": float}, capacity=4)
    chunks = [{"a": list(range(k, k + n)), "b": [None if i % 3 == 0 else i / 2 for i in range(k, k + n)]}
              for k, n in ((0, 3), (3, 5), (8, 1), (9, 20))]
    for chunk in chunks:
        buffers.append(chunk)
    got = buffers.columns()
    assert buffers.n == 29 and got["a"].tolist() == list(range(29)) and got["a"].dtype == np.int16
    assert np.isnan(got["b"][::3]).all() and got["b"][1] == 0.5 and got["b"][28] == 14.0
