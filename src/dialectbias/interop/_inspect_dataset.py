"""`dialectbias export EXP --inspect-dataset F.jsonl`: the experiment's prompts as an inspect_ai dataset.

One JSON object per generation request: `id` (`item|variant|key=value…`, `dialectbias.interop._ids`),
`input` (the prompt text when the request is one user message, else the chat messages as inspect_ai reads
them: {role, content} with text and image parts) and `metadata` (item_id, variant, task, request keys,
request ids). `inspect eval` on it writes a log that `import-generations --from inspect` reads back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dialectbias.config import Experiment
from dialectbias.interop._prompts import Prompt, exported_prompts
from dialectbias.run import ImportTarget


def inspect_input(prompt: Prompt) -> str | list[dict[str, Any]]:
    """A lone user message with text content is inspect's plain-string input; anything else, the messages."""
    if len(prompt.messages) == 1 and prompt.messages[0]["role"] == "user" \
            and isinstance(prompt.messages[0]["content"], str):
        return str(prompt.messages[0]["content"])
    return prompt.messages


def write_inspect_dataset(exp: Experiment, task: ImportTarget, path: Path) -> list[Prompt]:
    """Write the dataset JSONL; returns the prompts written."""
    prompts = exported_prompts(exp, task)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for p in prompts:
            row = {"id": p.id, "input": inspect_input(p), "metadata": p.metadata(exp.task)}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return prompts


#: our request params -> `inspect eval` options
_FLAGS = {"temperature": "--temperature", "max_tokens": "--max-tokens", "top_p": "--top-p"}


def inspect_flags(prompts: list[Prompt]) -> str:
    """The `inspect eval` options that send the run's generation settings ('' when the prompts' settings differ:
    then run one eval per setting, e.g. per strategy)."""
    settings = {tuple(sorted(p.params.items())) for p in prompts}
    if len(settings) != 1:
        return ""
    return " ".join(f"{_FLAGS[k]} {v}" for k, v in sorted(dict(settings.pop()).items()) if k in _FLAGS)
