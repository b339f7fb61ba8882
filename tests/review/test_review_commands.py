"""`dialectbias review add-annotator | serve | calibration` end to end: a qa_bias run against the local test
server, two annotators of one dialect scoring through the app's API, calibration and the report."""

from __future__ import annotations

import csv
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import web_process
from dialectbias.store import Store
from store_sql import connection

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")
pytest.importorskip("uvicorn", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")


def listening_addresses(port: int) -> set[str]:
    """Local addresses listening on `port` (Linux /proc/net/tcp{,6}), e.g. {"127.0.0.1"}."""
    found = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(name):
            continue
        for line in Path(name).read_text(encoding="ascii").splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                if len(address) == 8:
                    found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
                else:
                    found.add(address)
    return found


@pytest.fixture
def reviewed_project(qa_server: Any, qa_project: Any, cli: Any) -> Any:
    """A qa_bias run with two judges where every judgment goes to review, items shared by 2 annotators."""
    project = qa_project(qa_server.base_url, n_items=6)
    judges = project.config["judges"]
    project.rewrite(judges=[*judges, {**judges[0], "id": "judge-2", "model": "judge-model-2", "role": "secondary"}],
                    review={"confidence_threshold": 5, "overlap": 2, "calibration_min_pairs": 3})
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    return project


def add(cli: Any, project: Any, name: str, *args: str) -> tuple[str, str]:
    result = cli("review", "add-annotator", project.yaml_path, name, *args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    return lines[-1], "\n".join(lines[:-1])


def test_add_annotator_prints_the_token_alone_on_its_last_line(reviewed_project: Any, cli: Any) -> None:
    token, before = add(cli, reviewed_project, "rahim", "--dialects", "chittagong", "--queues", "judgments")
    assert " " not in token and len(token) >= 43 and token not in before
    assert "12 task(s) assigned" in before  # 2 models × 6 items in chittagong (the primary judge's judgments)
    assert "12 item(s) have no annotator of their dialect yet" in before  # sylhet
    with Store.open(reviewed_project.store_path, create=False) as store:
        assert token not in "\n".join(connection(store).iterdump())
    again = cli("review", "add-annotator", reviewed_project.yaml_path, "rahim", "--dialects", "chittagong")
    assert again.exit_code == 1 and "exists already" in again.output
    typo = cli("review", "add-annotator", reviewed_project.yaml_path, "x", "--dialects", "chitagong")
    assert typo.exit_code == 1 and "did you mean 'chittagong'" in typo.output
    queue = cli("review", "add-annotator", reviewed_project.yaml_path, "y", "--dialects", "sylhet", "--queues", "nope")
    assert queue.exit_code == 1 and "unknown queue 'nope'" in queue.output


@pytest.fixture
def serve(reviewed_project: Any, qa: Any, tmp_path: Path) -> Iterator[Any]:
    """`dialectbias review serve EXP --port P` (no --host) in a subprocess; yields (url, log path)."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(*extra: str) -> tuple[str, Path, int]:
        port = web_process.free_port()
        log = tmp_path / f"serve-{port}.log"
        proc = web_process.start([*qa.dialectbias_command(), "review", "serve", str(reviewed_project.yaml_path),
                                  "--port", str(port), *extra], log, qa.subprocess_env(), port=port)
        started.append((proc, log))
        return f"http://127.0.0.1:{port}", log, port

    yield start
    for proc, _ in started:
        web_process.stop(proc)


def test_two_annotators_score_through_the_app_and_the_judges_are_calibrated(
        reviewed_project: Any, cli: Any, serve: Any, rv: Any, tmp_path: Path) -> None:
    tokens = {name: add(cli, reviewed_project, name, "--dialects", "chittagong", "--queues", "judgments")[0]
              for name in ("rahim", "karim")}
    url, log, port = serve()
    assert listening_addresses(port) in ({"127.0.0.1"}, set())  # bound to loopback only by default
    rv.login(url, tokens["rahim"])  # a browser login too: its token must not reach the log either
    scores = {"rahim": 4, "karim": 3}
    for name, token in tokens.items():
        tasks = rv.http("GET", f"{url}/api/tasks", token=token).json()
        assert len(tasks) == 12 and {t["dialect"] for t in tasks} == {"chittagong"}
        for i, task in enumerate(tasks):
            detail = rv.http("GET", f"{url}/api/tasks/{task['id']}", token=token).json()
            body = {f["name"]: (scores[name] + i) % 6 for f in detail["fields"] if f["kind"] == "scale"}
            reply = rv.http("POST", f"{url}/api/tasks/{task['id']}/annotation", token=token, body=body)
            assert reply.status == 200, reply.text
        assert rv.http("GET", f"{url}/api/tasks", token=token).json() == []
    with Store.open(reviewed_project.store_path, create=False) as store:
        rows = store.query("SELECT annotator, count(*) FROM annotations WHERE kind='judgment_override' "
                           "GROUP BY annotator")
    assert dict((r[0], r[1]) for r in rows) == {"rahim": 12, "karim": 12}

    calibration = cli("review", "calibration", reviewed_project.yaml_path, "--csv", tmp_path / "cal.csv")
    assert calibration.exit_code == 0, calibration.output
    progress = [[c.strip() for c in line.split("│")[1:-1]] for line in calibration.stdout.splitlines()]
    assert sorted(c for c in progress if c and c[0] in ("karim", "rahim")) == [
        ["karim", "chittagong", "judgments", "12", "12"], ["rahim", "chittagong", "judgments", "12", "12"]]
    with (tmp_path / "cal.csv").open(encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    judged = {(r["judge_or_queue"], r["dialect"]) for r in table if r["table"] == "judge_calibration"}
    assert judged == {("judge-1", "chittagong"), ("judge-1", "all"), ("judge-2", "chittagong"), ("judge-2", "all")}
    pair = [r for r in table if r["table"] == "annotator_agreement" and r["pair"] == "karim ~ rahim"
            and r["rubric_or_value"] == "dialect_comprehension" and r["dialect"] == "chittagong"]
    assert pair and pair[0]["n"] == "12" and pair[0]["kappa"] != ""
    with Store.open(reviewed_project.store_path, create=False) as store:
        assert store.query("SELECT count(DISTINCT taken_at), count(*) FROM calibration_snapshots")[0][:] == (1, 4)

    report = cli("report", reviewed_project.yaml_path, "--out", tmp_path / "report")
    assert report.exit_code == 0, report.output
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "Judges against human scores, per dialect" in html and "Agreement between annotators" in html
    assert (tmp_path / "report" / "qa_bias_judge_calibration.csv").exists()

    export = cli("review", "export", reviewed_project.yaml_path, "--out", tmp_path / "queue.csv")
    assert export.exit_code == 0 and "12 judgment(s) to review" in export.output  # the app's scores count:
    with (tmp_path / "queue.csv").open(encoding="utf-8") as fh:
        assert {r["dialect"] for r in csv.DictReader(fh)} == {"sylhet"}  # only sylhet is left
    text = log.read_text(encoding="utf-8")
    assert "GET /api/tasks" in text  # the access log is on …
    assert all(token not in text for token in tokens.values())  # … and never holds a token


def test_serve_listens_where_told_and_warns(reviewed_project: Any, serve: Any, cli: Any) -> None:
    add(cli, reviewed_project, "rahim", "--dialects", "chittagong")
    _, log, port = serve("--host", "0.0.0.0")
    assert "warning: listening on 0.0.0.0" in log.read_text(encoding="utf-8")
    addresses = listening_addresses(port)
    assert addresses in ({"0.0.0.0"}, set())


def _routed_project(qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path, humans_agree_with_judge_2: bool
                    ) -> tuple[Any, dict[str, float], Any]:
    """A qa_bias run with judges judge-1 (primary) and judge-2, `on_miscalibrated: judge-2`; the chittagong
    judgments of items q01–q03 human-scored through `review export` / `review import`: the scores of judge-2
    (judge-1 miscalibrated there, judge-2 not) or their mirror image 5 − x (both miscalibrated); then
    `review calibration`. Returns the project, judgment id -> human score, and the calibration result."""
    import json

    project = qa_project(qa_server.base_url, n_items=6)
    judges = project.config["judges"]
    project.rewrite(judges=[*judges, {**judges[0], "id": "judge-2", "model": "judge-model-2", "role": "secondary"}],
                    review={"confidence_threshold": 5, "calibration_min_pairs": 3, "min_ccc": 0.99,
                            "on_miscalibrated": "judge-2"})
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert cli("review", "export", project.yaml_path, "--out", tmp_path / "queue.csv").exit_code == 0
    with Store.open(project.store_path, create=False) as store:
        judge2 = {(r[0], r[1], r[2]): json.loads(r[3]) for r in store.query(
            "SELECT model_id, item_id, variant, parsed FROM judgments WHERE judge_id = 'judge-2'")}
    with (tmp_path / "queue.csv").open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    fields = [c.removeprefix("human_") for c in rows[0] if c.startswith("human_") and c != "human_script_valid"]
    humans: dict[str, float] = {}
    for r in rows:
        if r["dialect"] == "chittagong" and r["item_id"] in ("q01", "q02", "q03"):
            theirs = judge2[(r["model"], r["item_id"], "chittagong")]
            r.update({f"human_{f}": str(theirs[f] if humans_agree_with_judge_2 else 5 - theirs[f]) for f in fields})
            humans[r["judgment_id"]] = 0.0
    with (tmp_path / "queue.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = cli("review", "import", project.yaml_path, tmp_path / "queue.csv", "--annotator", "lead")
    assert "6 imported" in result.output, result.output
    with Store.open(project.store_path, create=False) as store:
        for rid, score in store.query("SELECT target_id, json_extract(value, '$.score') FROM annotations"):
            humans[rid] = score
    calibration = cli("review", "calibration", project.yaml_path)
    assert calibration.exit_code == 0, calibration.output
    return project, humans, calibration


def _table4(project: Any, cli: Any, out: Path) -> dict[str, dict[str, str]]:
    assert cli("report", project.yaml_path, "--out", out).exit_code == 0
    with (out / "qa_bias_model_by_dialect.csv").open(encoding="utf-8") as fh:
        return {r["model"]: r for r in csv.DictReader(fh)}


def _expected(project: Any, humans: dict[str, float], chittagong_judge: str) -> dict[tuple[str, str], float]:
    """(model, dialect) -> the mean final score: a human score, else chittagong's routed judge's, else judge-1's."""
    with Store.open(project.store_path, create=False) as store:
        rows = store.query("SELECT request_id, judge_id, model_id, item_id, variant, score FROM judgments")
    other = {(r[2], r[3], r[4]): r[5] for r in rows if r[1] == chittagong_judge}
    final: dict[tuple[str, str], list[float]] = {}
    for rid, judge, model, item, variant, score in rows:
        if judge == "judge-1":
            fallback = other[(model, item, variant)] if variant == "chittagong" else score
            final.setdefault((model, variant), []).append(humans.get(rid, fallback))
    return {k: sum(v) / len(v) for k, v in final.items()}


def test_a_miscalibrated_dialect_is_scored_by_the_judge_it_is_routed_to(qa_server: Any, qa_project: Any, cli: Any,
                                                                        tmp_path: Path) -> None:
    project, humans, calibration = _routed_project(qa_server, qa_project, cli, tmp_path, True)
    assert "warning: judge judge-1 is below the thresholds for chittagong" in calibration.stderr
    assert "judge judge-2's scores replace judge-1's for chittagong" in calibration.stderr
    assert "judge judge-2 is below" not in calibration.stderr
    table = _table4(project, cli, tmp_path / "report")
    unrouted = _expected(project, humans, "judge-1")
    assert float(table["model-a"]["chittagong"]) != pytest.approx(unrouted[("model-a", "chittagong")], abs=1e-3)
    for (model, dialect), value in _expected(project, humans, "judge-2").items():
        assert float(table[model][dialect]) == pytest.approx(value, abs=1e-3), (model, dialect)
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "WARNING: judge judge-1 is below the thresholds for chittagong" in html


def test_a_miscalibrated_fallback_judge_does_not_replace_the_primary(qa_server: Any, qa_project: Any, cli: Any,
                                                                     tmp_path: Path) -> None:
    """judge-2 is below the thresholds in chittagong too: judge-1's scores stay (a human's still win), its
    chittagong judgments go to review, and every alert names the judge whose scores are used."""
    project, humans, calibration = _routed_project(qa_server, qa_project, cli, tmp_path, False)
    alerts = ["warning: " + a.strip() for a in " ".join(calibration.stderr.split()).split("warning: ")[1:]]
    assert len(alerts) == 2, calibration.stderr
    assert alerts[0].startswith("warning: judge judge-1 is below the thresholds for chittagong")
    assert alerts[0].endswith("review.on_miscalibrated names judge judge-2, but judge judge-2 is itself below the "
                              "thresholds for chittagong: " + alerts[1].split("(")[1].split(";")[0]
                              + ": its scores are not used, judge-1's chittagong judgments go to review instead")
    assert alerts[1].startswith("warning: judge judge-2 is below the thresholds for chittagong")
    assert alerts[1].endswith("as review.on_miscalibrated's fallback judge it does not replace judge-1's scores for "
                              "chittagong")
    assert "scores replace" not in calibration.stderr and "scores are used" not in calibration.stderr
    table = _table4(project, cli, tmp_path / "report")
    for (model, dialect), value in _expected(project, humans, "judge-1").items():
        assert float(table[model][dialect]) == pytest.approx(value, abs=1e-3), (model, dialect)
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "sent to review, not to the fallback judge" in html
    assert "judge-2&#x27;s scores replace" not in html and "judge-2's scores replace" not in html


def test_serve_flags_reach_the_app(reviewed_project: Any, cli: Any, serve: Any, rv: Any) -> None:
    """`review serve --secure-cookies --allowed-host NAME --trusted-proxy IP`: the cookies are Secure, the
    named host is answered and another gets 400; malformed values are refused with a clear message."""
    import http.client

    token = add(cli, reviewed_project, "rahim", "--dialects", "chittagong", "--queues", "judgments")[0]
    url, _, port = serve("--secure-cookies", "--allowed-host", "review.example.org", "--trusted-proxy", "127.0.0.1")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/login", headers={"Host": "review.example.org"})
    reply = conn.getresponse()
    reply.read()
    assert reply.status == 200 and "Secure" in (reply.getheader("set-cookie") or "")
    conn.request("GET", "/login", headers={"Host": "attacker.example"})
    reply = conn.getresponse()
    reply.read()
    assert reply.status == 400
    conn.close()
    assert rv.http("GET", f"{url}/api/tasks", token=token).status == 200
    bad = cli("review", "serve", reviewed_project.yaml_path, "--allowed-host", "a.example:8080")
    assert bad.exit_code == 1 and "without a port" in bad.output
    bad = cli("review", "serve", reviewed_project.yaml_path, "--trusted-proxy", "proxy.local")
    assert bad.exit_code == 1 and "IP address" in bad.output
