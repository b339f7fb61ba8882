"""`dialectbias view` through the command line, served by a real uvicorn on 127.0.0.1 (issue 22 item 1): two
experiments, the evidence API, the compare page; beyond loopback the printed token link; clear errors for a
missing file, a store not run yet, a busy port and a missing extra."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import web_process

pytest.importorskip("uvicorn", reason="the explorer needs the `review` extra (fastapi, uvicorn)")


@contextmanager
def serving(qa: Any, *args: Any, host: str = "127.0.0.1") -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    port = web_process.free_port(host)
    log = Path(str(args[0])).parent / f"view-{port}.log"
    command = [*qa.dialectbias_command(), "view", *map(str, args), "--port", str(port), "--host", host]
    with web_process.serving(command, log, qa.subprocess_env(), host=host, port=port) as proc:
        yield f"http://{host}:{port}", proc, log


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
            return r.status, r.read().decode("utf-8"), {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8"), {k.lower(): v for k, v in exc.headers.items()}


def test_view_serves_two_experiments(qa: Any, view_study: Any) -> None:
    with serving(qa, view_study.a.yaml_path, view_study.b.yaml_path) as (url, _, log):
        status, home, _ = _get(url + "/")
        assert status == 200 and "viewa" in home and "viewb" in home
        status, body, headers = _get(url + "/api/evidence?experiment=viewb&item_id=q02&variant=chittagong"
                                     "&model=model-b")
        data = json.loads(body)
        assert status == 200 and "কন চাই" in data["prompt"] and data["judgments"][0]["judge_id"] == "judge-1"
        assert headers["x-frame-options"] == "DENY"
        status, page, _ = _get(url + "/compare?a=viewa&b=viewb")
        assert status == 200 and "q02" in page
        assert f"explorer (read-only): {url}/" in log.read_text(encoding="utf-8")


def test_view_beyond_loopback_needs_the_printed_token(qa: Any, view_study: Any) -> None:
    with serving(qa, view_study.a.yaml_path, host="127.0.0.2") as (url, _, log):
        assert _get(url + "/exp/viewa")[0] == 401
        text = log.read_text(encoding="utf-8")
        link = next(w for w in text.split() if w.startswith(f"{url}/?token="))
        assert "warning: listening on 127.0.0.2" in text
        status, _, headers = _get(link)
        assert status == 303 and "dialectbias_view=" in headers["set-cookie"]
        token = link.split("token=")[1]
        assert _get(url + "/exp/viewa", {"Authorization": f"Bearer {token}"})[0] == 200


def test_view_errors_are_one_line(qa: Any, cli: Any, view_study: Any, session_server: Any, tmp_path: Path) -> None:
    missing = cli("view", tmp_path / "nope.yaml")
    assert missing.exit_code != 0 and "nope.yaml: no such experiment file" in missing.stderr
    assert "Traceback" not in missing.output
    fresh = qa.make_project(tmp_path / "fresh", session_server.base_url, name="fresh")
    not_run = cli("view", fresh.yaml_path)
    assert not_run.exit_code != 0 and "run `dialectbias run fresh.yaml` first" in not_run.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        taken = cli("view", view_study.a.yaml_path, "--port", port)
    assert taken.exit_code != 0 and f"port {port} on 127.0.0.1 is in use" in taken.stderr
    assert "Traceback" not in taken.output + not_run.output
    code = ("import sys; sys.modules['uvicorn'] = None; from dialectbias.cli import main; "
            f"sys.argv = ['dialectbias', 'view', {str(view_study.a.yaml_path)!r}]; main()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=qa.subprocess_env(),
                          timeout=60)
    assert proc.returncode != 0 and "needs the `review` extra" in proc.stderr and "Traceback" not in proc.stderr


def test_the_stale_alert_goes_once_report_re_scored(qa: Any, copy_of_a: Any, tmp_path: Path) -> None:
    """The alert says: run `dialectbias report`, then reload. `report` (another process) re-scores the
    judgments and overrides in place, adding and removing no row; the running explorer shows the tables then,
    the report's CSVs cell for cell."""
    import csv
    project = copy_of_a
    project.rewrite(review={"confidence_threshold": 2})
    with serving(qa, project.yaml_path) as (url, _, _log):
        status, body, _ = _get(url + "/api/tables")
        assert status == 200 and "dialectbias report viewa.yaml" in json.loads(body)["alert"]
        done = subprocess.run([*qa.dialectbias_command(), "report", str(project.yaml_path), "--out",
                               str(tmp_path / "report")], env=qa.subprocess_env(), capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        status, body, _ = _get(url + "/api/tables")
    data = json.loads(body)
    assert status == 200 and data["alert"] is None and data["tables"]
    shown = {t["name"]: t["rows"] for t in data["tables"]}
    for path in sorted((tmp_path / "report").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            assert shown[path.stem] == list(csv.reader(fh))[1:], path.name
