"""`dialectbias review export | import | calibration` after a real run against the test server."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dialectbias.judges import load_rubric, rlaif_score
from dialectbias.review import human_columns
from dialectbias.store import Store
from dialectbias.tasks.qa_bias._report import final_scores

HUMAN_COLUMNS = human_columns(load_rubric("rlaif"))


def read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.fixture
def project(qa_server: Any, qa_project: Any, cli: Any) -> Any:
    project = qa_project(qa_server.base_url, n_items=6)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    return project


def table(project: Any, qa: Any) -> pd.DataFrame:
    with Store.open(project.store_path, create=False) as store:
        return final_scores(store, qa.JUDGE, list(qa.MODELS)).set_index("request_id")


def test_review_round_trip_through_the_cli(project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    before = table(project, qa)
    pending = before[before.needs_review == 1]
    assert len(pending) > 1  # the responder's confidences are spread over 1–5

    res = cli("review", "export", project.yaml_path, "--out", tmp_path / "queue.csv")
    assert res.exit_code == 0, res.output
    assert f"{len(pending)} judgment(s) to review" in res.output
    rows = read(tmp_path / "queue.csv")
    assert {r["judgment_id"] for r in rows} == set(pending.index)

    scores = {rows[0]["judgment_id"]: [5, 5, 5, 5, 5], rows[1]["judgment_id"]: [0, 1, 5, 4, 5]}
    for row in rows[:2]:
        row.update(dict(zip(HUMAN_COLUMNS, map(str, scores[row["judgment_id"]]), strict=True)))
    path = write(tmp_path / "queue.csv", rows)

    res = cli("review", "import", project.yaml_path, path, "--annotator", "rahim")
    assert res.exit_code == 0, res.output
    assert f"2 imported, {len(rows) - 2} skipped (empty), 0 unchanged" in res.output
    after = table(project, qa)
    for rid, likert in scores.items():
        assert after.loc[rid, "final_score"] == pytest.approx(rlaif_score(likert))
        assert after.loc[rid, "annotator"] == "rahim"
    untouched = after.index.difference(list(scores))
    pd.testing.assert_series_equal(after.loc[untouched, "final_score"], before.loc[untouched, "final_score"])

    res = cli("review", "import", project.yaml_path, path, "--annotator", "rahim")
    assert "0 imported" in res.output and "2 unchanged" in res.output
    pd.testing.assert_frame_equal(table(project, qa), after)

    # the report's Table 4 is built from the same final scores
    assert cli("report", project.yaml_path, "--out", tmp_path / "report").exit_code == 0
    matrix = pd.read_csv(tmp_path / "report" / "qa_bias_model_by_dialect.csv").set_index("model")
    m, d = after.loc[rows[0]["judgment_id"], ["model_id", "variant"]]
    expected = after[(after.model_id == m) & (after.variant == d)].final_score.mean()
    assert matrix.loc[m, d] == pytest.approx(expected)
    # reviewed judgments leave the queue
    cli("review", "export", project.yaml_path, "--out", tmp_path / "again.csv")
    assert len(read(tmp_path / "again.csv")) == len(rows) - 2


def test_invalid_queue_file_exits_with_the_line_and_column(project: Any, cli: Any, tmp_path: Path) -> None:
    cli("review", "export", project.yaml_path, "--out", tmp_path / "queue.csv")
    rows = read(tmp_path / "queue.csv")
    rows[0].update(dict(zip(HUMAN_COLUMNS, ["3", "3", "7", "3", "3"], strict=True)))
    path = write(tmp_path / "queue.csv", rows)
    res = cli("review", "import", project.yaml_path, path, "--annotator", "rahim")
    assert res.exit_code == 1
    assert f"{path}:2: column human_content_completeness: '7' is not an integer 0–5" in res.stderr


def test_calibration_sample_per_confidence_level(project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    res = cli("review", "calibration", project.yaml_path, "--out", tmp_path / "cal.csv", "--per-level", "2",
              "--seed", "3", "--excel")
    assert res.exit_code == 0, res.output
    rows = read(tmp_path / "cal.csv")
    counts = table(project, qa).confidence.value_counts()
    for level in range(1, 6):
        assert sum(r["confidence"] == str(level) for r in rows) == min(2, counts.get(level, 0))
    assert (tmp_path / "cal.csv").read_bytes().startswith(b"\xef\xbb\xbf")


def test_a_judgment_of_a_judge_the_task_has_no_rubric_for_is_an_error_naming_it(project: Any, cli: Any, qa: Any,
                                                                                  tmp_path: Path) -> None:
    """A queue exported for judge-1, imported after the experiment renamed its judge: nothing is read with a
    guessed rubric (review used to fall back to RLAIF silently), the error names the judge."""
    assert cli("review", "export", project.yaml_path, "--out", tmp_path / "queue.csv").exit_code == 0
    rows = read(tmp_path / "queue.csv")
    rows[0].update(dict(zip(HUMAN_COLUMNS, ["3", "3", "3", "3", "3"], strict=True)))
    path = write(tmp_path / "queue.csv", rows)
    project.rewrite(judges=[{**project.config["judges"][0], "id": "judge-renamed"}])
    res = cli("review", "import", project.yaml_path, path, "--annotator", "rahim")
    assert res.exit_code == 1
    assert f"judge {qa.JUDGE!r}: the experiment's task declares no rubric for it" in res.stderr
    assert "judge-renamed (rlaif)" in res.stderr
    assert table(project, qa).annotator.isna().all()  # nothing was imported


def test_unknown_judge_is_an_error(project: Any, cli: Any, tmp_path: Path) -> None:
    res = cli("review", "export", project.yaml_path, "--out", tmp_path / "q.csv", "--judge", "nobody")
    assert res.exit_code == 1 and "no judge with id 'nobody'" in res.stderr


def test_queue_samples_and_queue_exports_say_what_is_wrong(project: Any, cli: Any, tmp_path: Path) -> None:
    res = cli("review", "sample", project.yaml_path, "--queue", "translation_correction")
    assert res.exit_code == 1 and "--per: queue 'translation_correction' has no default sample size" in res.stderr
    res = cli("review", "sample", project.yaml_path, "--queue", "nope", "--per", "3")
    assert res.exit_code == 1 and "--queue: unknown queue 'nope'" in res.stderr
    res = cli("review", "sample", project.yaml_path, "--queue", "translation_score", "--by", "model")
    assert res.exit_code == 1 and "--by: 'model' is not a stratum key" in res.stderr
    res = cli("review", "export", project.yaml_path, "--queue", "nope", "--out", tmp_path / "x.csv")
    assert res.exit_code == 1 and "--queue: queue 'nope' has no CSV round trip here" in res.stderr
    # the qa_bias items carry no machine translation: nothing to sample, and no empty sample hides later ones
    res = cli("review", "sample", project.yaml_path, "--queue", "translation_score")
    assert res.exit_code == 1 and "queue 'translation_score' has no targets yet: nothing to sample" in res.stderr
    res = cli("review", "sample", project.yaml_path, "--queue", "judgments", "--per", "2")
    assert res.exit_code == 0 and "per dialect" in res.stdout
    res = cli("review", "sample", project.yaml_path, "--queue", "judgments", "--clear")
    assert "queue judgments: sample removed (" in res.stdout and "every target is listed again" in res.stdout
    res = cli("review", "sample", project.yaml_path, "--queue", "judgments", "--clear")
    assert "queue judgments had no sample" in res.stdout


def test_export_items_of_a_qa_bias_experiment(project: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    res = cli("export", project.yaml_path, "--items", out)
    assert res.exit_code == 0, res.output
    assert "6 items →" in res.stdout and "0 variants human-validated" in res.stdout
    assert "machine variants added" not in res.stdout  # that is the translate export's
    original = {r["id"]: r for r in qa.read_jsonl(project.dir / "items.jsonl")}
    exported = {r["id"]: r for r in qa.read_jsonl(out)}
    assert {k: v["variants"] for k, v in exported.items()} == {k: v["variants"] for k, v in original.items()}


def test_a_judgments_sample_restricts_the_judgments_csv(project: Any, cli: Any, tmp_path: Path) -> None:
    from dialectbias.review import stored_sample

    res = cli("review", "sample", project.yaml_path, "--queue", "judgments", "--per", "1")
    assert res.exit_code == 0, res.output
    with Store.open(project.store_path, create=False) as store:
        sample = stored_sample(store, "judgments")
    assert sample is not None and all(len(s.ids) == 1 for s in sample.strata) and len(sample.strata) >= 2
    res = cli("review", "export", project.yaml_path, "--out", tmp_path / "q.csv")
    assert res.exit_code == 0 and "sampled judgment(s) to review" in res.output
    rows = read(tmp_path / "q.csv")
    assert rows and {r["judgment_id"] for r in rows} <= set(sample.ids)


def _ccc(x: list[float], y: list[float]) -> float:
    import numpy as np

    x_, y_ = np.array(x), np.array(y)
    return float(2 * np.mean((x_ - x_.mean()) * (y_ - y_.mean()))
                 / (x_.var() + y_.var() + (x_.mean() - y_.mean()) ** 2))


@pytest.mark.parametrize("mode", ["mean", "latest"])
def test_two_annotators_of_one_judgment_give_the_mean_or_the_latest_human_score(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path, mode: str) -> None:
    """review.human_score: every judgment scored by two annotators (imported one after the other); the
    calibration table, its CSV and Table 4 use their mean (the default: the key is left out) or the second
    one's score, and say which."""
    project = qa_project(qa_server.base_url, n_items=6)
    project.rewrite(review={"confidence_threshold": 5, "calibration_min_pairs": 3,
                            **({"human_score": mode} if mode == "latest" else {})})
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert cli("review", "export", project.yaml_path, "--out", tmp_path / "queue.csv").exit_code == 0
    rows = read(tmp_path / "queue.csv")
    assert len(rows) == 24  # 6 items × 2 dialects × 2 models, all with confidence ≤ 5
    likert = {"ann-a": {r["judgment_id"]: [k % 6] * 5 for k, r in enumerate(rows)},
              "ann-b": {r["judgment_id"]: [k % 3 + 3] * 5 for k, r in enumerate(rows)}}
    for annotator, scores in likert.items():
        filled = [{**r, **dict(zip(HUMAN_COLUMNS, map(str, scores[r["judgment_id"]]), strict=True))} for r in rows]
        res = cli("review", "import", project.yaml_path, write(tmp_path / f"{annotator}.csv", filled),
                  "--annotator", annotator)
        assert "24 imported" in res.output, res.output
    a, b = ({rid: rlaif_score(x) for rid, x in likert[n].items()} for n in ("ann-a", "ann-b"))
    human = {rid: (a[rid] + b[rid]) / 2 if mode == "mean" else b[rid] for rid in a}
    assert any(a[rid] != b[rid] for rid in a)  # the two modes differ

    label = {"mean": "human score = mean over annotators (review.human_score: mean)",
             "latest": "human score = latest stored, whoever gave it (review.human_score: latest)"}[mode]
    judged = table(project, qa)
    ids = list(judged.index)
    assert cli("report", project.yaml_path, "--out", tmp_path / "report").exit_code == 0
    matrix = pd.read_csv(tmp_path / "report" / "qa_bias_model_by_dialect.csv").set_index("model")
    cell = [human[i] for i in ids if judged.loc[i, "model_id"] == "model-a" and judged.loc[i, "variant"] == "sylhet"]
    assert matrix.loc["model-a", "sylhet"] == pytest.approx(sum(cell) / len(cell))
    calibration = pd.read_csv(tmp_path / "report" / "qa_bias_judge_calibration.csv")
    assert set(calibration.human_score) == {mode}
    assert label in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")

    res = cli("review", "calibration", project.yaml_path, "--csv", tmp_path / "cal.csv")
    assert res.exit_code == 0, res.output
    assert label in " ".join(res.stdout.split())
    overall = next(r for r in read(tmp_path / "cal.csv")
                   if r["table"] == "judge_calibration" and r["judge_or_queue"] == qa.JUDGE and r["dialect"] == "all")
    assert (overall["n"], overall["multi"], overall["human_score"]) == ("24", "24", mode)
    expected = _ccc([human[i] for i in ids], [judged.loc[i, "judge_score"] for i in ids])
    assert float(overall["ccc"]) == pytest.approx(expected, abs=1e-4)
