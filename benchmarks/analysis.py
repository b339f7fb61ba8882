"""Analysis at the paper's scale: time `dialectbias report` over ≈205,000 synthetic qa_bias judgments.

The study has the size of the Bengali dialect-bias paper (Sami et al. 2026, Tables 4/5): 19 models ×
400 items × 9 dialects (3,600 dialect pairs per model) judged by 3 judges (1 primary, 2 secondary)
= 205,200 judgments, plus the 76,000 generations they refer to. Scores come from a latent quality per
model, dialect and item with judge noise; Likert fields, confidence, script/refusal zeroing, parse
failures, review flags and human overrides are all present so every report path runs.

The store is filled directly (executemany in one transaction; no model is called: the models and
judges point at a dummy base_url), then `build_report` — what `dialectbias report EXP.yaml` runs — is
timed in a fresh subprocess, with its peak RSS (resource.getrusage, ru_maxrss).

Usage:
  /work/venv/bin/python benchmarks/analysis.py [--items 400] [--models 19] [--resamples 10000]
      [--keep DIR] [--profile] [--out benchmarks/results/analysis.json]
Target (SPEC §8, issue 3 part 7): under 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TARGET_S = 10.0

DIALECTS = ("barishal", "chittagong", "kishoreganj", "mymensingh", "narail", "noakhali", "rangpur",
            "sylhet", "tangail")
DIALECT_DIFFICULTY = (0.8, 2.2, 0.4, 0.3, 0.9, 1.0, 0.3, 1.1, 0.2)
DOMAINS = ("health", "agriculture", "education", "technology", "culture", "finance")
QTYPES = ("definitional", "contrasting", "factual", "functional")
QTYPE_DIFFICULTY = (1.8, 0.3, 0.0, 0.4)
# (id, family, params_b, quality on 0–10): the paper's Appendix D line-up
MODELS = (
    ("gemma-3n-e2b", "gemma", 2, 7.5), ("gemma-3n-e4b", "gemma", 4, 7.8), ("gemma-3-12b", "gemma", 12, 8.1),
    ("gemma-3-27b", "gemma", 27, 8.7), ("llama-3.1-8b", "llama", 8, 4.8), ("llama-3.2-3b", "llama", 3, 3.5),
    ("llama-3.3-70b", "llama", 70, 8.5), ("qwen3-4b", "qwen", 4, 7.3), ("qwen3-8b", "qwen", 8, 7.7),
    ("qwen3-32b", "qwen", 32, 8.7), ("qwen3-235b", "qwen", 235, 8.3), ("mistral-7b", "mistral", 7, 2.3),
    ("ministral-3-8b", "mistral", 8, 7.7), ("ministral-3-14b", "mistral", 14, 8.4),
    ("deepseek-r1-8b", "deepseek", 8, 4.8), ("deepseek-r1-32b", "deepseek", 32, 4.5),
    ("phi4-14b", "phi", 14, 6.8), ("gpt-oss-20b", "gpt-oss", 20, 8.7), ("gpt-oss-120b", "gpt-oss", 120, 8.2),
)
JUDGES = (("gemini-2.5-flash", "primary", 0.0), ("gpt-oss-20b-judge", "secondary", 0.45),
          ("gemma-3-27b-judge", "secondary", 0.9))
FIELDS = ("dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
          "appropriate_length")
WEIGHTS = (3.0, 2.5, 2.0, 1.5, 1.0)
REASONING = ("স্ক্রিপ্ট: উপভাষার উত্তর বাংলা লিপিতে লেখা। বোধগম্যতা: মডেল প্রশ্নটি বুঝেছে এবং মূল বিষয়টির উত্তর "
             "দিয়েছে। তথ্যগত নির্ভুলতা: প্রমিত উত্তরের সাথে তুলনা করলে মূল তথ্যগুলো মিলে যায়, তবে একটি বিষয় "
             "অনুপস্থিত। Script check passed; comprehension adequate; minor omission in completeness.")


def _ensure_importable() -> None:
    try:
        import dialectbias  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / "src"))


def write_experiment(root: Path, n_models: int, resamples: int) -> Path:
    lines = ["name: analysis-bench", "task: qa_bias", "data: items.jsonl", "store: bench.sqlite",
             f"variants: [standard, {', '.join(DIALECTS)}]", "seed: 7", "options:",
             f"  n_resamples: {resamples}", "models:"]
    for mid, family, size, _ in MODELS[:n_models]:
        lines += [f"  - id: {mid}", "    provider: openai", "    base_url: http://127.0.0.1:9/v1",
                  f"    model: {mid}", f"    family: {family}", f"    params_b: {size}"]
    lines.append("judges:")
    for jid, role, _ in JUDGES:
        lines += [f"  - id: {jid}", "    provider: openai", "    base_url: http://127.0.0.1:9/v1",
                  f"    model: {jid}", f"    role: {role}"]
    path = root / "exp.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _likert(rng: random.Random, quality: float) -> list[int]:
    """Five Likert values around quality (0–10), clipped to 0–5."""
    base = quality / 2.0
    return [max(0, min(5, round(base + rng.gauss(0.0, 0.55)))) for _ in FIELDS]


def _checks(script_ok: bool, share: float, refusal: str | None) -> str:
    """The stored `checks` of a judgment (store v5): the code's script and refusal findings."""
    return json.dumps({"script": {"status": "ok" if script_ok else "invalid", "share": share,
                                  "reason": f"Bengali share {share:.2f}"}, "refusal": refusal},
                      separators=(",", ":"))


def fill_store(path: Path, n_items: int, n_models: int, seed: int = 0) -> dict[str, int]:
    """Write items, generation and judge requests/results, judgments and overrides in one transaction."""
    _ensure_importable()
    from dialectbias.store import Store

    rng = random.Random(seed)
    now = time.time()
    Store.open(path).close()  # create the schema
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    items = []
    item_difficulty = {}
    for i in range(n_items):
        iid = f"q{i:05d}"
        qtype, domain = QTYPES[i % len(QTYPES)], DOMAINS[(i // len(QTYPES)) % len(DOMAINS)]
        item_difficulty[iid] = QTYPE_DIFFICULTY[QTYPES.index(qtype)] + rng.gauss(0.0, 0.8)
        variants = {"standard": f"প্রশ্ন {i}: এটি কী এবং কেন গুরুত্বপূর্ণ?",
                    **{d: f"{d} প্রশ্ন {i}: এইডা কী আর ক্যান দরকারি?" for d in DIALECTS}}
        items.append((iid, domain, qtype, json.dumps(variants, ensure_ascii=False), "null", "{}", "{}"))
    conn.executemany("INSERT INTO items VALUES (?,?,?,?,?,?,?)", items)

    req_sql = ("INSERT INTO requests (request_id, stage, model_id, item_id, variant, refs, template, "
               "prompt_hash, messages, params, json_schema, cache_key, meta, created_at) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
    res_sql = ("INSERT INTO results (request_id, status, output, finish_reason, tokens_in, tokens_out, "
               "latency_s, completed_at) VALUES (?,?,?,?,?,?,?,?)")
    jud_sql = ("INSERT INTO judgments (request_id, judge_id, model_id, item_id, variant, rubric, raw_output, "
               "parsed, score, confidence, checks, flags, parse_status, needs_review, flagged, reason) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
    params = json.dumps({"temperature": 0, "max_tokens": 512})
    counts = {"items": n_items, "generations": 0, "judgments": 0, "overrides": 0}
    overrides = []
    for mid, _, _, quality in MODELS[:n_models]:
        gen_req, gen_res = [], []
        for iid, *_ in items:
            for variant in ("standard", *DIALECTS):
                rid = f"g-{mid}-{iid}-{variant}"
                msg = json.dumps([{"role": "user", "content": f"{variant} প্রশ্ন {iid}: উত্তর দিন।"}],
                                 ensure_ascii=False)
                gen_req.append((rid, "generate", mid, iid, variant, "[]", "qa_bias/answer", rid, msg, params,
                                None, rid, "{}", now))
                gen_res.append((rid, "ok", f"উত্তর ({mid}, {variant}): এটি একটি দীর্ঘ উত্তর। " * 6, "stop",
                                60, 180, 0.5, now))
        conn.executemany(req_sql, gen_req)
        conn.executemany(res_sql, gen_res)
        counts["generations"] += len(gen_req)
        cell = {(iid, d): quality - diff * (10.0 - quality) / 6.0 - item_difficulty[iid] * 0.6
                + rng.gauss(0.0, 1.2) for iid, *_ in items for d, diff in zip(DIALECTS, DIALECT_DIFFICULTY,
                                                                               strict=True)}
        for jid, role, noise in JUDGES:
            j_req, j_res, j_rows = [], [], []
            for iid, *_ in items:
                for d in DIALECTS:
                    rid = f"j-{jid}-{mid}-{iid}-{d}"
                    latent = cell[iid, d] + rng.gauss(0.0, noise * 1.5) - noise * 0.3  # judge noise and bias
                    j_req.append((rid, "judge", jid, iid, d, json.dumps([f"g-{mid}-{iid}-standard",
                                                                       f"g-{mid}-{iid}-{d}"]),
                                  "qa_bias/judge_user", rid, "[]", params, None, rid,
                                  json.dumps({"model_id": mid}), now))
                    u = rng.random()
                    if u < 0.004:  # unparseable after repair and re-ask
                        raw = "Sorry, I cannot produce JSON {"
                        j_res.append((rid, "ok", raw, "stop", 900, 300, 1.2, now))
                        j_rows.append((rid, jid, mid, iid, d, "rlaif", raw, None, None, None,
                                       _checks(True, 0.97, None), "[]", "failed", 1, 0, "invalid JSON"))
                        continue
                    likert = _likert(rng, latent)
                    conf = max(1, min(5, round(4.2 + rng.gauss(0.0, 0.9))))
                    script_ok = u > 0.02
                    refusal = 0.02 <= u < 0.03
                    parsed = {"chain_of_thought_reasoning": REASONING, "script_valid": script_ok,
                              "refusal": refusal, **dict(zip(FIELDS, likert, strict=True)),
                              "confidence": conf}
                    text = json.dumps(parsed, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
                    flags = []
                    if not script_ok:
                        flags.append("script: judge and code agree it is invalid (code: Bengali share 0.12)")
                    elif refusal:
                        flags.append("refusal: judge and code agree (pattern bn_sorry)")
                    reason = f"zeroed: {'; '.join(flags)}" if flags else None
                    score = 0.0 if reason else sum(w * v for w, v in zip(WEIGHTS, likert, strict=True)) / 5
                    flagged = int(u < 0.005)
                    needs_review = int(flagged or conf <= 3)
                    j_res.append((rid, "ok", text, "stop", 900, 300, 1.2, now))
                    j_rows.append((rid, jid, mid, iid, d, "rlaif", text, text, score, conf,
                                   _checks(script_ok or u < 0.01, 0.95 if script_ok else 0.12,
                                           "bn_sorry" if refusal else None),
                                   json.dumps(flags), "ok", needs_review, flagged, reason))
                    if role == "primary" and needs_review and rng.random() < 0.3:
                        human = [max(0, min(5, v + rng.choice((-1, 0, 0, 1)))) for v in likert]
                        value = {"rubric": "rlaif", "fields": dict(zip(FIELDS, human, strict=True)),
                                 "score": sum(w * v for w, v in zip(WEIGHTS, human, strict=True)) / 5}
                        overrides.append((rid, "annotator-1", "judgment_override", json.dumps(value), "", now))
            conn.executemany(req_sql, j_req)
            conn.executemany(res_sql, j_res)
            conn.executemany(jud_sql, j_rows)
            counts["judgments"] += len(j_rows)
    conn.executemany("INSERT INTO annotations (target_id, annotator, kind, value, comment, created_at) "
                     "VALUES (?,?,?,?,?,?)", overrides)
    counts["overrides"] = len(overrides)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    counts["store_mb"] = round(path.stat().st_size / 1e6, 1)
    return counts


def write_items(root: Path, n_items: int) -> None:
    with (root / "items.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n_items):
            fh.write(json.dumps({"id": f"q{i:05d}", "variants": {"standard": f"প্রশ্ন {i}",
                                 **{d: f"{d} {i}" for d in DIALECTS}}}, ensure_ascii=False) + "\n")


def child_main(exp_path: str, out_dir: str, profile: str | None) -> None:
    """Subprocess: import, then time build_report alone; print one JSON line."""
    import resource

    t_import = time.perf_counter()
    _ensure_importable()
    from dialectbias.api import build_report

    import_s = time.perf_counter() - t_import
    before = resource.getrusage(resource.RUSAGE_SELF)
    rss_before = before.ru_maxrss
    t0 = time.perf_counter()
    if profile:
        import cProfile

        cProfile.runctx("build_report(exp_path, out_dir)", globals(), {"build_report": build_report,
                        "exp_path": exp_path, "out_dir": out_dir}, profile)
    else:
        build_report(exp_path, out_dir)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print("@@RESULT@@" + json.dumps({"report_s": wall, "report_cpu_s": cpu, "import_s": import_s,
                                     "peak_rss_mb": after.ru_maxrss / 1024,
                                     "rss_after_import_mb": rss_before / 1024}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--models", type=int, default=len(MODELS), choices=range(1, len(MODELS) + 1),
                    metavar="N")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3, help="time the report this many times (best is kept)")
    ap.add_argument("--keep", type=Path, help="build the store and report in this directory and keep them")
    ap.add_argument("--profile", action="store_true", help="write a cProfile of one report run")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "analysis.json")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--child-profile", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_main(*args.child, args.child_profile)
        return

    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        exp = write_experiment(root, args.models, args.resamples)
        write_items(root, args.items)
        store = root / "bench.sqlite"
        if store.exists():
            print(f"reusing {store}")
            counts: dict[str, Any] = {"store_mb": round(store.stat().st_size / 1e6, 1)}
        else:
            t0 = time.perf_counter()
            counts = fill_store(store, args.items, args.models)
            counts["fill_s"] = round(time.perf_counter() - t0, 1)
            print(f"filled {store}: {counts}")
        runs = []
        for i in range(args.repeat if not args.profile else 1):
            cmd = [sys.executable, __file__, "--child", str(exp), str(root / "report")]
            if args.profile:
                cmd += ["--child-profile", str(root / "report.prof")]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
            if proc.returncode != 0 or line is None:
                sys.stderr.write(proc.stdout + proc.stderr)
                raise SystemExit(f"report run {i + 1} failed (exit {proc.returncode})")
            runs.append(json.loads(line[len("@@RESULT@@"):]))
            r = runs[-1]
            print(f"run {i + 1}: report {r['report_s']:.2f} s wall, {r['report_cpu_s']:.2f} s CPU, "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB")
        if args.profile:
            import pstats

            pstats.Stats(str(root / "report.prof")).sort_stats("cumulative").print_stats(40)
        best = min(runs, key=lambda r: r["report_s"])
        with closing(sqlite3.connect(store)) as conn:
            n_judgments = conn.execute("SELECT count(*) FROM judgments").fetchone()[0]
        result = {
            "judgments": n_judgments, "models": args.models, "items": args.items, "dialects": len(DIALECTS),
            "judges": len(JUDGES), "n_resamples": args.resamples, "report_s": round(best["report_s"], 3),
            "report_s_runs": [round(r["report_s"], 3) for r in runs],
            "report_cpu_s": round(best["report_cpu_s"], 3), "import_s": round(best["import_s"], 3),
            "load_average_1min": round(os.getloadavg()[0], 2),
            "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1),
            "rss_after_import_mb": round(best["rss_after_import_mb"], 1), "target_s": TARGET_S,
            "meets_target": best["report_s"] < TARGET_S, "store": counts, "python": platform.python_version(),
            "cpus": os.cpu_count(), "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
    print(f"\nanalysis of {n_judgments:,} judgments: {result['report_s']:.2f} s "
          f"(target < {TARGET_S:.0f} s), peak RSS {result['peak_rss_mb']:.0f} MB")
    if not args.profile:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
