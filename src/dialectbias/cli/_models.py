"""`dialectbias models …`: local model files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectbias.cli._app import clear_errors, console


@clear_errors
def convert_gguf(gguf: Annotated[Path, typer.Argument(help="a GGUF model file", show_default=False)],
                 out: Annotated[Path, typer.Option("--out", help="the Hugging Face folder to write")],
                 dtype: Annotated[str, typer.Option(help="weights dtype: bfloat16, float16 or float32")] = "bfloat16",
                 overwrite: Annotated[bool, typer.Option(help="replace a non-empty --out folder")] = False) -> None:
    """Write a Hugging Face folder (model and tokenizer) from a GGUF file: what `provider: vllm` loads (needs
    the hf extra; the weights are dequantized).

    Example: dialectbias models convert-gguf SmolLM2-135M-Instruct.Q4_1.gguf --out models/smollm2
    """
    from dialectbias.providers._vllm_convert import convert_gguf as convert

    folder = convert(gguf, out, dtype=dtype, overwrite=overwrite)
    console.print(f"wrote {folder} (use it as `model:` of a `provider: vllm` entry)", highlight=False)
