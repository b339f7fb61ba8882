"""Every generation request an experiment's run would send, as harness-neutral prompts (for the exports).

The requests are built by the task itself (its generate stage, with the experiment's items in a scratch store),
so the exported messages are byte for byte what `dialectbias run` sends, and each prompt's id
(`dialectbias.interop._ids`) leads an answer back to the same request on import.
"""

from __future__ import annotations

import base64
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectbias.config import Experiment
from dialectbias.errors import ConfigError
from dialectbias.interop._ids import sample_id
from dialectbias.run import ImportTarget, RequestSpec, Skipped, imported_model, importing
from dialectbias.store import Store

GENERATE_STAGE = "generate"
#: the model id requests are built for when the experiment lists no models (it never reaches an id or a row)
EXPORT_MODEL = "exported"


@dataclass
class Prompt:
    """One generation request, harness-neutral: id, the chat messages, and where it belongs."""

    id: str
    item_id: str
    variant: str
    keys: dict[str, Any]
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    template: str
    request_ids: dict[str, str] = field(default_factory=dict)

    def metadata(self, task: str) -> dict[str, Any]:
        """What an import needs to find the request again (and what a reader wants to see)."""
        return {"item_id": self.item_id, "variant": self.variant, "task": task, **self.keys,
                "request_keys": self.keys, "request_ids": self.request_ids, "template": self.template}

    def has_images(self) -> bool:
        return any(isinstance(m["content"], list) and any(p.get("type") == "image" for p in m["content"])
                   for m in self.messages)


def _message(message: Any) -> dict[str, Any]:
    """A chat message as JSON: text parts as {type: text, text}, images as data: URIs."""
    content = message["content"]
    if isinstance(content, str):
        return {"role": message["role"], "content": content}
    parts: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "text":
            parts.append({"type": "text", "text": part["text"]})
        else:
            image = part["image"]
            data = base64.b64encode(image).decode("ascii") if isinstance(image, bytes) else image
            uri = data if data.startswith(("data:", "http://", "https://")) else \
                f"data:{part.get('mime', 'image/png')};base64,{data}"
            parts.append({"type": "image", "image": uri})
    return {"role": message["role"], "content": parts}


def _keys(spec: RequestSpec, task: ImportTarget) -> dict[str, Any]:
    return {k: v for k in task.request_keys if isinstance(v := spec.meta.get(k), str | int)
            and not isinstance(v, bool)}


def exported_prompts(exp: Experiment, task: ImportTarget) -> list[Prompt]:
    """The experiment's generation requests, one prompt per item × variant × request keys, in the run's order;
    `request_ids` holds the request id for each model the experiment lists. ConfigError for a task without a
    generation stage, or when the task's request keys do not tell two requests apart."""
    stage = next((s for s in task.stages() if s.name == GENERATE_STAGE), None)
    if stage is None:
        why = f": {task.no_imports}" if task.no_imports else ""
        raise ConfigError(f"{exp.path}: task {exp.task!r} has no generation stage to export{why}")
    models = list(exp.models) or [imported_model(EXPORT_MODEL)]
    prompts: dict[str, Prompt] = {}
    with tempfile.TemporaryDirectory(prefix="dialectbias-export-") as tmp, \
            Store.open(Path(tmp) / "export.sqlite") as store:
        store.save_items(task.load_items())
        token = importing.set(True)  # a model known by its imports gets every request built
        try:
            for model in models:
                seen: set[str] = set()
                for spec in stage.build(store, model):
                    if isinstance(spec, Skipped):
                        continue
                    keys = _keys(spec, task)
                    pid = sample_id(spec.item_id, spec.variant, keys)
                    if pid in seen:
                        raise ConfigError(f"{exp.path}: task {exp.task!r} builds several requests for {pid!r} "
                                          "that its request keys do not tell apart: they cannot be exported")
                    seen.add(pid)
                    prompt = prompts.get(pid)
                    if prompt is None:
                        prompt = prompts[pid] = Prompt(pid, spec.item_id, spec.variant, keys,
                                                       [_message(m) for m in spec.messages], dict(spec.params),
                                                       spec.template)
                    elif [_message(m) for m in spec.messages] != prompt.messages:
                        raise ConfigError(f"{exp.path}: models {', '.join(prompt.request_ids)} and {model.id} "
                                          f"get different prompts for {pid!r}: export an experiment listing "
                                          "one of them")
                    if exp.models:
                        prompt.request_ids[model.id] = spec.request_id()
        finally:
            importing.reset(token)
    return list(prompts.values())
