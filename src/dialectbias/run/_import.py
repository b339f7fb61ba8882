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
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dialectbias.config import Experiment
from dialectbias.data import read_jsonl
from dialectbias.errors import ConfigError, DataError
from dialectbias.providers import ModelConfig
from dialectbias.run._specs import RequestSpec
from dialectbias.run._stage import Skipped, StagedTask
from dialectbias.store import PARTS_KEY, RunLock, Store, claim_store, dumps

GENERATE_STAGE = "generate"
MAX_REPORTED_PROBLEMS = 20


class GenerationRecord(BaseModel):
    """One line of an import file."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    item_id: str = Field(min_length=1)
    variant: str = Field(min_length=1)
    model: str = Field(min_length=1, description="a model id of the experiment (any id when it lists no models)")
    strategy: str | None = Field(default=None, description="the prompting strategy, for tasks that have several "
                                 "(vqa, caption: zero_shot, few_shot, cot)")
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


IMPORTED_PROVIDER = "imported"
#: True while `import_generations` builds requests: a task then builds every request of a model known only by
#: its imports; at run time it builds only those with a stored result (such a model cannot be called)
importing: ContextVar[bool] = ContextVar("importing", default=False)


def imported_model(model_id: str) -> ModelConfig:
    """The model config of a model known only by its imported generations (an experiment without `models:`):
    its requests are built like any model's, and it is never called."""
    return ModelConfig(id=model_id, provider=IMPORTED_PROVIDER, model=model_id)


def imported_model_ids(exp: Experiment) -> list[str]:
    """Ids of the models whose generations were imported into the experiment's store and that the
    experiment does not list (empty when the store does not exist yet)."""
    if not exp.store_path.is_file():
        return []
    listed = {m.id for m in exp.all_models()}
    with Store.open(exp.store_path, create=False) as store:
        rows = store.query("SELECT DISTINCT model_id FROM requests WHERE stage = ? AND "
                           "json_extract(meta, '$.imported_from') IS NOT NULL ORDER BY model_id", (GENERATE_STAGE,))
    return [r[0] for r in rows if r[0] not in listed]


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


def import_generations(exp: Experiment, task: StagedTask, path: str | Path, *,
                       take_over: bool = False) -> GenerationImport:
    """Store the outputs of a JSONL file ({item_id, variant, model, output, optional strategy, finish_reason,
    tokens_in, tokens_out, latency_s, metadata}) as generations of the experiment, all or nothing.

    `strategy` picks the request among a task's prompting strategies (vqa, caption); an experiment without
    `models:` takes any model id (`imported_model`).

    Re-importing the same file is a no-op. Raises DataError naming the file and line for unknown
    models/items/variants, and naming both sides when an output differs from a stored one.
    """
    path = Path(path).expanduser().resolve()
    stage = next((s for s in task.stages() if s.name == GENERATE_STAGE), None)
    if stage is None:
        raise ConfigError(f"{exp.path}: task {exp.task!r} has no generation stage to import into")
    models = {m.id: m for m in stage.models}
    records = list(_read(path))
    if not exp.models:  # every generation is imported: a model is known by its id alone
        models.update({rec.model: imported_model(rec.model) for _, rec in records if rec.model not in models})
    summary = GenerationImport(lines=len(records))
    problems: list[str] = []
    for line, rec in records:
        if rec.model not in models:
            problems.append(f"{path}:{line}: model {rec.model!r} is not a model of {exp.path.name} "
                            f"(models: {', '.join(models)})")
    _raise(path, problems)

    with RunLock(exp.store_path, "import-generations"), Store.open(exp.store_path) as store:
        claim_store(store, exp.name, exp.path, take_over=take_over)  # one store, one experiment
        store.save_experiment(exp.name, exp.task, exp.model_dump(mode="json"))
        store.save_items(task.load_items())
        items = {item.id: set(item.variants) for item in store.iter_items()}
        wanted: dict[str, set[tuple[str, str, str | None]]] = {}
        for _, rec in records:
            wanted.setdefault(rec.model, set()).add((rec.item_id, rec.variant, rec.strategy))
        specs: dict[tuple[str, str, str, str | None], RequestSpec] = {}
        strategies: set[str] = set()  # the strategies the task's requests carry (none: a task without them)
        token = importing.set(True)
        try:
            built = {model_id: list(stage.build(store, models[model_id])) for model_id in wanted}
        finally:
            importing.reset(token)
        for model_id, keys in wanted.items():
            for spec in built[model_id]:
                if isinstance(spec, Skipped):
                    continue
                strategy = spec.meta.get("strategy")
                if strategy is not None:
                    strategies.add(strategy)
                if (spec.item_id, spec.variant, strategy) in keys:
                    specs[(model_id, spec.item_id, spec.variant, strategy)] = spec

        seen: dict[tuple[str, str, str, str | None], tuple[int, str]] = {}
        todo: list[tuple[int, GenerationRecord, RequestSpec, str | None]] = []
        for line, rec in records:
            where = f"{path}:{line}"
            key = (rec.model, rec.item_id, rec.variant, rec.strategy)
            label = "/".join(k for k in key if k is not None)
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
                if strategies and rec.strategy not in strategies:
                    problems.append(f"{where}: {label}: 'strategy' must be one of {', '.join(sorted(strategies))} "
                                    f"(got {rec.strategy!r})")
                elif rec.strategy is not None and not strategies and rec.item_id in items:
                    problems.append(f"{where}: task {exp.task!r} has no prompting strategies: leave 'strategy' out")
                elif rec.item_id not in items:
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
