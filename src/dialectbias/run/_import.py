"""Generate once, judge later: store model outputs produced elsewhere as the task's generations.

Each imported line becomes the exact generate-stage request `dialectbias run` would build for that
(model, item, variant) — same request id — plus an `ok` result, so a later run finds it done and only
judges. Provenance: `requests.meta.imported_from` (the file), `results.cache_hit = 0`, and the file's
`finish_reason`/token counts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dialectbias.config import Experiment
from dialectbias.data import read_jsonl
from dialectbias.errors import ConfigError, DataError
from dialectbias.run._specs import RequestSpec
from dialectbias.run._stage import Skipped, StagedTask
from dialectbias.store import PARTS_KEY, RunLock, Store, dumps

GENERATE_STAGE = "generate"
MAX_REPORTED_PROBLEMS = 20


class GenerationRecord(BaseModel):
    """One line of an import file."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    item_id: str = Field(min_length=1)
    variant: str = Field(min_length=1)
    model: str = Field(min_length=1, description="a model id of the experiment")
    output: str
    finish_reason: str | None = None
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    latency_s: float = Field(default=0.0, ge=0)
    metadata: dict[str, Any] = Field(default_factory=dict, description="kept in requests.meta")

    @field_validator("item_id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("output")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("empty output (a run would retry it; leave the line out instead)")
        return value


@dataclass
class GenerationImport:
    """What `import_generations` did: lines read, results stored, lines already stored identically."""

    lines: int = 0
    imported: int = 0
    unchanged: int = 0


def _read(path: Path) -> Iterator[tuple[int, GenerationRecord]]:
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    for lineno, row in read_jsonl(path):
        try:
            yield lineno, GenerationRecord.model_validate(row)
        except ValidationError as exc:
            details = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'line'}: "
                f"{'unknown key' if e['type'] == 'extra_forbidden' else e['msg']}" for e in exc.errors())
            raise DataError(f"{path}:{lineno}: {details}") from None


def _short(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


def import_generations(exp: Experiment, task: StagedTask, path: str | Path) -> GenerationImport:
    """Store the outputs of a JSONL file ({item_id, variant, model, output, optional finish_reason,
    tokens_in, tokens_out, latency_s, metadata}) as generations of the experiment, all or nothing.

    Re-importing the same file is a no-op. Raises DataError naming the file and line for unknown
    models/items/variants, and naming both sides when an output differs from a stored one.
    """
    path = Path(path).expanduser().resolve()
    stage = next((s for s in task.stages() if s.name == GENERATE_STAGE), None)
    if stage is None:
        raise ConfigError(f"{exp.path}: task {exp.task!r} has no generation stage to import into")
    models = {m.id: m for m in stage.models}
    records = list(_read(path))
    summary = GenerationImport(lines=len(records))
    problems: list[str] = []
    for line, rec in records:
        if rec.model not in models:
            problems.append(f"{path}:{line}: model {rec.model!r} is not a model of {exp.path.name} "
                            f"(models: {', '.join(models)})")
    _raise(path, problems)

    with RunLock(exp.store_path, "import-generations"), Store.open(exp.store_path) as store:
        store.save_experiment(exp.name, exp.task, exp.model_dump(mode="json"))
        store.save_items(task.load_items())
        items = {item.id: set(item.variants) for item in store.iter_items()}
        wanted: dict[str, set[tuple[str, str]]] = {}
        for _, rec in records:
            wanted.setdefault(rec.model, set()).add((rec.item_id, rec.variant))
        specs: dict[tuple[str, str, str], RequestSpec] = {}
        for model_id, keys in wanted.items():
            for spec in stage.build(store, models[model_id]):
                if isinstance(spec, Skipped):
                    continue
                if (spec.item_id, spec.variant) in keys:
                    specs[(model_id, spec.item_id, spec.variant)] = spec

        seen: dict[tuple[str, str, str], tuple[int, str]] = {}
        todo: list[tuple[int, GenerationRecord, RequestSpec, str | None]] = []
        for line, rec in records:
            where = f"{path}:{line}"
            key = (rec.model, rec.item_id, rec.variant)
            label = "/".join(key)
            if key in seen:
                first_line, first_output = seen[key]
                if first_output != rec.output:
                    problems.append(f"{where}: {label}: output differs from line {first_line} of the same "
                                    f"file ({_short(rec.output)} vs {_short(first_output)})")
                else:
                    summary.unchanged += 1
                continue
            seen[key] = (line, rec.output)
            spec = specs.get(key)
            if spec is None:
                if rec.item_id not in items:
                    problems.append(f"{where}: item {rec.item_id!r} is not in the experiment's data "
                                    f"({exp.data})")
                elif rec.variant not in items[rec.item_id]:
                    problems.append(f"{where}: item {rec.item_id!r} has no variant {rec.variant!r} in the "
                                    f"experiment (variants: {', '.join(sorted(items[rec.item_id]))})")
                else:
                    problems.append(f"{where}: {label}: the task builds no generation request for it "
                                    "(empty question text?)")
                continue
            request_id = spec.request_id()
            stored = store.query("SELECT s.status, s.output, q.meta FROM requests q LEFT JOIN results s "
                                 "USING (request_id) WHERE q.request_id = ?", (request_id,))
            existing_meta = stored[0]["meta"] if stored else None
            if stored and stored[0]["status"] == "ok":
                if stored[0]["output"] == rec.output:
                    summary.unchanged += 1
                    continue
                origin = json.loads(stored[0]["meta"] or "{}").get("imported_from")
                source = f"imported from {origin}" if origin else "generated by `dialectbias run`"
                problems.append(f"{where}: {label}: output {_short(rec.output)} conflicts with the stored "
                                f"generation {request_id} ({source}) in {store.path}: "
                                f"{_short(stored[0]['output'])}")
                continue
            todo.append((line, rec, spec, existing_meta))
        _raise(path, problems)

        now = time.time()
        with store.transaction():
            for _, rec, spec, existing_meta in todo:
                provenance = {"imported_from": str(path), **({"import_metadata": rec.metadata}
                                                               if rec.metadata else {})}
                row = spec.to_row()
                store.add_content(row.pop(PARTS_KEY))
                row["meta"] = dumps({**spec.meta, **provenance})
                cols = list(row)
                store.conn.execute(f"INSERT OR IGNORE INTO requests ({','.join(cols)}) "
                                   f"VALUES ({','.join('?' * len(cols))})", tuple(row.values()))
                if existing_meta is not None:  # a request an earlier run left without a good result
                    meta = dumps({**json.loads(existing_meta), **provenance})
                    store.conn.execute("UPDATE requests SET meta = ? WHERE request_id = ?",
                                       (meta, row["request_id"]))
                store.conn.execute(
                    "INSERT OR REPLACE INTO results (request_id, status, output, finish_reason, tokens_in, "
                    "tokens_out, latency_s, cache_hit, retries, error, completed_at) "
                    "VALUES (?, 'ok', ?, ?, ?, ?, ?, 0, 0, NULL, ?)",
                    (row["request_id"], rec.output, rec.finish_reason, rec.tokens_in, rec.tokens_out,
                     rec.latency_s, now))
                summary.imported += 1
    return summary


def _raise(path: Path, problems: list[str]) -> None:
    if not problems:
        return
    shown = problems[:MAX_REPORTED_PROBLEMS]
    more = len(problems) - len(shown)
    if len(problems) == 1:
        raise DataError(problems[0] + "; nothing was imported")
    raise DataError("\n".join([f"{path}: {len(problems)} problem(s); nothing was imported", *shown,
                               *([f"… and {more} more"] if more else [])]))
