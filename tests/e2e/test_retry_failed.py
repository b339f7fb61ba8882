"""`run --retry unscored|failed|all` (issue 24 item 3): a judgment stored as unscored (the judge's answer
did not validate, even after the re-ask) or whose re-ask call failed is asked again on request; the old
request, its re-ask and its judgment are kept as superseded (current=false in `export`), the report uses the
new answer, `status` and the run summary say how to retry, and a rerun without --retry makes no call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REASK_TEXT = "Your answer could not be used"


def run(cli: Any, project: Any, *args: str, expect: int = 0) -> Any:
    result = cli("run", project.yaml_path, "--no-progress", *args)
    assert result.exit_code == expect, result.output
    return result


def unscored_project(qa: Any, qa_server: Any, qa_project: Any) -> Any:
    """q01's judge prompts (2 models × 2 dialects) answer invalid JSON to their first ask and its re-ask:
    4 unscored judgments of 8; asked again, the same prompt answers well."""
    qa_server.set_faults([{"kind": "invalid_json", "per_prompt_first_n": 1,
                           "match": qa.judge_match(qa.PLACES[0])}])
    return qa_project(qa_server.base_url, n_items=2)


def scores(report_dir: Path) -> str:
    return (report_dir / "qa_bias_model_by_dialect.csv").read_text(encoding="utf-8")


def test_retry_unscored_asks_again_and_keeps_the_old_judgments_superseded(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any, tmp_path: Path, monkeypatch: Any) -> None:
    project = unscored_project(qa, qa_server, qa_project)
    monkeypatch.chdir(project.dir)  # the hint names the file as the user would type it
    first = run(cli, project)
    assert "judge judge-1: 8 judgments · 4 unscored" in first.stdout
    hint = "4 unscored judgments: dialectbias run bnqa.yaml --retry unscored"
    assert hint in first.stdout.splitlines()  # the summary says how
    status = cli("status", project.yaml_path)
    assert hint in status.stdout.splitlines() and len(hint) <= 80
    assert "--retry failed" not in status.stdout

    qa_server.reset_stats()
    run(cli, project)  # without --retry an unscored judgment is final: nothing is sent
    assert qa_server.stats()["requests_total"] == 0

    retried = run(cli, project, "--retry", "unscored")
    assert qa_server.stats()["requests_total"] == 4  # the 4 judge prompts, valid this time: no re-ask
    assert "judge judge-1: 8 judgments · 0 unscored" in retried.stdout
    assert "--retry" not in cli("status", project.yaml_path).stdout

    qa_server.reset_stats()
    run(cli, project)  # and the retried requests stay the current ones
    run(cli, project, "--retry", "all")  # nothing left to retry
    assert qa_server.stats()["requests_total"] == 0

    out = tmp_path / "export"
    exported = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert exported.exit_code == 0, exported.output
    judgments = qa.read_jsonl(out / "judgments.jsonl")
    old = [j for j in judgments if not j["current"]]
    new = [j for j in judgments if j["current"]]
    assert len(old) == 4 and len(new) == 8
    assert all(j["parse_status"] == "failed" and j["score"] is None for j in old)
    assert all(j["parse_status"] == "ok" and j["score"] is not None for j in new)
    assert {(j["model_id"], j["item_id"], j["variant"]) for j in old} == \
        {(m, "q01", v) for m in ("model-a", "model-b") for v in ("chittagong", "sylhet")}
    reasks = qa.read_jsonl(out / "reasks.jsonl")
    assert len(reasks) == 4 and not any(r["current"] for r in reasks)

    # the report is the same as a run whose judge never failed
    report = cli("report", project.yaml_path, "--out", tmp_path / "report")
    assert report.exit_code == 0, report.output
    clean = qa_project(qa_server.base_url, n_items=2, name="clean")
    qa_server.set_faults(None)
    run(cli, clean)
    assert cli("report", clean.yaml_path, "--out", tmp_path / "clean").exit_code == 0
    assert scores(tmp_path / "report") == scores(tmp_path / "clean")


def test_retry_failed_resends_failed_reasks_only(qa_server: Any, qa_project: Any, cli: Any, qa: Any,
                                                 monkeypatch: Any) -> None:
    qa_server.set_faults([{"kind": "500", "match": REASK_TEXT, "times": 4},
                          {"kind": "invalid_json", "per_prompt_first_n": 1, "match": qa.judge_match(qa.PLACES[0])}])
    project = qa_project(qa_server.base_url, n_items=2, judge={"max_retries": 0})
    monkeypatch.chdir(project.dir)
    run(cli, project)
    status = cli("status", project.yaml_path).stdout
    assert "4 failed requests: dialectbias run bnqa.yaml --retry failed" in status.splitlines()
    assert "--retry unscored" not in status
    qa_server.reset_stats()
    run(cli, project, "--retry", "unscored")  # not what failed here: nothing is sent
    assert qa_server.stats()["requests_total"] == 0
    retried = run(cli, project, "--retry", "failed")
    assert qa_server.stats()["requests_total"] == 4
    assert "judge judge-1: 8 judgments · 0 unscored" in retried.stdout


def test_retry_all_and_a_bad_value(qa_server: Any, qa_project: Any, cli: Any, qa: Any) -> None:
    project = unscored_project(qa, qa_server, qa_project)
    run(cli, project)
    qa_server.reset_stats()
    retried = run(cli, project, "--retry", "all")
    assert qa_server.stats()["requests_total"] == 4
    assert "4 unscored" not in retried.stdout
    bad = cli("run", project.yaml_path, "--no-progress", "--retry", "everything")
    assert bad.exit_code == 2 and "everything" in bad.output


def test_a_long_path_puts_the_command_on_a_line_of_its_own(tmp_path: Path) -> None:
    from dialectbias.run import retry_hints

    short = retry_hints(4, 1, Path("bnqa.yaml"))
    assert short == ["4 unscored judgments: dialectbias run bnqa.yaml --retry unscored",
                     "1 failed request: dialectbias run bnqa.yaml --retry failed"]
    deep = tmp_path.parent.parent / ("d" * 40) / "bn-qa.yaml"  # not under the working directory: absolute
    lines = retry_hints(2, 0, deep)
    assert lines == ["2 unscored judgments: to ask again,", f"  dialectbias run {deep} --retry unscored"]
