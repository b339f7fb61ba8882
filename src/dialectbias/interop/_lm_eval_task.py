"""`dialectbias export EXP --lm-eval-task DIR`: the experiment's prompts as an lm-evaluation-harness task folder.

DIR/<name>.jsonl holds one doc per generation request: `id` (`item|variant|key=value…`), item_id, variant, task,
request_keys, `system` (the system message, "" when none), `prompt` (the user message) and an empty `target`.
DIR/<name>.yaml is a `generate_until` task over it: `description: "{{system}}"` and `doc_to_text:
"{{prompt}}"`, so with `--apply_chat_template` a chat model gets exactly the run's messages (a system
message only when there is one); `generation_kwargs` carry the run's temperature, max_tokens (as
max_gen_toks) and top_p, with no stop sequence (lm-eval's default would cut answers at the first blank line).
When the requests' settings differ (e.g. a longer budget for chain of thought), one task per setting is
written (<name>_1, <name>_2 …). `lm_eval --log_samples` then writes samples that
`import-generations --from lm-eval` reads back.

What lm-eval cannot take is refused with a ConfigError: images, and chats other than [system,] user.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dialectbias.config import Experiment
from dialectbias.errors import ConfigError
from dialectbias.interop._prompts import Prompt, exported_prompts
from dialectbias.run import ImportTarget

#: our request params -> lm-eval generation_kwargs (what lm-eval's API models send on)
_PARAMS = {"temperature": "temperature", "max_tokens": "max_gen_toks", "top_p": "top_p"}


@dataclass
class LmEvalTask:
    """What was written: the task names (for `--tasks`) and the files."""

    names: list[str]
    files: list[Path]
    docs: int


def task_name(exp: Experiment) -> str:
    """An lm-eval task name from the experiment's name (letters, digits, _)."""
    return "dialectbias_" + re.sub(r"[^A-Za-z0-9_]+", "_", exp.name).strip("_").lower()


def _doc(prompt: Prompt, task: str, exp: Experiment) -> dict[str, Any]:
    if prompt.has_images():
        raise ConfigError(f"{exp.path}: {prompt.id}: the prompt holds an image, which an lm-eval "
                          "generate_until task cannot send: use --inspect-dataset")
    roles = [m["role"] for m in prompt.messages]
    if roles not in (["user"], ["system", "user"]):
        raise ConfigError(f"{exp.path}: {prompt.id}: messages {roles}: an lm-eval task sends a system "
                          "message and one user message; use --inspect-dataset for other chats")
    system = prompt.messages[0]["content"] if roles[0] == "system" else ""
    return {"id": prompt.id, "item_id": prompt.item_id, "variant": prompt.variant, "task": task,
            "request_keys": prompt.keys, "system": system, "prompt": prompt.messages[-1]["content"],
            "target": ""}


def generation_kwargs(params: dict[str, Any]) -> dict[str, Any]:
    """lm-eval's generation_kwargs for a request's params (ConfigError naming a param lm-eval cannot send)."""
    out: dict[str, Any] = {"until": [], "do_sample": bool(params.get("temperature", 0))}
    for key, value in params.items():
        if key not in _PARAMS:
            raise ConfigError(f"generation parameter {key!r} has no lm-eval equivalent "
                              f"(it sends {', '.join(_PARAMS)}): use --inspect-dataset")
        out[_PARAMS[key]] = value
    return out


def _config(name: str, data: Path, kwargs: dict[str, Any], system: bool) -> dict[str, Any]:
    return {"task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data)}},
            "test_split": "test", "output_type": "generate_until", "doc_to_text": "{{prompt}}",
            "doc_to_target": "{{target}}", "target_delimiter": "",
            **({"description": "{{system}}"} if system else {}),
            "generation_kwargs": kwargs,
            "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
            "metadata": {"version": 1.0, "written_by": "dialectbias export --lm-eval-task"}}


def write_lm_eval_task(exp: Experiment, task: ImportTarget, out_dir: Path) -> LmEvalTask:
    """Write the task folder (see the module docstring); the data path in the YAML is absolute, so the folder
    is run where it was written (export again after moving it)."""
    prompts = exported_prompts(exp, task)
    groups: dict[str, list[Prompt]] = {}
    for p in prompts:
        groups.setdefault(json.dumps(generation_kwargs(p.params), sort_keys=True), []).append(p)
    out_dir = out_dir.expanduser().resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    base = task_name(exp)
    names, files = [], []
    for i, (kwargs, group) in enumerate(groups.items(), start=1):
        name = base if len(groups) == 1 else f"{base}_{i}"
        docs = [_doc(p, exp.task, exp) for p in group]
        data = out_dir / f"{name}.jsonl"
        data.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
        config = _config(name, data, json.loads(kwargs), any(d["system"] for d in docs))
        spec = out_dir / f"{name}.yaml"
        spec.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
        names.append(name)
        files += [spec, data]
    return LmEvalTask(names, files, len(prompts))
