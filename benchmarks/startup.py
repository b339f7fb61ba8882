"""Command start-up: what `dialectbias --help`, a fully cached `run`, `status` and `plan` cost (issue 20.9).

Builds a 2,000-request qa_bias study against one local `dialectbias.testing.TestServer` (its `qa_responder`:
Bengali answers, valid RLAIF judgments; a separate process on 127.0.0.1): 400 items × 3 variants (standard,
chittagong, sylhet) answered by one model = 1,200 generation requests, and the 800 dialect answers judged
against their standard answer by one primary judge = 800 judge requests. It runs the study once, untimed, then
times each command in a fresh subprocess (the `dialectbias` console script, as a user runs it), side by side
in rounds so that a change in the machine's load hits every command alike:

  --help        the command list
  run           `dialectbias run EXP.yaml`: everything stored, 0 calls (the server's counter is checked)
  status        `dialectbias status EXP.yaml`
  plan          `dialectbias plan EXP.yaml`

Per command: wall seconds (median and best of the rounds), CPU seconds (user + system of the child; median and
best), the modules it imported (`sys.modules` at exit) and which of the heavy stacks among them (pandas, matplotlib,
scipy, fastapi, faiss, torch, …), and the seconds its imports took (`python -X importtime`, one extra run).
Goals (issue 20.9): a cached re-run under 0.5 s and `--help` under 0.3 s, wall, on the 2-core machine; the
load average is recorded with the results because the other jobs on it slow every wall time down.

Bytecode is written (PYTHONDONTWRITEBYTECODE is removed from the children's environment) and each command runs
once before the rounds, so the figures are those of an installed package, not of compiling its sources.

With `--reference OTHER/src` the same commands of another checkout (e.g. the parent commit's) run in the same
rounds, on the same store, and the table adds their rows and the ratios.

Usage: python benchmarks/startup.py [--rounds 7] [--items 400] [--reference DIR] [--out FILE]
Writes benchmarks/results/startup.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
DIALECTS = ("chittagong", "sylhet")
#: the stacks a command should load only when it needs them (top-level package names)
HEAVY = ("pandas", "matplotlib", "numpy", "scipy", "sklearn", "fastapi", "starlette", "uvicorn", "faiss", "rank_bm25",
         "sentence_transformers", "torch", "transformers", "vllm", "sacrebleu", "jiwer", "bert_score", "httpx",
         "openai", "aiohttp", "pyarrow", "ray", "pydantic", "yaml", "jinja2")
GOALS = {"--help": 0.3, "run": 0.5}

#: run inside the child for the module count: the command as the console script runs it, and at exit the
#: loaded modules written as JSON to the file named by DIALECTBIAS_BENCH_MODULES
_MODULES_PROBE = """
import atexit, json, os, sys
def _dump():
    with open(os.environ["DIALECTBIAS_BENCH_MODULES"], "w", encoding="utf-8") as fh:
        json.dump(sorted(sys.modules), fh)
atexit.register(_dump)
sys.argv = ["dialectbias", *sys.argv[1:]]
from dialectbias.cli import main
main()
"""


def make_study(root: Path, base_url: str, n_items: int) -> Path:
    """items.jsonl and startup.yaml: qa_bias, one model, one primary judge, all on the test server."""
    with (root / "items.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n_items):
            place = f"জেলা{i:04d}"
            fh.write(json.dumps({"id": f"q{i:04d}", "domain": "geography", "question_type": "factual",
                                 "variants": {"standard": f"{place} জেলার প্রধান নদীর নাম কী?",
                                              "chittagong": f"{place} জিলার বড় গাঙর নাম কী?",
                                              "sylhet": f"{place} জিলার বড় গাঙ্গর নাম কিতা?"},
                                 "gold": "নদী"}, ensure_ascii=False) + "\n")
    common = f"provider: openai, base_url: '{base_url}', max_concurrency: 32, timeout_s: 30"
    path = root / "startup.yaml"
    path.write_text("name: startup\ntask: qa_bias\ndata: items.jsonl\n"
                    f"models:\n  - {{id: model-a, model: model-a, {common}}}\n"
                    f"judges:\n  - {{id: judge-1, model: judge-model, role: primary, {common}}}\n", encoding="utf-8")
    return path


def command_prefix() -> list[str]:
    """The `dialectbias` console script next to this interpreter, else the same entry point through -c."""
    script = shutil.which("dialectbias", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-c", "from dialectbias.cli import main; main()"]


def child_env(src: Path) -> dict[str, str]:
    """The environment of a command: `src` first on the path, bytecode written, no DIALECTBIAS_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALECTBIAS_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(src) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update({"COLUMNS": "100", "NO_COLOR": "1"})
    return env


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall s, CPU s of the child, the finished process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def loaded_modules(args: list[str], env: dict[str, str], cwd: Path, tmp: Path) -> list[str]:
    out = tmp / "modules.json"
    proc = subprocess.run([sys.executable, "-c", _MODULES_PROBE, *args], capture_output=True, text=True,
                          env={**env, "DIALECTBIAS_BENCH_MODULES": str(out)}, cwd=cwd, check=False)
    if not out.is_file():
        raise RuntimeError(f"dialectbias {' '.join(args)}: no module list (exit {proc.returncode}): {proc.stderr}")
    return json.loads(out.read_text(encoding="utf-8"))


def import_seconds(args: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds spent importing (the top-level entries of `-X importtime`, which include their children)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import sys; sys.argv = ['dialectbias', "
                           "*sys.argv[1:]]; from dialectbias.cli import main; main()", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, check=False)
    total = 0
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if not name.startswith("  "):  # one space after the bar: a top-level import
            total += int(cumulative)
    return total / 1e6


def measure(commands: dict[str, list[str]], sources: dict[str, Path], prefix: list[str], rounds: int,
            cwd: Path) -> dict[str, dict[str, Any]]:
    """Per source tree and command: the timings of `rounds` interleaved rounds, the modules and import seconds."""
    envs = {label: child_env(src) for label, src in sources.items()}
    for env in envs.values():  # warm-up: bytecode written, files in the page cache
        for cmd in commands.values():
            timed([*prefix, *cmd], env, cwd)
    walls: dict[tuple[str, str], list[float]] = {(label, name): [] for label in sources for name in commands}
    cpus: dict[tuple[str, str], list[float]] = {key: [] for key in walls}
    for _ in range(rounds):
        for label, env in envs.items():
            for name, cmd in commands.items():
                wall, cpu, proc = timed([*prefix, *cmd], env, cwd)
                if proc.returncode != 0:
                    raise RuntimeError(f"{label}: dialectbias {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
                if name == "run" and "calls 0" not in proc.stdout:
                    raise RuntimeError(f"{label}: the cached run made calls:\n{proc.stdout}")
                walls[label, name].append(wall)
                cpus[label, name].append(cpu)
    results: dict[str, dict[str, Any]] = {label: {} for label in sources}
    for label, env in envs.items():
        for name, cmd in commands.items():
            modules = loaded_modules(cmd, env, cwd, cwd)
            tops = {m.partition(".")[0] for m in modules}
            w, c = walls[label, name], cpus[label, name]
            results[label][name] = {
                "wall_s_median": round(statistics.median(w), 3), "wall_s_best": round(min(w), 3),
                "cpu_s_median": round(statistics.median(c), 3), "cpu_s_best": round(min(c), 3),
                "wall_s": [round(x, 3) for x in w], "cpu_s": [round(x, 3) for x in c],
                "import_s": round(import_seconds(cmd, env, cwd), 3), "modules": len(modules),
                "dialectbias_modules": sum(1 for m in modules if m.startswith("dialectbias")),
                "heavy_loaded": [h for h in HEAVY if h in tops]}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--items", type=int, default=400, help="items × 3 variants; 400 → 2,000 requests")
    parser.add_argument("--reference", type=Path, help="another checkout's src/ (e.g. the parent commit's), timed "
                        "in the same rounds on the same store")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "startup.json")
    args = parser.parse_args()

    sys.path.insert(0, str(SRC))
    from dialectbias.testing import TestServer

    sources = {"this": SRC, **({"reference": args.reference.resolve()} if args.reference else {})}
    prefix = command_prefix()
    load_start = os.getloadavg()
    print(f"startup benchmark: python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{load_start[0]:.2f}, {args.rounds} rounds", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmpdir, \
            TestServer(responder="dialectbias.testing:qa_responder", record_requests=0) as srv:
        tmp = Path(tmpdir)
        exp = make_study(tmp, srv.base_url, args.items)
        commands = {"--help": ["--help"], "run": ["run", str(exp)], "status": ["status", str(exp)],
                    "plan": ["plan", str(exp)]}
        first_wall, first_cpu, first = timed([*prefix, "run", str(exp), "--no-progress"], child_env(SRC), tmp)
        if first.returncode != 0:
            raise RuntimeError(f"the first run failed (exit {first.returncode}):\n{first.stdout}\n{first.stderr}")
        sent = srv.stats()["chat_requests"]
        print(f"study: {sent:,} requests sent by the first run ({first_wall:.1f} s)", flush=True)
        results = measure(commands, sources, prefix, args.rounds, tmp)
        if srv.stats()["chat_requests"] != sent:
            raise RuntimeError("a cached run sent requests to the server")
    load_end = os.getloadavg()

    print()
    print(f"{'source':<10} {'command':<8} {'wall med':>9} {'wall best':>10} {'cpu med':>8} {'cpu best':>9} "
          f"{'imports':>8} {'modules':>8} {'goal':>5}  heavy stacks loaded")
    for label, by_command in results.items():
        for name, r in by_command.items():
            goal = f"{GOALS[name]:.1f}" if name in GOALS else "-"
            print(f"{label:<10} {name:<8} {r['wall_s_median']:>9.3f} {r['wall_s_best']:>10.3f} "
                  f"{r['cpu_s_median']:>8.3f} {r['cpu_s_best']:>9.3f} {r['import_s']:>8.3f} {r['modules']:>8} "
                  f"{goal:>5}  {', '.join(r['heavy_loaded']) or '-'}")
    if "reference" in results:
        for name in commands:
            this, ref = results["this"][name], results["reference"][name]
            print(f"{name}: this / reference = {this['wall_s_median'] / ref['wall_s_median']:.2f} wall, "
                  f"{this['cpu_s_median'] / ref['cpu_s_median']:.2f} CPU (medians)")
    print(f"seconds; load average {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; first run "
          f"{first_wall:.1f} s wall, {sent:,} requests")
    payload = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_at_start": load_start, "load_average_at_end": load_end},
        "settings": {"rounds": args.rounds, "items": args.items, "requests": sent, "command": prefix,
                     "sources": {label: str(src) for label, src in sources.items()}},
        "first_run": {"wall_s": round(first_wall, 2), "cpu_s": round(first_cpu, 2)},
        "goals_wall_s": GOALS,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
