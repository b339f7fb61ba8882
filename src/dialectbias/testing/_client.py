"""The test-facing handle: `TestServer` runs ``python -m dialectbias.testing.server`` as a subprocess (so it
never competes for the GIL with the client under test), reads the port it announces, waits until it is
healthy, drives its control routes, and stops it on exit."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from dialectbias.testing._faults import FaultSpec
from dialectbias.testing._serve import HOST


class TestServerError(RuntimeError):
    """The test server failed to start or answer a control request."""


class TestServer:
    """Run the test server in a separate process for the duration of a ``with`` block.

    >>> with TestServer(faults={"rules": [{"kind": "429", "per_prompt_first_n": 1}]}) as srv:
    ...     client = OpenAI(base_url=srv.base_url, api_key="x")
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        faults: FaultSpec | dict[str, Any] | list[Any] | str | Path | None = None,
        *,
        api_key: str | None = None,
        responder: str = "echo",
        port: int = 0,
        record_requests: int = 20_000,
        startup_timeout: float = 30.0,
        imitate: str | None = None,
        context: int | None = None,
        slots: int | None = None,
        tokenize: bool = True,
    ) -> None:
        self.faults = FaultSpec.load(faults)
        self.api_key = api_key
        self.responder = responder
        self.requested_port = port
        self.record_requests = record_requests
        self.startup_timeout = startup_timeout
        self.imitate, self.context, self.slots = imitate, context, slots  # a real server's metadata (_imitation)
        self.tokenize = tokenize  # False: the imitated server has no tokenize route (`--no-tokenize`)
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Root URL, e.g. ``http://127.0.0.1:PORT``."""
        if self.port is None:
            raise TestServerError("TestServer is not running")
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return self.url + "/v1"

    def start(self) -> TestServer:
        if self._proc is not None:
            return self
        cmd = [sys.executable, "-m", "dialectbias.testing.server", "--port", str(self.requested_port),
               "--responder", self.responder, "--record-requests", str(self.record_requests)]
        for flag, value in (("--imitate", self.imitate), ("--context", self.context), ("--slots", self.slots)):
            if value is not None:
                cmd += [flag, str(value)]
        if not self.tokenize:
            cmd.append("--no-tokenize")
        if self.faults.rules:
            cmd += ["--faults", self.faults.model_dump_json(exclude_none=True)]
        env = dict(os.environ)
        env.pop("DIALECTBIAS_TESTSERVER_API_KEY", None)
        if self.api_key:
            env["DIALECTBIAS_TESTSERVER_API_KEY"] = self.api_key  # not on the command line
        pkg_root = str(Path(__file__).resolve().parents[2])  # the dir holding `dialectbias/`
        env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._stderr,
                                      stdin=subprocess.DEVNULL, env=env)
        try:
            self.port = self._read_port(time.monotonic() + self.startup_timeout)
            self._wait_healthy(time.monotonic() + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-4000:]

    def _read_port(self, deadline: float) -> int:
        assert self._proc is not None and self._proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self._proc.stdout, selectors.EVENT_READ)
        buf = b""
        try:
            while b"\n" not in buf:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TestServerError("test server did not report its port in time\n"
                                          + self._stderr_tail())
                if not sel.select(timeout=remaining):
                    continue
                chunk = os.read(self._proc.stdout.fileno(), 4096)
                if not chunk:
                    raise TestServerError(f"test server exited early (code {self._proc.poll()})\n"
                                          + self._stderr_tail())
                buf += chunk
        finally:
            sel.close()
        return int(json.loads(buf.split(b"\n", 1)[0])["port"])

    def _wait_healthy(self, deadline: float) -> None:
        delay = 0.005
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if self._proc is not None and self._proc.poll() is not None:
                raise TestServerError(f"test server exited (code {self._proc.returncode})\n"
                                      + self._stderr_tail())
            if time.monotonic() > deadline:
                raise TestServerError("test server did not become healthy in time\n" + self._stderr_tail())
            time.sleep(delay)  # poll back-off between /health attempts
            delay = min(delay * 2, 0.1)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        self.port = None

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -- control -----------------------------------------------------------------------------
    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            raise TestServerError(f"{method} {path} -> {exc.code}: {detail}") from exc

    def stats(self) -> dict[str, Any]:
        """Counters: requests_total, by_path, status_counts, faults (per kind), faults_total,
        chat_requests, chat_by_model, generation_by_model, distinct_prompts, responses_ok,
        unauthorized, in_flight, max_in_flight, uptime_s."""
        return self._call("GET", "/stats")

    def reset_stats(self) -> None:
        """Zero the counters and the recorded requests (fault-rule counters are kept)."""
        self._call("POST", "/stats/reset", {})

    def requests(self) -> list[dict[str, Any]]:
        """Recorded generation requests: ``[{"path", "body", "authorization"}, ...]`` (oldest first)."""
        return self._call("GET", "/requests")

    def set_faults(self, faults: FaultSpec | dict[str, Any] | list[Any] | str | Path | None) -> None:
        """Replace the fault rules (their counters start from zero)."""
        spec = FaultSpec.load(faults)
        self.faults = spec
        self._call("POST", "/faults", spec.model_dump(exclude_none=True))


__all__ = ["TestServer", "TestServerError"]
