"""Request-table size with and without content-addressed parts (issue 8.3), side by side in one run.

Compiles a paper-shaped qa_bias request set twice with the packaged templates, once as stored today (long
text parts and the JSON schema in the `content` table, rows hold references) and once inline (the same rows
built with the reference threshold set to infinity: every request carries its full text, as before), each
into a fresh store, then reports MB per 1,000 requests for both.

Shape (default): 10 models × 100 items × 10 variants (standard + 9 dialects) = 10,000 generation requests;
3 judges × the 9,000 dialect answers = 27,000 judge requests. Questions are ~15 Bengali words; the answers the
judges compare are ~120 Bengali words each (the answer limit is 512 tokens); the judge system prompt
(2,300 characters) and the RLAIF JSON schema (1,100) are the repeated parts.

Usage: python benchmarks/store_size.py [--items 100] [--models 10] [--judges 3] [--out FILE]
Writes benchmarks/results/store_size.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DIALECTS = ("barishal", "chittagong", "kishoreganj", "mymensingh", "narail", "noakhali", "rangpur", "sylhet",
            "tangail")
WORDS = ("নদী", "বাংলাদেশ", "মানুষ", "জল", "শহর", "গ্রাম", "বই", "সময়", "চাষ", "ধান", "বর্ষা", "স্বাস্থ্য", "জ্বর",
         "ওষুধ", "বিদ্যালয়", "শিক্ষা", "প্রযুক্তি", "মোবাইল", "বাজার", "দাম", "সরকার", "আইন", "পরিবার", "খাদ্য")


def _ensure_importable() -> None:
    try:
        import dialectbias  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(HERE.parent / "src"))


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "।"


def build_specs(n_items: int, n_models: int, n_judges: int) -> tuple[list[Any], list[Any]]:
    from dialectbias.judges import rlaif_json_schema
    from dialectbias.providers._openai import OpenAIModelConfig
    from dialectbias.run import RequestSpec
    from dialectbias.tasks._templates import render

    rng = random.Random(7)
    models = [OpenAIModelConfig(id=f"model-{i}", model=f"model-{i}", base_url="http://127.0.0.1:9/v1")
              for i in range(n_models)]
    judges = [OpenAIModelConfig(id=f"judge-{i}", model=f"judge-{i}", base_url="http://127.0.0.1:9/v1")
              for i in range(n_judges)]
    variants = ("standard", *DIALECTS)
    questions = {(i, v): _text(rng, 15) + " কী?" for i in range(n_items) for v in variants}
    gens, judge_specs = [], []
    system = {d: render("qa_bias/judge_system", None, dialect=d) for d in DIALECTS}
    schema = rlaif_json_schema()
    for model in models:
        ids = {}
        for (i, variant), question in questions.items():
            spec = RequestSpec(stage="generate", model=model, item_id=f"q{i:04d}", variant=variant,
                               template="qa_bias/answer", params={"temperature": 0, "max_tokens": 512},
                               messages=[{"role": "user", "content": render("qa_bias/answer", None,
                                                                            question=question, variant=variant)}])
            gens.append(spec)
            ids[(i, variant)] = (spec.request_id(), _text(rng, 120))
        for judge in judges:
            for i in range(n_items):
                std = ids[(i, "standard")]
                for dialect in DIALECTS:
                    dia = ids[(i, dialect)]
                    user = render("qa_bias/judge_user", None, dialect=dialect,
                                  standard_question=questions[(i, "standard")],
                                  dialect_question=questions[(i, dialect)],
                                  standard_response=std[1], dialect_response=dia[1])
                    judge_specs.append(RequestSpec(
                        stage="judge", model=judge, item_id=f"q{i:04d}", variant=dialect, template="qa_bias/judge_user",
                        params={"temperature": 0, "max_tokens": 1024}, json_schema=schema,
                        schema_name="rlaif_judgment", refs=[std[0], dia[0]], meta={"model_id": model.id},
                        messages=[{"role": "system", "content": system[dialect]}, {"role": "user", "content": user}]))
    return gens, judge_specs


def measure(path: Path, specs: list[Any], min_ref_chars: float) -> dict[str, Any]:
    from dialectbias.store import Store

    started = time.perf_counter()
    with Store.open(path) as store:
        for stage in ("generate", "judge"):
            by_model: dict[str, list[Any]] = {}
            for spec in specs:
                if spec.stage == stage:
                    by_model.setdefault(spec.model.id, []).append(spec)
            for model_id, group in by_model.items():
                store.add_requests((s.to_row(min_ref_chars=min_ref_chars) for s in group), current=(stage, model_id))
    seconds = time.perf_counter() - started
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    cols = ("request_id", "stage", "model_id", "item_id", "variant", "refs", "template", "prompt_hash", "messages",
            "params", "json_schema", "cache_key", "meta")
    row_bytes = " + ".join(f"coalesce(length(CAST({c} AS BLOB)), 0)" for c in cols) + " + 8"
    per_stage = {r[0]: {"requests": r[1], "row_bytes_mean": round(r[2]), "row_bytes_max": r[3]} for r in conn.execute(
        f"SELECT stage, count(*), avg({row_bytes}), max({row_bytes}) FROM requests GROUP BY stage")}
    content = conn.execute("SELECT count(*), coalesce(sum(size), 0) FROM content").fetchone()
    n = conn.execute("SELECT count(*) FROM requests").fetchone()[0]
    conn.close()
    size = path.stat().st_size
    return {"file_mb": round(size / 1e6, 2), "mb_per_1000_requests": round(size / 1e6 / n * 1000, 3),
            "requests": n, "content_rows": content[0], "content_bytes": content[1], "by_stage": per_stage,
            "build_s": round(seconds, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "store_size.json")
    args = parser.parse_args()
    _ensure_importable()
    from dialectbias.store import TEXT_REF_MIN_CHARS

    gens, judges = build_specs(args.items, args.models, args.judges)
    specs = gens + judges
    with tempfile.TemporaryDirectory() as tmp:
        inline = measure(Path(tmp) / "inline.sqlite", specs, float("inf"))
        parts = measure(Path(tmp) / "parts.sqlite", specs, TEXT_REF_MIN_CHARS)
    result = {"generation_requests": len(gens), "judge_requests": len(judges),
              "text_ref_min_chars": TEXT_REF_MIN_CHARS, "inline_before": inline, "content_addressed_after": parts,
              "ratio_after_before": round(parts["mb_per_1000_requests"] / inline["mb_per_1000_requests"], 3),
              "python": platform.python_version(), "machine": platform.machine()}
    print(f"{len(gens):,} generation + {len(judges):,} judge requests")
    print(f"{'':28}{'inline (before)':>18}{'parts (after)':>16}")
    print(f"{'MB per 1,000 requests':28}{inline['mb_per_1000_requests']:>18.3f}{parts['mb_per_1000_requests']:>16.3f}")
    print(f"{'store file MB':28}{inline['file_mb']:>18.2f}{parts['file_mb']:>16.2f}")
    for stage in ("generate", "judge"):
        print(f"{'mean row bytes, ' + stage:28}{inline['by_stage'][stage]['row_bytes_mean']:>18,}"
              f"{parts['by_stage'][stage]['row_bytes_mean']:>16,}")
    print(f"after / before: {result['ratio_after_before']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
