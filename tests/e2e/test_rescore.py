"""Issue 19 items 1 and 2: the judge's parsed field values are the measurement; the score, ceilings, flags and
the review routing derive from the experiment file as it is *now*. Editing a rubric's scoring (weights, the
score rule, ceilings) or the review threshold re-scores the stored judgments — and the human overrides —
with no model call; editing the fields themselves (the JSON schema) asks the judge again.

The judge is a test server that answers every request with {"fa": 5, "fb": 5, "confidence": 2}."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ANSWER = {"fa": 5, "fb": 5, "confidence": 2}
N_ITEMS = 2
N_JUDGMENTS = N_ITEMS * 2 * 2  # items × models × dialects


def _rubric(**changes: Any) -> dict[str, Any]:
    rubric: dict[str, Any] = {
        "name": "fafb", "score": "weighted_sum", "confidence": True,
        "fields": [{"name": "fa", "type": "integer", "minimum": 0, "maximum": 5, "weight": 3},
                   {"name": "fb", "type": "integer", "minimum": 0, "maximum": 5, "weight": 1}]}
    return rubric | changes


@pytest.fixture(scope="module")
def fixed_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="fixed:" + json.dumps(ANSWER)) as server:
        yield server


@pytest.fixture
def server(fixed_server: Any) -> Any:
    fixed_server.reset_stats()
    return fixed_server


class Study:
    def __init__(self, qa: Any, directory: Path, base_url: str) -> None:
        self.project = qa.make_project(directory, base_url, n_items=N_ITEMS)
        self.dir = directory
        self.project.config["judges"][0]["rubric"] = "fafb.yaml"
        self.project.config["options"] = {"n_resamples": 20}
        self.write_rubric(_rubric())
        self.project.rewrite()

    def write_rubric(self, rubric: dict[str, Any]) -> None:
        (self.dir / "fafb.yaml").write_text(yaml.safe_dump(rubric, sort_keys=False), encoding="utf-8")

    def review(self, **settings: Any) -> None:
        self.project.rewrite(review=settings)

    @property
    def yaml(self) -> Path:
        return self.project.yaml_path


def _exported(cli: Any, study: Study, out: Path) -> list[dict[str, Any]]:
    done = cli("export", study.yaml, "--format", "jsonl", "--out", out)
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in (out / "judgments.jsonl").read_text("utf-8").splitlines()]
    return [r for r in rows if r["current"]]


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _table4(cli: Any, study: Study, out: Path) -> dict[tuple[str, str], float]:
    done = cli("report", study.yaml, "--out", out)
    assert done.exit_code == 0, done.output
    rows = _csv(out / "qa_bias_model_by_dialect.csv")
    return {(r["model"], d): float(r[d]) for r in rows if r["model"] != "dialect_avg"
            for d in ("chittagong", "sylhet")}


def _run(cli: Any, study: Any) -> None:
    done = cli("run", study.yaml_path if hasattr(study, "yaml_path") else study.yaml, "--no-progress")
    assert done.exit_code == 0, done.output


def test_editing_the_weights_rescores_without_a_call(qa: Any, server: Any, cli: Any, tmp_path: Path) -> None:
    study = Study(qa, tmp_path / "exp", server.base_url)
    _run(cli, study)
    assert server.stats()["chat_by_model"].get("judge-model") == N_JUDGMENTS
    assert {r["score"] for r in _exported(cli, study, tmp_path / "x0")} == {4.0}

    study.write_rubric(_rubric(fields=[{**f, "weight": 1} for f in _rubric()["fields"]]))
    server.reset_stats()
    _run(cli, study)
    assert server.stats()["chat_requests"] == 0
    rows = _exported(cli, study, tmp_path / "x1")
    assert len(rows) == N_JUDGMENTS and {r["score"] for r in rows} == {2.0}
    assert set(_table4(cli, study, tmp_path / "r1").values()) == {2.0}


def test_report_and_export_follow_the_rubric_without_a_run(qa: Any, server: Any, cli: Any, tmp_path: Path) -> None:
    study = Study(qa, tmp_path / "exp", server.base_url)
    _run(cli, study)
    fields = [{k: v for k, v in f.items() if k != "weight"} for f in _rubric()["fields"]]
    study.write_rubric(_rubric(score="mean", fields=fields))
    server.reset_stats()
    assert set(_table4(cli, study, tmp_path / "r").values()) == {5.0}
    assert {r["score"] for r in _exported(cli, study, tmp_path / "x")} == {5.0}
    assert server.stats()["chat_requests"] == 0


def test_adding_a_ceiling_clips_flags_and_rescores(qa: Any, server: Any, cli: Any, tmp_path: Path) -> None:
    study = Study(qa, tmp_path / "exp", server.base_url)
    study.review(confidence_threshold=1)
    _run(cli, study)
    ceiling = {"field": "fa", "max": 2, "when": {"field": "fb", "op": ">=", "value": 4}}
    study.write_rubric(_rubric(ceilings=[ceiling]))
    server.reset_stats()
    _run(cli, study)
    assert server.stats()["chat_requests"] == 0
    rows = _exported(cli, study, tmp_path / "x")
    assert {r["score"] for r in rows} == {3 * 2 / 5 + 1.0}
    for r in rows:
        assert r["parsed"]["fa"] == 2 and r["clipped"] == {"fa": [5, 2]} and r["flagged"] == 1
        assert r["needs_review"] == 1 and r["flags"] == ["ceiling: fa 5 clipped to 2 (fb >= 4)"]
    # and removing it again restores the judge's own value
    study.write_rubric(_rubric())
    rows = _exported(cli, study, tmp_path / "x2")
    assert {r["score"] for r in rows} == {4.0}
    assert all(r["parsed"]["fa"] == 5 and r["clipped"] == {} and r["needs_review"] == 0 for r in rows)
    assert server.stats()["chat_requests"] == 0


def test_changing_the_fields_asks_the_judge_again(qa: Any, server: Any, cli: Any, tmp_path: Path) -> None:
    study = Study(qa, tmp_path / "exp", server.base_url)
    _run(cli, study)
    fields = _rubric()["fields"]
    study.write_rubric(_rubric(fields=[fields[0], {**fields[1], "maximum": 10}]))
    server.reset_stats()
    _run(cli, study)
    assert server.stats()["chat_by_model"].get("judge-model") == N_JUDGMENTS
    assert {r["score"] for r in _exported(cli, study, tmp_path / "x")} == {3.0 + 0.5}


def test_a_human_override_is_rescored_with_the_rubric(qa: Any, server: Any, cli: Any, tmp_path: Path) -> None:
    study = Study(qa, tmp_path / "exp", server.base_url)
    _run(cli, study)
    queue = tmp_path / "queue.csv"
    assert cli("review", "export", study.yaml, "--out", queue).exit_code == 0
    rows = _csv(queue)
    assert len(rows) == N_JUDGMENTS  # confidence 2 ≤ the default threshold 3
    target = rows[0]
    target.update(human_fa="1", human_fb="5")
    with queue.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerow(target)
    imported = cli("review", "import", study.yaml, queue, "--annotator", "ann")
    assert imported.exit_code == 0, imported.output
    cell = (target["model"], target["dialect"])
    human = 3 * 1 / 5 + 1.0
    assert _table4(cli, study, tmp_path / "r0")[cell] == pytest.approx((human + 4.0) / 2)

    study.write_rubric(_rubric(fields=[{**f, "weight": 1} for f in _rubric()["fields"]]))
    server.reset_stats()
    assert _table4(cli, study, tmp_path / "r1")[cell] == pytest.approx((1.2 + 2.0) / 2)
    counts = _csv(tmp_path / "r1" / "qa_bias_counts.csv")
    assert sum(int(r["changed by review"]) for r in counts) == 1
    assert cli("export", study.yaml, "--format", "jsonl", "--out", tmp_path / "x").exit_code == 0
    (annotation,) = [json.loads(line) for line in (tmp_path / "x" / "annotations.jsonl").read_text().splitlines()]
    value = json.loads(annotation["value"]) if isinstance(annotation["value"], str) else annotation["value"]
    assert value["score"] == pytest.approx(1.2) and value["fields"] == {"fa": 1, "fb": 5}
    # importing the same file again changes nothing: the stored override is the file's, re-scored
    again = cli("review", "import", study.yaml, queue, "--annotator", "ann")
    assert again.exit_code == 0 and "1 unchanged" in again.stdout, again.output
    assert server.stats()["chat_requests"] == 0


def test_raising_the_review_threshold_queues_without_a_call(qa: Any, server: Any, cli: Any, tmp_path: Path) -> None:
    study = Study(qa, tmp_path / "exp", server.base_url)
    study.review(confidence_threshold=1)
    _run(cli, study)
    queue = tmp_path / "q1.csv"
    assert cli("review", "export", study.yaml, "--out", queue).exit_code == 0
    assert _csv(queue) == []
    status = cli("status", study.yaml)
    assert "needs review: 0" in status.stdout, status.output

    study.review(confidence_threshold=3)
    server.reset_stats()
    status = cli("status", study.yaml)
    assert "needs review: 8" in status.stdout, status.output
    queue = tmp_path / "q3.csv"
    assert cli("review", "export", study.yaml, "--out", queue).exit_code == 0
    assert len(_csv(queue)) == N_JUDGMENTS
    assert cli("report", study.yaml, "--out", tmp_path / "r").exit_code == 0
    counts = _csv(tmp_path / "r" / "qa_bias_counts.csv")
    assert sum(int(r["needs review"]) for r in counts) == N_JUDGMENTS
    assert {r["needs_review"] for r in _exported(cli, study, tmp_path / "x")} == {1}
    assert server.stats()["chat_requests"] == 0

    study.review(confidence_threshold=1)
    assert "needs review: 0" in cli("status", study.yaml).stdout


def test_status_explains_needs_review_per_judge(qa: Any, server: Any, cli: Any, tmp_path: Path) -> None:
    study = Study(qa, tmp_path / "exp", server.base_url)
    judge = dict(study.project.config["judges"][0])
    study.project.config["judges"].append({**judge, "id": "judge-2", "model": "judge-2", "role": "secondary"})
    study.project.rewrite()
    _run(cli, study)
    status = cli("status", study.yaml)
    assert status.exit_code == 0, status.output
    out = status.stdout
    assert "judge judge-1 (primary):" in out and "judge judge-2 (secondary):" in out
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("judge judge-1"))
    second = next(i for i, line in enumerate(lines) if line.startswith("judge judge-2"))
    assert lines[first] == "judge judge-1 (primary): 8 judgments · 8 need review · 0 reviewed"
    assert lines[first + 1] == "  in the default review queue (`review export`, the review app)"
    assert lines[second] == "judge judge-2 (secondary): 8 judgments · 8 need review · 0 reviewed"
    assert lines[second + 1] == "  not in the default queue: `review export --judge judge-2`"
    # the default queue holds the primary judge's 8, as status says
    queue = tmp_path / "q.csv"
    assert cli("review", "export", study.yaml, "--out", queue).exit_code == 0
    assert {r["judge"] for r in _csv(queue)} == {"judge-1"} and len(_csv(queue)) == 8


def test_on_miscalibrated_routing_follows_the_thresholds_now(qa_server: Any, qa_project: Any, cli: Any,
                                                             tmp_path: Path) -> None:
    """`review.on_miscalibrated: review` routes a dialect by the latest calibration snapshot's measures against
    the thresholds in the experiment file now: lowering them un-routes it without a new snapshot."""
    import sqlite3

    from dialectbias.api import open_experiment
    from dialectbias.review import override_value, save_annotation
    from dialectbias.store import OVERRIDE_KIND, Store, get_judgment

    project = qa_project(qa_server.base_url, n_items=6)
    review = {"confidence_threshold": 0, "calibration_min_pairs": 3, "min_ccc": 1.01, "on_miscalibrated": "review"}
    project.rewrite(review=review)
    _run(cli, project)
    task = open_experiment(project.yaml_path)[1]
    with sqlite3.connect(project.store_path) as db:
        ids = [r[0] for r in db.execute("SELECT request_id FROM judgments WHERE variant = 'chittagong' AND "
                                        "model_id = 'model-a' ORDER BY item_id LIMIT 3")]
    with Store.open(project.store_path, create=False) as store:
        rubric = task.rubrics["judge-1"]
        for request_id in ids:
            record = get_judgment(store, request_id)
            assert record is not None
            value = override_value(rubric, record, {f.name: 2 for f in rubric.numeric_fields}, None)
            save_annotation(store, request_id, "lead", OVERRIDE_KIND, value)
    calibration = cli("review", "calibration", project.yaml_path)
    assert "judge judge-1 is below the thresholds for chittagong" in calibration.stderr, calibration.output
    with sqlite3.connect(project.store_path) as db:
        (unrouted,) = db.execute(
            "SELECT count(*) FROM judgments WHERE variant = 'chittagong' AND needs_review = 0 AND request_id NOT IN "
            "(SELECT target_id FROM annotations)").fetchone()
    assert unrouted > 0

    def queued(name: str) -> int:
        assert cli("review", "export", project.yaml_path, "--out", tmp_path / name).exit_code == 0
        return len(_csv(tmp_path / name))

    qa_server.reset_stats()
    routed = queued("routed.csv")
    assert f"({unrouted} routed: on_miscalibrated)" in cli("status", project.yaml_path).stdout
    project.rewrite(review={**review, "min_ccc": -1.0, "min_cbs": -1.0, "min_kappa": -1.0})
    assert routed - queued("unrouted.csv") == unrouted
    assert "routed: on_miscalibrated" not in cli("status", project.yaml_path).stdout
    assert qa_server.stats()["chat_requests"] == 0


def test_a_copy_of_rlaif_with_other_weights_rescores_without_a_call(qa_server: Any, qa_project: Any, cli: Any,
                                                                   tmp_path: Path) -> None:
    """The RLAIF prompt is kept for a rubric that asks what RLAIF asks (weights, score rule, ceilings and checks
    are not part of the question): re-weighting a copy of it re-scores, it does not re-ask."""
    from importlib import resources

    project = qa_project(qa_server.base_url, n_items=2)
    project.rewrite(options={"n_resamples": 20})
    _run(cli, project)
    before = {r["request_id"]: r for r in _exported(cli, _Path(project.yaml_path), tmp_path / "x0")}
    text = (resources.files("dialectbias") / "resources" / "rubrics" / "rlaif.yaml").read_text("utf-8")
    assert "weight: 3.0" in text and "weight: 1.0" in text
    (project.dir / "rlaif_flat.yaml").write_text(
        text.replace("weight: 3.0", "weight: 1.0").replace("weight: 2.5", "weight: 1.0").replace(
            "weight: 2.0", "weight: 1.0").replace("weight: 1.5", "weight: 1.0"), encoding="utf-8")
    project.config["judges"][0]["rubric"] = "rlaif_flat.yaml"
    project.rewrite()
    qa_server.reset_stats()
    _run(cli, project)
    assert qa_server.stats()["chat_requests"] == 0
    after = {r["request_id"]: r for r in _exported(cli, _Path(project.yaml_path), tmp_path / "x1")}
    assert after.keys() == before.keys()
    fields = ("dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
              "appropriate_length")
    for r in after.values():
        if (r["reason"] or "").startswith("zeroed: "):
            assert r["score"] == 0.0
        else:
            assert r["score"] == pytest.approx(sum(r["parsed"][f] for f in fields) / 5)


class _Path:
    """An experiment path where a `Study` is expected (`_exported` reads `.yaml`)."""

    def __init__(self, path: Path) -> None:
        self.yaml = path
