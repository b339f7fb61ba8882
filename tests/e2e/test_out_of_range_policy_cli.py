"""Issue 24 item 2 end to end: a judge whose answers are out of range (every integer 1023984765, what llama.cpp's
grammar let through) is re-asked under the rubric's default `out_of_range: reask` and counted as invalid values
when the re-ask is out of range too; under `out_of_range: clip` its judgments are scored with the values clipped,
the originals kept, flagged, sent to review and counted in the run summary, `status`, the export and the report.
Switching the policy builds new judge requests whose answers come from the cache: no judge call, and the stored
judgments under the other policy are superseded, never kept as they were.

3 items × 2 dialects × 2 models = 12 judge requests; q01's 4 answer out of range (first ask and re-ask)."""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path
from typing import Any

HUGE = 1023984765
LIKERT = ("dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length")


def _study(qa: Any, qa_server: Any, qa_project: Any, policy: str | None) -> Any:
    qa_server.set_faults([{"kind": "out_of_range", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=3)
    _write_rubric(project, policy)
    project.config["judges"][0]["rubric"] = "rlaif_policy.yaml"
    project.rewrite()
    return project


def _write_rubric(project: Any, policy: str | None) -> None:
    """The packaged RLAIF rubric, with `out_of_range: <policy>` when given (its prompt stays the paper's)."""
    text = (resources.files("dialectbias") / "resources/rubrics/rlaif.yaml").read_text(encoding="utf-8")
    if policy is not None:
        text += f"\nout_of_range: {policy}\n"
    (project.dir / "rlaif_policy.yaml").write_text(text, encoding="utf-8")


def _judge_stats(qa: Any, stdout: str) -> dict[str, str]:
    return {(r["stage"], r["model"]): r for r in qa.parse_table(stdout)}[("judge", "judge-1")]


def _current(qa: Any, cli: Any, project: Any, out: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    done = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert done.exit_code == 0, done.output
    return {(j["model_id"], j["item_id"], j["variant"]): j for j in qa.read_jsonl(out / "judgments.jsonl")
            if j["current"]}


def test_clip_scores_flags_reviews_and_counts_out_of_range_judgments(
        qa: Any, qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path) -> None:
    project = _study(qa, qa_server, qa_project, "clip")
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 0, ran.output
    judge = _judge_stats(qa, ran.stdout)
    assert judge["calls"] == "12" and judge.get("invalid values", "0") == "0"
    assert "repaired/re-asked" not in judge  # nothing re-asked: the values were clipped
    assert ("judge judge-1: 12 judgments · 0 unscored (parse failed) · 4 clipped out of range (flagged, for "
            "review) · ") in ran.stdout

    judgments = _current(qa, cli, project, tmp_path / "export")
    clipped = {k: j for k, j in judgments.items() if k[1] == "q01"}
    assert len(clipped) == 4 and len(judgments) == 12
    for j in clipped.values():
        assert j["score"] == 10.0 and j["needs_review"] and j["flagged"] and j["parse_status"] == "ok"
        assert j["clipped"] == {**{f: [HUGE, 5] for f in LIKERT}, "confidence": [HUGE, 5]}
        assert f"out of range: dialect_comprehension {HUGE} clipped to 5" in j["flags"]
        assert j["parsed"]["dialect_comprehension"] == 5 and j["confidence"] == 5
    assert not any(j["clipped"] for k, j in judgments.items() if k[1] != "q01")

    status = cli("status", project.yaml_path).stdout
    assert "clipped (out of range): 4" in status and "clipped out of range 4" in status

    report = cli("report", project.yaml_path, "--out", tmp_path / "report")
    assert report.exit_code == 0, report.output
    with (tmp_path / "report" / "qa_bias_counts.csv").open(encoding="utf-8") as fh:
        counts = {r["model"]: r for r in csv.DictReader(fh)}
    assert {m: (r["scored"], r["clipped (out of range)"], r["unscored (invalid values)"])
            for m, r in counts.items()} == {"model-a": ("6", "2", "0"), "model-b": ("6", "2", "0")}
    alert = ("judge judge-1: 4 judgment(s) scored on values clipped into their range (rubric out_of_range: clip): "
             "flagged, in the review queue")
    assert f"warning: {alert}" in report.stderr
    assert alert in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")


def test_switching_the_policy_supersedes_the_judgments_from_the_cache(
        qa: Any, qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path) -> None:
    project = _study(qa, qa_server, qa_project, None)  # the default: reask
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 0, ran.output
    judge = _judge_stats(qa, ran.stdout)
    assert (judge["invalid values"], judge["repaired/re-asked"]) == ("4", "0/4")
    assert "judge judge-1: 12 judgments · 4 unscored (invalid values) · " in ran.stdout
    asked = qa_server.stats()["chat_requests"]

    _write_rubric(project, "clip")
    clip = cli("run", project.yaml_path, "--no-progress")
    assert clip.exit_code == 0, clip.output
    assert qa_server.stats()["chat_requests"] == asked  # every judge answer came from the cache
    assert _judge_stats(qa, clip.stdout)["cached"] == "12"
    assert "judge judge-1: 12 judgments · 0 unscored (parse failed) · 4 clipped out of range" in clip.stdout
    judgments = _current(qa, cli, project, tmp_path / "clip")
    assert [j["score"] for k, j in judgments.items() if k[1] == "q01"] == [10.0] * 4
    status = cli("status", project.yaml_path).stdout
    assert "superseded: 12" in status  # the judgments made under reask: kept, not current

    _write_rubric(project, "reask")  # said explicitly: the same requests as the default's
    back = cli("run", project.yaml_path, "--no-progress")
    assert back.exit_code == 0, back.output
    assert qa_server.stats()["chat_requests"] == asked
    assert "judge judge-1: 12 judgments · 4 unscored (invalid values) · " in back.stdout
    again = _current(qa, cli, project, tmp_path / "reask")
    assert all(j["score"] is None and j["reason"].startswith("invalid values: ")
               for k, j in again.items() if k[1] == "q01")
    assert not any(j["clipped"] for j in again.values())
