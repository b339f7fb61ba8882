"""Issue 8 Done means: a rubric defined in YAML only runs as a second judge of a qa_bias experiment against
the test server, and its judgments are in `export`, in the review CSV round trip and in the agreement
table; the packaged `caption` rubric runs as a judge too."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

HELPFULNESS = """\
name: helpfulness
description: How helpful the dialect answer is, compared with the standard answer.
fields:
  - name: helpfulness
    type: integer
    minimum: 1
    maximum: 5
    description: The dialect answer helps the asker as much as the standard answer.
    anchors: {1: not at all, 3: partly, 5: fully}
  - name: factual_correctness
    type: integer
    minimum: 0
    maximum: 5
    description: The dialect answer is factually correct.
  - name: fluency
    type: integer
    minimum: 1
    maximum: 5
    anchors: {1: broken, 5: fluent}
score: mean
confidence: true
"""
TEMPLATE = ("HELPFULNESS CHECK\n{{ scale }}\nQ: {{ dialect_question }}\nA: {{ dialect_response }}\n"
            "REF: {{ standard_response }}\n")


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_yaml_rubric_as_second_judge_export_review_and_agreement(qa: Any, qa_server: Any, cli: Any,
                                                                tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=4)
    (project.dir / "helpfulness.yaml").write_text(HELPFULNESS, encoding="utf-8")
    (project.dir / "helpful.j2").write_text(TEMPLATE, encoding="utf-8")
    judge = dict(project.config["judges"][0])
    project.config["judges"].append({**judge, "id": "judge-h", "model": "judge-h", "role": "secondary",
                                     "rubric": "helpfulness.yaml", "template": "helpful.j2"})
    project.config["options"] = {"n_resamples": 50}
    project.rewrite()
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 0, ran.output
    assert "judge judge-h: 16 judgments · 0 unscored (parse failed) · 0 flagged · " in ran.stdout

    # the judge saw its template with the rubric's scale, and was asked for the rubric's schema
    import sqlite3

    with sqlite3.connect(project.store_path) as db:
        messages, schema = db.execute("SELECT messages, json_schema FROM requests WHERE model_id='judge-h' "
                                      "AND stage='judge' LIMIT 1").fetchone()
    user = json.loads(messages)[-1]["content"]
    assert user.startswith("HELPFULNESS CHECK\nAnswer with one JSON object") and "1 = not at all" in user
    assert list(json.loads(schema)["properties"]) == ["helpfulness", "factual_correctness", "fluency", "confidence"]

    # export: one record per judgment whatever the rubric
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", tmp_path / "x").exit_code == 0
    rows = [json.loads(line) for line in (tmp_path / "x" / "judgments.jsonl").read_text("utf-8").splitlines()]
    mine = [r for r in rows if r["judge_id"] == "judge-h"]
    assert len(mine) == 16 and {r["rubric"] for r in mine} == {"helpfulness"}
    for r in mine:
        assert set(r["parsed"]) == {"helpfulness", "factual_correctness", "fluency", "confidence"}
        fields = [r["parsed"][f] for f in ("helpfulness", "factual_correctness", "fluency")]
        assert r["score"] == sum(fields) / 3 and r["confidence"] == r["parsed"]["confidence"]
        assert r["parse_status"] == "ok" and r["checks"] == {} and r["flags"] == []
        assert r["needs_review"] == int(r["confidence"] <= 3)
    assert {r["rubric"] for r in rows if r["judge_id"] == "judge-1"} == {"rlaif"}
    assert cli("export", project.yaml_path, "--format", "csv", "--out", tmp_path / "c").exit_code == 0
    csv_rows = [r for r in _csv(tmp_path / "c" / "judgments.csv") if r["judge_id"] == "judge-h"]
    assert json.loads(csv_rows[0]["parsed"]).keys() == mine[0]["parsed"].keys()

    # agreement: the score rescaled to the primary's 0–10, kappa only on the shared field
    assert cli("report", project.yaml_path, "--out", tmp_path / "r").exit_code == 0
    agreement = _csv(tmp_path / "r" / "qa_bias_judge_agreement.csv")
    overall = next(r for r in agreement if r["secondary"] == "judge-h" and r["scope"] == "overall")
    assert overall["n"] == "16" and overall["ccc"] != ""
    kappa = _csv(tmp_path / "r" / "qa_bias_judge_kappa.csv")
    assert [(r["secondary"], r["field"], r["n"]) for r in kappa] == [("judge-h", "factual_correctness", "16")]
    assert "compared on scores rescaled to the primary" in (tmp_path / "r" / "index.html").read_text("utf-8")

    # review CSV round trip on the helpfulness judge's queue
    queue = tmp_path / "queue.csv"
    exported = cli("review", "export", project.yaml_path, "--out", queue, "--judge", "judge-h")
    assert exported.exit_code == 0, exported.output
    readme = (tmp_path / "queue.README.txt").read_text("utf-8")
    assert "human_helpfulness: integer from 1 to 5" in readme and "    1 = not at all" in readme
    with queue.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        columns, pending = list(reader.fieldnames or []), list(reader)
    assert [c for c in columns if c.startswith("human_")] == ["human_helpfulness", "human_factual_correctness",
                                                             "human_fluency"]
    assert pending and {r["rubric"] for r in pending} == {"helpfulness"}
    target = pending[0]
    target.update(human_helpfulness="5", human_factual_correctness="2", human_fluency="5")
    with queue.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerow(target)
    imported = cli("review", "import", project.yaml_path, queue, "--annotator", "me")
    assert imported.exit_code == 0 and "1 imported" in imported.stdout, imported.output
    with sqlite3.connect(project.store_path) as db:
        (value,) = db.execute("SELECT value FROM annotations WHERE target_id = ?",
                              (target["judgment_id"],)).fetchone()
    assert json.loads(value)["score"] == 4.0  # mean of 5, 2, 5, through the rubric

    # the override is in the report of the helpfulness judge (made primary: no model call is needed)
    project.config["judges"][0]["role"], project.config["judges"][1]["role"] = "secondary", "primary"
    project.config["judges"].reverse()
    project.rewrite()
    qa_server.reset_stats()
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert qa_server.stats()["chat_requests"] == 0
    assert cli("report", project.yaml_path, "--out", tmp_path / "r2").exit_code == 0
    counts = _csv(tmp_path / "r2" / "qa_bias_counts.csv")
    assert sum(int(r["overridden"]) for r in counts) == 1
    matrix = _csv(tmp_path / "r2" / "qa_bias_model_by_dialect.csv")
    cells = {(r["model"], d): float(r[d]) for r in matrix[:-1] for d in ("chittagong", "sylhet")}
    assert all(1.0 <= v <= 5.0 for v in cells.values())  # Table 4 on the helpfulness scale
    assert cells[(target["model"], target["dialect"])] == pytest.approx(sum(
        4.0 if r["judgment_id"] == target["judgment_id"] else float(r["score"])
        for r in mine_of(rows, target)) / 4)


def mine_of(rows: list[dict[str, Any]], target: dict[str, str]) -> list[dict[str, Any]]:
    """The helpfulness judgments of the target's (model, dialect) cell, with `judgment_id`."""
    return [{**r, "judgment_id": r["request_id"]} for r in rows if r["judge_id"] == "judge-h"
            and r["model_id"] == target["model"] and r["variant"] == target["dialect"]]


def test_packaged_caption_rubric_runs_as_a_judge(qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=3)
    judge = dict(project.config["judges"][0])
    project.config["judges"].append({**judge, "id": "judge-c", "model": "judge-c", "role": "secondary",
                                     "rubric": "caption"})
    project.config["options"] = {"n_resamples": 50}
    project.rewrite()
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 0, ran.output
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", tmp_path / "x").exit_code == 0
    rows = [json.loads(line) for line in (tmp_path / "x" / "judgments.jsonl").read_text("utf-8").splitlines()]
    caption = [r for r in rows if r["judge_id"] == "judge-c"]
    assert len(caption) == 12 and {r["rubric"] for r in caption} == {"caption"}
    for r in caption:
        assert set(r["parsed"]) == {"relevance", "clarity", "conciseness", "creativity", "overall", "explanation"}
        assert r["score"] == r["parsed"]["overall"] and 0 <= r["score"] <= 1
        assert r["confidence"] is None and r["needs_review"] == 0
    assert cli("report", project.yaml_path, "--out", tmp_path / "r").exit_code == 0
    overall = next(r for r in _csv(tmp_path / "r" / "qa_bias_judge_agreement.csv")
                   if r["secondary"] == "judge-c" and r["scope"] == "overall")
    assert overall["n"] == "12"


def test_a_primary_judge_on_a_0_to_1_rubric_reports_gaps_on_its_own_scale(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=3)
    project.config["judges"][0] = {**project.config["judges"][0], "rubric": "caption"}
    project.config["options"] = {"n_resamples": 50}
    project.rewrite()
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert cli("report", project.yaml_path, "--out", tmp_path / "r").exit_code == 0
    table4 = {r["model"]: r for r in _csv(tmp_path / "r" / "qa_bias_model_by_dialect.csv")}
    for row in _csv(tmp_path / "r" / "qa_bias_by_model_size.csv"):
        assert float(row["mean_gap"]) == pytest.approx(1 - float(table4[row["model"]]["avg"]))
    for row in _csv(tmp_path / "r" / "qa_bias_gap.csv"):
        assert float(row["gap"]) == pytest.approx(1 - float(row["mean_score"]))
    html = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "1 − mean_score" in html and "1 − avg score" in html and "10 − " not in html
