"""A study shaped like the Bengali paper's, end to end through the CLI: several models, 9 dialects, a primary
and two secondary judges against the local test server; the report writes Tables 4 and 5 and the breakdowns."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import yaml

DIALECTS = ["barishal", "chittagong", "comilla", "habiganj", "kishoreganj", "mymensingh", "noakhali", "sylhet",
            "tangail"]
TYPES = ["definitional", "contrasting", "factual", "functional"]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_nine_dialects_three_judges_report(qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    items = []
    for i in range(8):
        base = qa.qa_item(i)
        items.append({**base, "question_type": TYPES[i % 4], "domain": ["Technology", "Arts & Humanities"][i % 2],
                      "variants": {"standard": base["variants"]["standard"],
                                   **{d: f"{base['variants']['chittagong']} ({d})" for d in DIALECTS}}})
    qa.write_jsonl(tmp_path / "items.jsonl", items)
    common = {"provider": "openai", "base_url": qa_server.base_url, "max_concurrency": 8}
    config = {
        "name": "study", "task": "qa_bias", "data": "items.jsonl",
        "models": [{"id": "small", "model": "m-small", "family": "fam", "params_b": 1, **common},
                   {"id": "large", "model": "m-large", "family": "fam", "params_b": 8, **common},
                   {"id": "other", "model": "m-other", "family": "other", "params_b": 4, **common}],
        "judges": [{"id": "primary", "model": "judge-p", "role": "primary", **common},
                   {"id": "second-1", "model": "judge-s1", "role": "secondary", **common},
                   {"id": "second-2", "model": "judge-s2", "role": "secondary", **common}],
        "options": {"n_resamples": 500},
    }
    exp = tmp_path / "study.yaml"
    exp.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")

    ran = cli("run", exp, "--no-progress")
    assert ran.exit_code == 0, ran.output
    assert "judge primary: 216 judgments · 0 unscored (parse failed)" in ran.stdout  # 3 models × 8 items × 9
    # 3 models × 8 items × 10 variants, then 3 judges × 3 models × 8 items × 9 dialects
    assert qa_server.stats()["chat_requests"] == 240 + 648
    out = tmp_path / "report"
    result = cli("report", exp, "--out", out)
    assert result.exit_code == 0, result.output

    table4 = _rows(out / "qa_bias_model_by_dialect.csv")
    assert list(table4[0]) == ["model", *DIALECTS, "avg", "dialects_scored"]
    assert [r["model"] for r in table4][-1] == "dialect_avg" and len(table4) == 4
    averages = [float(r["avg"]) for r in table4[:-1]]
    assert averages == sorted(averages, reverse=True)

    table5 = _rows(out / "qa_bias_judge_agreement.csv")
    assert {r["secondary"] for r in table5} == {"second-1", "second-2"}
    assert {r["primary"] for r in table5} == {"primary"}
    scopes = {(r["secondary"], r["scope"]) for r in table5}
    assert {("second-1", s) for s in ("overall", "dialect", "model")} <= scopes
    overall = [r for r in table5 if r["scope"] == "overall"]
    assert all(int(r["n"]) == 3 * 8 * 9 and r["pass"] in ("PASS", "FAIL") for r in overall)

    for name in ("qa_bias_by_question_type.csv", "qa_bias_by_domain.csv", "qa_bias_by_model_size.csv",
                 "qa_bias_gap.csv", "qa_bias_paired_dialects.csv", "qa_bias_paired_models.csv",
                 "qa_bias_counts.csv", "qa_bias_judge_kappa.csv", "qa_bias_judge_fields.csv", "qa_bias_heatmap.png",
                 "qa_bias_heatmap.svg",
                 "qa_bias_gap.png", "index.html"):
        assert (out / name).is_file(), name
    by_type = _rows(out / "qa_bias_by_question_type.csv")
    assert list(by_type[0]) == ["model", "question_type", "n", "mean_score", "ci_low", "ci_high"]
    assert {r["question_type"] for r in by_type} == {*TYPES, "all"}
    assert {"small", "large", "other", "model_avg"} <= {r["model"] for r in by_type}
    assert all(float(r["ci_low"]) <= float(r["mean_score"]) <= float(r["ci_high"]) for r in by_type)
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "second-2" in html and "data:image/png;base64," in html
