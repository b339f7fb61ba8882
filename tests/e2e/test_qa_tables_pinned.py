"""Regression pin (issue 8, Done means): a deterministic qa_bias run against the test server with two RLAIF
judges gives exactly these Table 4 (`qa_bias_model_by_dialect.csv`), Table 5 (`qa_bias_judge_agreement.csv`),
kappa and alpha values. They were recorded before judgments were stored for any rubric (RLAIF columns,
bit-packed reader) and must not move when the judgment record or its readers change."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

_PAIR = {"primary": "judge-1", "secondary": "judge-2"}
_STATS = ("n", "ccc", "cbs", "pearson", "spearman", "mean_abs_diff", "pass", "note", "dropped_unscored")

TABLE4 = [
    {"model": "model-a", "chittagong": "5.15", "sylhet": "6.45", "avg": "5.8", "dialects_scored": "2"},
    {"model": "model-b", "chittagong": "4.0125", "sylhet": "5.175", "avg": "4.59375", "dialects_scored": "2"},
    {"model": "dialect_avg", "chittagong": "4.58125", "sylhet": "5.8125", "avg": "5.196875", "dialects_scored": ""},
]
TABLE5 = [{**_PAIR, "scope": scope, "group": group, **dict(zip(_STATS, stats, strict=True))}
          for scope, group, *stats in (
    ("overall", "all", "32", "0.377931198", "0.3554464286", "0.3803564542", "0.3328132185", "1.70625", "FAIL", "",
     "0"),
    ("dialect", "chittagong", "16", "0.2817207354", "0.635625", "0.287306054", "0.2884615385", "1.525", "FAIL", "",
     "0"),
    ("dialect", "sylhet", "16", "0.36537348", "0", "0.3739006646", "0.3564068666", "1.8875", "FAIL", "", "0"),
    ("model", "model-a", "16", "0.4103687477", "0.42125", "0.4555100609", "0.4619927457", "1.575", "FAIL", "", "0"),
    ("model", "model-b", "16", "0.3317474927", "0.3265", "0.3385796306", "0.2844510721", "1.8375", "FAIL", "", "0"),
)]
KAPPA = [{**_PAIR, "field": field, "n": "32", "kappa_quadratic": kappa, "note": ""} for field, kappa in (
    ("dialect_comprehension", "0.263662512"), ("factual_correctness", "0.2551020408"),
    ("content_completeness", "0.06119510439"), ("response_clarity", "0.07161219243"),
    ("appropriate_length", "-0.4127906977"))]
ALPHA = [{"judges": "judge-1, judge-2", "units": "32", "alpha_interval": "0.3860535492", "note": ""}]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [{k: _fmt(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def _fmt(value: str) -> str:
    """Numbers to 10 significant digits (the last bits of a float may differ by summation order)."""
    try:
        return f"{float(value):.10g}" if value not in ("", "nan") else value
    except ValueError:
        return value


def test_table4_and_table5_values_are_pinned(qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=8)
    judge = dict(project.config["judges"][0])
    project.config["judges"].append({**judge, "id": "judge-2", "model": "judge-model-2", "role": "secondary"})
    project.config["options"] = {"n_resamples": 200}
    project.rewrite()
    for args in (("run", project.yaml_path, "--no-progress"),
                 ("report", project.yaml_path, "--out", tmp_path / "report")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    report = tmp_path / "report"
    assert _rows(report / "qa_bias_model_by_dialect.csv") == TABLE4
    assert _rows(report / "qa_bias_judge_agreement.csv") == TABLE5
    assert _rows(report / "qa_bias_judge_kappa.csv") == KAPPA
    assert _rows(report / "qa_bias_judge_alpha.csv") == ALPHA
