"""Hybrid retrieval index on all of Vashantor train+test (11,250 pairs, 5 dialects): build time (each distinct
normalised standard sentence is embedded once: ≈ 2,300 for the 11,250 pairs), load time,
query latency without the query embedding, and recall@1 of each pair's own dialect text when its standard side
is the query (with its dialect as the target).

Query vectors are embedded once per unique normalised standard sentence (Vashantor is row-parallel across its
five dialects, so ≈ 2,300 unique sentences serve the 11,250 queries); only `HybridIndex.search_embedded` — pool,
BM25, FAISS, deep search, rerank — is timed per query. The embedding of one query is timed apart.

Usage:
  PYTHONPATH=src /work/main/.venv/bin/python benchmarks/retrieval.py [--data ../shared/data/vashantor]
      [--sample N] [--seed 0] [--out benchmarks/results/retrieval.json]
Target (issue 9): p50 query latency < 5 ms on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))

from dialectbias.data import load_corpus  # noqa: E402
from dialectbias.retrieval import HybridIndex, load_embedder  # noqa: E402
from dialectbias.text import match_key, normalize_query  # noqa: E402

TARGET_P50_MS = 5.0
EXAMPLES = [("আজকে আমার মন ভালো নেই", "sylhet"), ("তুমি কোথায় যাচ্ছ?", "chittagong"), ("কেমন আছো", "noakhali"),
            ("গরুগুলো মাঠে চরছে", "barishal"), ("বাড়িতে", "mymensingh")]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = next((p / "shared" / "data" / "vashantor" for p in REPO.resolve().parents
                         if (p / "shared" / "data" / "vashantor").is_dir()), Path("../shared/data/vashantor"))
    parser.add_argument("--data", type=Path, default=default_data)
    parser.add_argument("--sample", type=int, default=0, help="query only N random pairs (0 = all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "retrieval.json")
    args = parser.parse_args()
    root = args.data / "Vashantor_Simplified"
    if not root.is_dir():
        sys.exit(f"Vashantor not found at {root}")

    with tempfile.TemporaryDirectory() as tmp:
        corpus_file = Path(tmp) / "vashantor.yaml"
        corpus_file.write_text("name: vashantor-train-test\nfiles:\n" + "".join(
            f"  - path: {json.dumps(str(root / split / '*.csv'))}\n    standard: standard_text\n"
            "    dialect_text: dialect_text\n    dialect: dialect\n" for split in ("Train", "Test")), encoding="utf-8")
        t0 = time.perf_counter()
        corpus = load_corpus(corpus_file)
        load_corpus_s = time.perf_counter() - t0
        embedder = load_embedder(None)
        out_dir = Path(tmp) / "vashantor.index"
        t0 = time.perf_counter()
        index = HybridIndex.build(corpus, embedder=embedder, out_dir=out_dir)
        build_s = time.perf_counter() - t0
        assert index.build_stats is not None
        sentences_embedded = index.build_stats.texts_embedded
        t0 = time.perf_counter()
        HybridIndex.build(corpus, embedder=embedder, out_dir=out_dir)
        rebuild_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        index = HybridIndex.load(out_dir, embedder=embedder)
        load_s = time.perf_counter() - t0
        size_mb = sum(f.stat().st_size for f in out_dir.iterdir()) / 1e6

        pairs = list(corpus.pairs)
        if args.sample:
            pairs = random.Random(args.seed).sample(pairs, min(args.sample, len(pairs)))
        queries = {p.standard_norm: normalize_query(p.standard) for p in pairs}
        texts = sorted(queries)
        t0 = time.perf_counter()
        vectors = {}
        for lo in range(0, len(texts), 256):
            chunk = texts[lo:lo + 256]
            vectors.update(zip(chunk, embedder.embed_queries(chunk), strict=True))
        query_embed_s = time.perf_counter() - t0
        single = []
        for text in texts[:100]:
            t0 = time.perf_counter()
            embedder.embed_query(text)
            single.append((time.perf_counter() - t0) * 1000)

        # the same standard sentence with two dialect texts in one dialect: either text is a correct answer
        answers: dict[tuple[str, str], set[str]] = {}
        for p in corpus.pairs:
            answers.setdefault((p.standard_norm, p.dialect), set()).add(p.dialect_norm)
        latencies, hit1, hit1_text, hit5, same_dialect, deep, short = [], 0, 0, 0, 0, 0, 0
        for p in pairs:
            q = queries[p.standard_norm]
            t0 = time.perf_counter()
            hits = index.search_embedded(q, vectors[p.standard_norm], dialect=p.dialect, k=5)
            latencies.append((time.perf_counter() - t0) * 1000)
            hit1 += hits[0].pair_id == p.id
            hit1_text += match_key(hits[0].dialect_text) in answers[(p.standard_norm, p.dialect)]
            hit5 += any(h.pair_id == p.id for h in hits)
            same_dialect += all(h.dialect == p.dialect for h in hits)
            deep += any(h.via == "deep_search" for h in hits)
            short += q.short

        examples = []
        for text, dialect in EXAMPLES:
            hits = index.search(text, dialect=dialect, k=3)
            examples.append({"query": text, "dialect": dialect, "short": normalize_query(text).short, "hits": [
                {k: v for k, v in h.model_dump().items() if k not in ("source",)} for h in hits]})

    n = len(pairs)
    result: dict[str, Any] = {
        "benchmark": "retrieval", "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_1m_at_end": os.getloadavg()[0]},
        "corpus": {"files": len(corpus.report.files), "rows": corpus.report.total("rows"),
                   "pairs": len(corpus.pairs), "duplicates": corpus.report.duplicates, "empty": corpus.report.empty,
                   "identical": corpus.report.identical, "dialects": corpus.dialects(),
                   "load_s": round(load_corpus_s, 3)},
        "embedder": index.manifest.embedder_identity,
        "build_s": round(build_s, 2), "sentences_embedded": sentences_embedded,
        "sentences_per_s": round(sentences_embedded / build_s, 1),
        "rebuild_unchanged_s": round(rebuild_s, 3), "load_s": round(load_s, 3), "index_mb": round(size_mb, 2),
        "queries": n, "sampled": bool(args.sample), "unique_query_texts": len(texts),
        "short_queries": short,
        "query_embedding": {"batched_s": round(query_embed_s, 2), "single_p50_ms": round(statistics.median(single), 2)},
        "latency_ms_excluding_query_embedding": {
            "p50": round(percentile(latencies, 0.5), 3), "p95": round(percentile(latencies, 0.95), 3),
            "p99": round(percentile(latencies, 0.99), 3), "mean": round(statistics.fmean(latencies), 3),
            "max": round(max(latencies), 3)},
        "target_p50_ms": TARGET_P50_MS,
        "recall_at_1_own_pair": round(hit1 / n, 4),
        "recall_at_1_own_dialect_text": round(hit1_text / n, 4),
        "recall_at_5_own_pair": round(hit5 / n, 4),
        "all_top5_in_target_dialect": round(same_dialect / n, 4),
        "queries_with_deep_search_hits": deep,
        "examples": examples,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "examples"}, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
