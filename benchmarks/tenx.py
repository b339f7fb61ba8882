"""Ten times the paper (issue 23 item 4): how the toolkit's own cost grows from the Bengali paper's scale to 10×.

The paper: 19 models × 400 items × 10 variants (standard + 9 dialects) = 76,000 generation requests, judged
by 3 judges × 19 models × 400 items × 9 dialects = 205,200 judge requests. 10× has 4,000 items: 760,000 and
2,052,000. Each scale builds one `qa_bias` experiment (openai models and judges pointing at the project's
test server) in a fresh folder and runs these steps, each in a fresh subprocess (its wall and CPU seconds,
its peak RSS from `resource.getrusage`):

  compile-generate   what `dialectbias run` does before its first call: store the items, build and store
                     every generation request (the runner's own `_compile`)
  fill-generate      SYNTHETIC answers (Bengali sentences of the Vashantor corpus when `../shared/data` has
                     it, 60–160 words each) for every generation request but a sample, through the real
                     post-call machine and writer (`PostCall.handle`, `Store.write`): no model call
  dispatch           REAL calls: `executor: local` sends the sample left pending (5% of the generation
                     requests at every scale, so its pending walk and its calls grow alike) to the test
                     server (echo responder, a separate process)
                     inside the full-size store
  compile-judge      build and store every judge request from the stored answers (`_compile`)
  fill-judge         SYNTHETIC judge answers (RLAIF JSON: reasoning, five Likert fields, confidence)
                     through the real post-call machine: parse, validate, code checks, judgment row
  resume             `run_experiment` again with everything done (the test server counts 0 calls)
  report             `build_report` (all qa_bias tables, bootstrap CIs, plots)
  export             `dialectbias export --format jsonl` (every table, every row)

Then the store's size (file, per table from SQLite's dbstat) and what compressing long text parts saved
(`content`: the parts' own bytes vs their stored bytes). It prints a table of each figure at each scale and
the growth from each scale to the next and from the first to the last (10 is linear from 1× to 10×, below is
better; memory's goal is flat, ≈ 1) and writes benchmarks/results/tenx.json.

Usage:
  nice python benchmarks/tenx.py                        # 1× and 10× (~40 min on 2 busy cores)
  nice python benchmarks/tenx.py --scales 1 3 10        # other scales (~45 min for these three)
  python benchmarks/tenx.py --table benchmarks/results/tenx.json   # print a run's table again
  nice python benchmarks/tenx.py --scales 0.05 --sample 500    # a smoke run
  DIALECTBIAS_STORE_CACHE_MIB=1024 nice python benchmarks/tenx.py --out benchmarks/results/tenx_cache_1024.json
                                                        # a larger page cache (docs/scale.md)
Needs the test server's extras (dialectbias.testing) and the report's (matplotlib); writes only under a
temporary folder (or --keep DIR).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: the shared data folder beside the checkout (a worktree's is one level further up)
VASHANTOR = next((p / "shared" / "data" / "vashantor" / "Vashantor_Simplified"
                  for p in (REPO.parent, REPO.parent.parent) if (p / "shared" / "data" / "vashantor").is_dir()),
                 REPO.parent / "shared" / "data" / "vashantor")
DIALECTS = ("barishal", "chittagong", "kishoreganj", "mymensingh", "narail", "noakhali", "rangpur", "sylhet",
            "tangail")
MODELS = ("gemma-3n-e2b", "gemma-3n-e4b", "gemma-3-12b", "gemma-3-27b", "llama-3.1-8b", "llama-3.2-3b",
          "llama-3.3-70b", "qwen3-4b", "qwen3-8b", "qwen3-32b", "qwen3-235b", "mistral-7b", "ministral-3-8b",
          "ministral-3-14b", "deepseek-r1-8b", "deepseek-r1-32b", "phi4-14b", "gpt-oss-20b", "gpt-oss-120b")
JUDGES = (("gemini-2.5-flash", "primary"), ("gpt-oss-20b-judge", "secondary"), ("gemma-3-27b-judge", "secondary"))
PAPER_ITEMS = 400
STEPS = ("compile-generate", "fill-generate", "dispatch", "compile-judge", "fill-judge", "resume", "report",
         "export")
FALLBACK_WORDS = ("নদী", "বাংলাদেশ", "মানুষ", "জল", "শহর", "গ্রাম", "বই", "সময়", "চাষ", "ধান", "বর্ষা", "স্বাস্থ্য",
                  "জ্বর", "ওষুধ", "বিদ্যালয়", "শিক্ষা", "প্রযুক্তি", "মোবাইল", "বাজার", "দাম", "সরকার", "আইন")
REASONING = ("স্ক্রিপ্ট: উপভাষার উত্তর বাংলা লিপিতে লেখা। বোধগম্যতা: মডেল প্রশ্নটি বুঝেছে এবং মূল বিষয়টির উত্তর "
             "দিয়েছে। তথ্যগত নির্ভুলতা: প্রমিত উত্তরের সাথে তুলনা করলে মূল তথ্যগুলো মিলে যায়, তবে একটি বিষয় অনুপস্থিত।")


def _ensure_importable() -> None:
    try:
        import dialectbias  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / "src"))


# -- the study -------------------------------------------------------------------------------------------------
def sentences() -> tuple[list[str], str]:
    """Bengali sentences to build answers from, and where they came from."""
    found: list[str] = []
    for path in sorted(VASHANTOR.glob("*/*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                found += [t.strip() for t in (row.get("standard_text"), row.get("dialect_text")) if t and t.strip()]
    if found:
        return found, f"Vashantor ({len(found):,} sentences)"
    rng = random.Random(3)
    return [" ".join(rng.choice(FALLBACK_WORDS) for _ in range(8)) + "।" for _ in range(2000)], \
        "a 22-word vocabulary (Vashantor not found: compression ratios are optimistic)"


def answer(pool: list[str], key: str) -> str:
    """A deterministic 60–160-word answer for this request."""
    rng = random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:12], 16))
    words: list[str] = []
    target = rng.randint(60, 160)
    while len(words) < target:
        words += rng.choice(pool).split()
    return " ".join(words[:target])


def write_study(root: Path, n_items: int, base_url: str, pool: list[str]) -> Path:
    rng = random.Random(11)
    with (root / "items.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n_items):
            topic = rng.choice(pool)
            variants = {"standard": f"{topic} — এ বিষয়ে বিস্তারিত বলুন। ({i})",
                        **{d: f"{topic} — ইডা লইয়া কন। ({d} {i})" for d in DIALECTS}}
            fh.write(json.dumps({"id": f"q{i:05d}", "domain": "health", "question_type": "factual",
                                 "variants": variants}, ensure_ascii=False) + "\n")
    common = f"    provider: openai\n    base_url: {base_url}\n    max_concurrency: 8\n    timeout_s: 60\n"
    lines = ["name: tenx", "task: qa_bias", "data: items.jsonl", "store: study.sqlite", "seed: 7",
             f"variants: [standard, {', '.join(DIALECTS)}]", "models:"]
    lines += [f"  - id: {m}\n    model: {m}\n{common}" for m in MODELS]
    lines.append("judges:")
    lines += [f"  - id: {j}\n    model: {j}\n    role: {role}\n{common}" for j, role in JUDGES]
    path = root / "tenx.yaml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# -- the steps (each in its own subprocess) --------------------------------------------------------------------
def _open(exp_path: Path) -> tuple[Any, Any, Any]:
    from dialectbias.api import open_experiment
    from dialectbias.store import Store

    exp, task = open_experiment(exp_path)
    return exp, task, Store.open(exp.store_path)


def step_compile(exp_path: Path, stage_name: str) -> dict[str, Any]:
    """What `run_task` does for one stage before it sends anything."""
    from dialectbias.run._runner import _compile, _save_items
    from dialectbias.run._summary import StageStats
    from dialectbias.store import claim_store

    exp, task, store = _open(exp_path)
    with store:
        stages = task.stages()
        if stage_name == "generate":
            claim_store(store, exp.name, exp.path)
            store.save_experiment(exp.name, exp.task, exp.model_dump(mode="json"))
            store.set_meta("departures", json.dumps(exp.departure_rows(), ensure_ascii=False))
            _save_items(exp, task, store)
            store.retire_current((s.name, m.id) for s in stages for m in s.models)
        names = [s.name for s in stages]
        stage = stages[names.index(stage_name)]
        stats = {m.id: StageStats(stage=stage.name, model_id=m.id) for m in stage.models}
        _compile(exp, task, stage, names[:names.index(stage_name)], store, stats)
        return {"requests": sum(s.total for s in stats.values()), "skipped": sum(s.skipped for s in stats.values())}


def step_fill(exp_path: Path, stage_name: str, leave: int) -> dict[str, Any]:
    """Synthetic answers for every pending request of the stage (but `leave` spread over the models),
    through `PostCall.handle` and the executor's writer: what a call's answer goes through."""
    from dialectbias.providers import ChatResponse
    from dialectbias.run._executor import PAGE, _Writer
    from dialectbias.run._postcall import Call, NeedsReask, PostCall
    from dialectbias.run._summary import StageStats

    pool, _ = sentences()
    _, task, store = _open(exp_path)
    with store:
        stage = next(s for s in task.stages() if s.name == stage_name)
        writer = _Writer(store)
        done = reasks = 0
        per_model = -(-leave // len(stage.models)) if leave else 0
        for model in stage.models:
            stats = StageStats(stage=stage.name, model_id=model.id)
            post = PostCall(stage, model, store, stats)
            after, skipped = 0, 0
            first: dict[int, list[Any]] = {}  # judge: a distinct answer's rows, made once by the post-call machine
            while page := store.pending_requests(stage.name, model.id, after=after, limit=PAGE):
                after = page[-1]["rid"]
                for row in page:
                    if skipped < per_model:  # left for the dispatch step (pages come in compile order: each
                        # model's first requests, its first items)
                        skipped += 1
                        continue
                    key = row["request_id"]
                    done += 1
                    if stage_name == "generate":
                        text = answer(pool, key)
                    else:
                        k = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % JUDGE_ANSWERS
                        if k in first:
                            writer.add(_copy_rows(first[k], row))
                            continue
                        text = judge_answer(k)
                    step = post.handle(row, Call(ChatResponse(output=text, finish_reason="stop", tokens_in=400,
                                                              tokens_out=len(text) // 3, latency_s=0.8)))
                    if isinstance(step, NeedsReask):
                        reasks += 1
                        continue
                    writer.add(step.writes)
                    if stage_name == "judge":
                        first[k] = step.writes
        writer.flush()
        return {"answered": done, "reasks_needed": reasks}


#: distinct synthetic judge answers: each goes through the post-call machine (parse, validate, code checks on
#: the dialect answer, score, judgment row) once per judge; the other requests drawing it get copies of its rows
#: under their own ids (the full machine costs ~1.5 ms per judge answer on 2 busy cores: 50 min at 10×)
JUDGE_ANSWERS = 500
FIELDS = ("dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length")


def judge_answer(k: int) -> str:
    rng = random.Random(k)
    base = rng.uniform(1.5, 5)
    return json.dumps({"chain_of_thought_reasoning": REASONING, "script_valid": True, "refusal": False,
                       **{f: max(0, min(5, round(base + rng.gauss(0, 0.6)))) for f in FIELDS},
                       "confidence": rng.choice((3, 4, 4, 5))}, ensure_ascii=False)


def _copy_rows(writes: list[Any], row: Any) -> list[Any]:
    """Another judge request's copy of the rows one answer gave: its own ids, item, variant and model."""
    model_id = json.loads(row["meta"])["model_id"]
    out = []
    for table, rec in writes:
        if table == "results":
            rec = {**rec, "request_id": row["request_id"]}
        elif table == "cache":
            rec = {**rec, "cache_key": row["cache_key"]}
        elif table == "judgments":
            rec = {**rec, "request_id": row["request_id"], "source_request_id": row["request_id"],
                   "item_id": row["item_id"], "variant": row["variant"], "model_id": model_id}
        else:
            raise RuntimeError(f"unexpected {table} row for a judge answer")
        out.append((table, rec))
    return out


def step_dispatch(exp_path: Path) -> dict[str, Any]:
    """Real calls: the local executor sends what `fill-generate` left pending."""
    from dialectbias.run._executor import LocalExecutor
    from dialectbias.run._summary import StageStats

    exp, task, store = _open(exp_path)
    with store:
        stage = next(s for s in task.stages() if s.name == "generate")
        pending = sum(store.count_pending(stage.name, m.id) for m in stage.models)
        stats = {m.id: StageStats(stage=stage.name, model_id=m.id) for m in stage.models}
        executor = LocalExecutor(exp)

        async def go() -> float:
            await executor.prepare(stage, store)
            started = time.perf_counter()
            await executor.run_stage(stage, store, stats, lambda *_: None)
            seconds = time.perf_counter() - started
            await executor.aclose()
            return seconds

        seconds = asyncio.run(go())
        left = sum(store.count_pending(stage.name, m.id) for m in stage.models)
    return {"sent": pending, "unanswered": left, "dispatch_s": seconds,
            "requests_per_s": pending / seconds if seconds else None}


def step_resume(exp_path: Path) -> dict[str, Any]:
    from dialectbias.api import run_experiment

    summary = run_experiment(exp_path, progress=False)
    return {"already_done": sum(s.already_done for s in summary.stages), "empty": summary.empty}


def step_report(exp_path: Path, out: Path) -> dict[str, Any]:
    from dialectbias.api import build_report

    build_report(exp_path, out)
    return {"files": len(list(out.iterdir()))}


def step_export(exp_path: Path, out: Path) -> dict[str, Any]:
    from dialectbias.cli import app

    try:
        app(["export", str(exp_path), "--format", "jsonl", "--out", str(out)], standalone_mode=False)
    except SystemExit as exc:
        if exc.code:
            raise
    return {"mb": round(sum(f.stat().st_size for f in out.iterdir()) / 1e6, 1),
            "rows": {f.stem: sum(1 for _ in f.open(encoding="utf-8")) for f in out.iterdir()}}


def run_step(step: str, exp_path: Path, leave: int) -> dict[str, Any]:
    root = exp_path.parent
    if step.startswith("compile-"):
        return step_compile(exp_path, step.removeprefix("compile-"))
    if step.startswith("fill-"):
        return step_fill(exp_path, step.removeprefix("fill-"), leave if step == "fill-generate" else 0)
    if step == "dispatch":
        return step_dispatch(exp_path)
    if step == "resume":
        return step_resume(exp_path)
    if step == "report":
        return step_report(exp_path, root / "report")
    return step_export(exp_path, root / "export")


#: set by --profile for the steps' subprocesses: the folder for their cProfile statistics
PROFILE_ENV = "TENX_PROFILE"


def child(step: str, exp_path: Path, leave: int) -> None:
    _ensure_importable()
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    profile_dir = os.environ.get(PROFILE_ENV)
    if profile_dir:  # --profile: cProfile's statistics of the step, for benchmarks/profile_growth.py
        import cProfile

        with cProfile.Profile() as profile:
            extra = run_step(step, exp_path, leave)
        profile.dump_stats(Path(profile_dir) / f"{step}-{exp_path.parent.name}.prof")
    else:
        extra = run_step(step, exp_path, leave)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    result = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mb": round(after.ru_maxrss / 1024, 1)}
    print("@@RESULT@@" + json.dumps({**result, **extra}, default=str), flush=True)


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def drop_page_cache() -> bool:
    """Empty the operating system's page cache (so a step reads the store from disk); False when that needs
    root we lack."""
    try:
        os.sync()
        DROP_CACHES.write_text("1\n")
    except OSError:
        return False
    return True


def child_result(command: list[str], what: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a `--child` step (`child`) in a fresh process; the result it printed. Exits naming `what`, with the
    output's end, when it failed."""
    proc = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
    if proc.returncode != 0 or line is None:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-6000:])
        raise SystemExit(f"{what} failed (exit {proc.returncode})")
    result: dict[str, Any] = json.loads(line.removeprefix("@@RESULT@@"))
    return result


# -- the driver ----------------------------------------------------------------------------------------------
#: the machine's speed drifts (a shared VM: the same 0.1× judge compile took 10.0 s of CPU and, 5 min later,
#: 5.3 s): a fixed workload timed before every step shows whether a figure was measured on a slower machine
SPEED_PROBE_ROUNDS = 40_000


def speed_probe() -> float:
    """CPU seconds of a fixed workload (hashing, a dict, SQLite inserts in memory), best of three."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)")
        seen: dict[str, int] = {}
        for i in range(SPEED_PROBE_ROUNDS):
            key = hashlib.sha256(str(i).encode()).hexdigest()
            seen[key] = i
        conn.executemany("INSERT INTO t VALUES (?, ?)", seen.items())
        conn.close()
        best = min(best, time.process_time() - started)
    return round(best, 4)


def store_figures(path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    tables = {r[0]: r[1] for r in conn.execute(
        "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")}
    text = conn.execute("SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(data)), 0), "
                        "coalesce(sum(typeof(data) = 'blob'), 0) FROM content WHERE kind = 'text'").fetchone()
    counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("requests", "results", "cache", "judgments", "content")}
    conn.close()
    size = path.stat().st_size
    return {"file_mb": round(size / 1e6, 1), "table_mb": {k: round(v / 1e6, 1) for k, v in tables.items()},
            "rows": counts, "text_parts": text[0], "text_parts_compressed": text[3],
            "text_parts_mb_as_given": round(text[1] / 1e6, 1), "text_parts_mb_stored": round(text[2] / 1e6, 1),
            "file_mb_without_compression": round((size + text[1] - text[2]) / 1e6, 1)}


def run_scale(scale: float, args: argparse.Namespace, base_url: str, server: Any, pool: list[str],
              root: Path) -> dict[str, Any]:
    n_items = max(1, round(PAPER_ITEMS * scale))
    folder = root / f"x{scale:g}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    exp_path = write_study(folder, n_items, base_url, pool)
    out: dict[str, Any] = {"scale": scale, "items": n_items, "steps": {}}
    print(f"\n== {scale:g}× the paper: {n_items:,} items, {len(MODELS)} models, {len(JUDGES)} judges ==", flush=True)
    for step in STEPS:
        probe = speed_probe()
        calls_before = server.stats()["chat_requests"]
        sample = round(args.sample_share * n_items * 10 * len(MODELS))
        sample = sample if args.sample is None else min(args.sample, sample)
        result = child_result([sys.executable, __file__, "--child", step, str(exp_path), "--sample", str(sample)],
                              f"{scale:g}×: step {step}")
        result["server_calls"] = server.stats()["chat_requests"] - calls_before
        result["store_mb"] = round(sum(p.stat().st_size for p in folder.glob("study.sqlite*")) / 1e6, 1)
        result["speed_probe_s"] = probe
        out["steps"][step] = result
        shown = {k: v for k, v in result.items() if k not in ("rows",)}
        print(f"  {step:<17} {json.dumps(shown, ensure_ascii=False)}", flush=True)
    if out["steps"]["resume"]["server_calls"]:
        raise SystemExit(f"{scale:g}×: the resume run sent {out['steps']['resume']['server_calls']} calls")
    out["store"] = store_figures(folder / "study.sqlite")
    print(f"  store: {json.dumps(out['store'])}", flush=True)
    if not args.keep:
        shutil.rmtree(folder)
    return out


ROWS = (("generation requests", lambda r: r["steps"]["compile-generate"]["requests"]),
        ("judge requests", lambda r: r["steps"]["compile-judge"]["requests"]),
        ("compile generate: wall s", lambda r: r["steps"]["compile-generate"]["wall_s"]),
        ("compile generate: CPU s", lambda r: r["steps"]["compile-generate"]["cpu_s"]),
        ("compile judge: wall s", lambda r: r["steps"]["compile-judge"]["wall_s"]),
        ("compile judge: CPU s", lambda r: r["steps"]["compile-judge"]["cpu_s"]),
        ("dispatch (real calls): req/s", lambda r: r["steps"]["dispatch"]["requests_per_s"]),
        ("resume (all done): wall s", lambda r: r["steps"]["resume"]["wall_s"]),
        ("resume (all done): CPU s", lambda r: r["steps"]["resume"]["cpu_s"]),
        ("report: wall s", lambda r: r["steps"]["report"]["wall_s"]),
        ("report: CPU s", lambda r: r["steps"]["report"]["cpu_s"]),
        ("export jsonl: wall s", lambda r: r["steps"]["export"]["wall_s"]),
        ("export jsonl: CPU s", lambda r: r["steps"]["export"]["cpu_s"]),
        ("fill gen. (synthetic): CPU s", lambda r: r["steps"]["fill-generate"]["cpu_s"]),
        ("fill judge (synthetic): CPU s", lambda r: r["steps"]["fill-judge"]["cpu_s"]),
        ("peak RSS compile gen: MB", lambda r: r["steps"]["compile-generate"]["peak_rss_mb"]),
        ("peak RSS compile judge: MB", lambda r: r["steps"]["compile-judge"]["peak_rss_mb"]),
        ("peak RSS dispatch: MB", lambda r: r["steps"]["dispatch"]["peak_rss_mb"]),
        ("peak RSS fill judge: MB", lambda r: r["steps"]["fill-judge"]["peak_rss_mb"]),
        ("peak RSS resume: MB", lambda r: r["steps"]["resume"]["peak_rss_mb"]),
        ("peak RSS report: MB", lambda r: r["steps"]["report"]["peak_rss_mb"]),
        ("peak RSS export: MB", lambda r: r["steps"]["export"]["peak_rss_mb"]),
        ("store file: MB", lambda r: r["store"]["file_mb"]),
        ("store, parts uncompressed: MB", lambda r: r["store"]["file_mb_without_compression"]),
        ("text parts as given: MB", lambda r: r["store"]["text_parts_mb_as_given"]),
        ("text parts stored: MB", lambda r: r["store"]["text_parts_mb_stored"]),
        ("speed probe, slowest: CPU ms",
         lambda r: 1000 * max(st["speed_probe_s"] for st in r["steps"].values())))


def table(results: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The figures of each scale, and the growth from each scale to the next and, with three scales or more,
    from the first to the last: the printed table (80 columns) and the growth per figure for the JSON."""
    pairs = list(pairwise(range(len(results))))
    if len(results) > 2:
        pairs.append((0, len(results) - 1))
    names = [f"{results[a]['scale']:g}→{results[b]['scale']:g}×" for a, b in pairs]
    lines = [f"{'':30}" + "".join(f"{r['scale']:>9g}×" for r in results) + "".join(f"{n:>6}" for n in names)]
    growth: dict[str, Any] = {}
    for label, get in ROWS:
        values = [get(r) for r in results]
        ratios = [values[b] / values[a] if values[a] else None for a, b in pairs]
        growth[label] = {n: None if g is None else round(g, 2) for n, g in zip(names, ratios, strict=True)}
        lines.append(f"{label:30}" + "".join(f"{v:>10,.1f}" if isinstance(v, float) else f"{v:>10,}" for v in values)
                     + "".join(f"{g:>6.2f}" if g else f"{'':>6}" for g in ratios))
    lines.append("a→b×: the figure at scale b over scale a; linear growth is b/a, memory's goal ≈ 1")
    lines.append(f"speed probe before each step: {speed_drift(results)} (a fixed workload;")
    lines.append("1.0 = the machine ran at one speed)")
    return "\n".join(lines), growth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=float, nargs="+", default=[1, 10])
    parser.add_argument("--sample-share", type=float, default=0.05, help="this share of the generation requests "
                        "is sent for real (the test server's echo answers are short: the same share keeps the "
                        "scales' stores alike, and the dispatch's walk over all pending rows in proportion)")
    parser.add_argument("--sample", type=int, help="at most this many per scale (a smoke run; a cap reached at "
                        "one scale and not another skews the dispatch's growth: the walk grows, the calls don't)")
    parser.add_argument("--keep", type=Path, help="build the studies in this folder and keep them")
    parser.add_argument("--profile", type=Path, help="write each step's cProfile statistics here "
                        "(STEP-xSCALE.prof, for profile_growth.py); the profiler's overhead makes the "
                        "run's own figures incomparable")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tenx.json")
    parser.add_argument("--table", type=Path, help="print the table of this results file again, its growth "
                        "figures brought up to date (no run)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.table:
        retable(args.table)
        return
    if args.child:
        child(args.child[0], Path(args.child[1]), args.sample or 0)
        return
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        os.environ[PROFILE_ENV] = str(args.profile.resolve())
    _ensure_importable()
    from dialectbias.testing import TestServer

    pool, source = sentences()
    cap = "" if args.sample is None else f", at most {args.sample:,}"
    print(f"answers built from {source}; {args.sample_share:.0%} of the generation requests{cap} sent for real "
          "per scale")
    results = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-tenx-") as tmp, TestServer(record_requests=0) as server:
        root = args.keep or Path(tmp)
        for scale in args.scales:
            results.append(run_scale(scale, args, server.base_url, server, pool, root))
            write(args.out, results, source, started)  # a later scale may not finish
    print("\n" + table(results)[0])
    print(f"wrote {args.out}")


def speed_drift(results: list[dict[str, Any]]) -> str:
    """The slowest over the fastest speed probe of the run."""
    probes = [st["speed_probe_s"] for r in results for st in r["steps"].values()]
    return f"slowest / fastest {max(probes) / min(probes):.2f}"


def retable(path: Path) -> None:
    """Print a results file's table again and write its growth figures as `table` computes them now."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        text, payload["growth_each_step"] = table(payload["scales"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"{path}: not a tenx.py results file ({type(exc).__name__}: {exc})") from None
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(text)


def write(out: Path, results: list[dict[str, Any]], source: str, started: float) -> None:
    from dialectbias.store._store import CACHE_ENV, CACHE_KIB

    growth = table(results)[1]
    payload = {"scales": results, "growth_each_step": growth, "answers_from": source,
               "store_cache_mib": os.environ.get(CACHE_ENV, "").strip() or f"{CACHE_KIB // 1024} (unset)",
               "sample_sent_for_real": [r["steps"]["dispatch"]["sent"] for r in results],
               "total_s": round(time.perf_counter() - started, 1),
               "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                           "load_average_at_end": os.getloadavg(), "speed_probe": speed_drift(results)},
               "synthetic": "fill-generate and fill-judge answers are synthetic (no model call), written "
                            "through PostCall.handle and the local executor's writer; dispatch and resume "
                            "are real calls to the test server"}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
