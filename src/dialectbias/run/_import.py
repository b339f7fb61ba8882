"""Generate once, judge later: store model outputs produced elsewhere as the task's generations.

Each imported line becomes the exact generate-stage request `dialectbias run` would build for that
(model, item, variant) — same request id — plus an `ok` result, so a later run finds it done and only
judges. A task that builds several requests per item × variant (strategies, scenarios, prefixes …) names
the keys that tell them apart (`Task.request_keys`, listed by `dialectbias tasks NAME`): a line gives
those it needs, matched against each request's `meta`. Provenance: `requests.meta.imported_from` (the
file), `results.cache_hit = 0`, and the file's `finish_reason`/token counts.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dialectbias.config import Experiment
from dialectbias.data import read_jsonl
from dialectbias.errors import ConfigError, DataError
from dialectbias.providers import ModelConfig
from dialectbias.run._specs import RequestSpec
from dialectbias.run._stage import Skipped, StagedTask
from dialectbias.store import (
    IMPORTED_FROM,
    ImportedGeneration,
    RunLock,
    Store,
    claim_store,
    models_with_imports,
    save_imported,
    stored_generation,
)

GENERATE_STAGE = "generate"
MAX_REPORTED_PROBLEMS = 20


class GenerationRecord(BaseModel):
    """One line of an import file: these fields, plus the task's request keys (`coordinates`)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    item_id: str = Field(min_length=1)
    variant: str = Field(min_length=1)
    model: str = Field(min_length=1, description="a model id of the experiment (any id when it lists no models)")
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

    @property
    def coordinates(self) -> dict[str, Any]:
        """The line's request keys (every key beyond the fields above), in the line's order."""
        return dict(self.model_extra or {})


class ImportTarget(StagedTask, Protocol):
    """What importing needs of a task beyond running it (`dialectbias.tasks.Task` is one)."""

    @property
    def request_keys(self) -> Mapping[str, str]:
        """key -> description: the request-meta keys a line may give to pick one of an item × variant's requests."""
        ...

    @property
    def no_imports(self) -> str:
        """Why the task takes no imported generations ('' when it does)."""
        ...


#: the keys every import line may have
RECORD_KEYS = tuple(GenerationRecord.model_fields)


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
        ids = models_with_imports(store, GENERATE_STAGE)
    return [i for i in ids if i not in listed]


def _read(path: Path, task_name: str, request_keys: Mapping[str, str]) -> Iterator[tuple[int, GenerationRecord]]:
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    for lineno, row in read_jsonl(path):
        try:
            record = GenerationRecord.model_validate(row)
        except ValidationError as exc:
            details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors())
            raise DataError(f"{path}:{lineno}: {details}") from None
        check_keys(record, f"{path}:{lineno}", task_name, request_keys)
        yield lineno, record


def check_keys(record: GenerationRecord, where: str, task_name: str, request_keys: Mapping[str, str]) -> None:
    """DataError naming `where` when the record gives a key the task does not take, or a key value that is
    neither a string nor an integer."""
    unknown = [k for k in record.coordinates if k not in request_keys]
    if unknown:
        keys = (f"task {task_name!r} also takes {', '.join(request_keys)}" if request_keys
                else f"task {task_name!r} takes no request keys")
        raise DataError(f"{where}: {', '.join(unknown)}: unknown key (keys: "
                        f"{', '.join(RECORD_KEYS)}; {keys}: `dialectbias tasks {task_name}`)")
    bad = [k for k, v in record.coordinates.items() if not isinstance(v, str | int) or isinstance(v, bool)]
    if bad:
        raise DataError(f"{where}: {bad[0]}: a request key's value is a string or an integer "
                        f"(got {record.coordinates[bad[0]]!r})")


def _coordinate(spec: RequestSpec, key: str) -> Any:
    """A request's value of a request key: its `meta` entry (None when it has none)."""
    return spec.meta.get(key)


def _same(given: Any, stored: Any) -> bool:
    """A line's key value against a request's meta value: equal, or equal as text (3 vs "3")."""
    return given == stored or (stored is not None and str(given) == str(stored))


def _values(specs: list[RequestSpec], key: str) -> list[str]:
    return sorted({str(v) for s in specs if (v := _coordinate(s, key)) is not None})


def _no_match(rec: GenerationRecord, candidates: list[RequestSpec]) -> str:
    """Why no request of the line's model × item × variant has the line's key values."""
    for key, value in rec.coordinates.items():
        if not any(_same(value, _coordinate(s, key)) for s in candidates):
            known = _values(candidates, key)
            return (f"{key} {value!r} is not among its requests ({key}: {', '.join(known)})" if known
                    else f"its requests carry no {key!r}: leave it out")
    return "no request has all of these key values together"


def _ambiguity(candidates: list[RequestSpec], request_keys: Mapping[str, str], given: Mapping[str, Any]) -> str:
    """The keys, not given, whose values tell the matching requests apart."""
    missing = [f"{key!r} (one of {', '.join(values)})" for key in request_keys if key not in given
               for values in [_values(candidates, key)] if len(values) > 1]
    return "give " + " and ".join(missing) if missing else "the task's request keys do not tell them apart"


def _short(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


def import_generations(exp: Experiment, task: ImportTarget, path: str | Path, *,
                       take_over: bool = False, records: Sequence[tuple[str, GenerationRecord]] | None = None
                       ) -> GenerationImport:
    """Store the outputs of a JSONL file ({item_id, variant, model, output, optional finish_reason, tokens_in,
    tokens_out, latency_s, metadata, and the task's request keys}) as generations of the experiment, all or
    nothing.

    A line's request keys (`task.request_keys`: strategy, scenario, prefix …) pick one of the requests the
    task builds for its model × item × variant; a line that matches several is an error naming the keys that
    tell them apart. An experiment without `models:` takes any model id (`imported_model`).

    Re-importing the same file is a no-op. Raises DataError naming the file and line for unknown
    models/items/variants/keys, and naming both sides when an output differs from a stored one.

    `records`, when given, are the file's records already read (another harness's log, `dialectbias.interop`),
    each with where it was read ("LOG: sample q1|sylhet"); they are checked against the task's request keys
    and stored exactly as lines of our own JSONL.
    """
    path = Path(path).expanduser().resolve()
    stage = next((s for s in task.stages() if s.name == GENERATE_STAGE), None)
    if stage is None:
        why = f": {task.no_imports}" if task.no_imports else ""
        raise ConfigError(f"{exp.path}: task {exp.task!r} has no generation stage to import into{why}")
    models = {m.id: m for m in stage.models}
    if records is None:
        records = [(f"{path}:{line}", rec) for line, rec in _read(path, exp.task, task.request_keys)]
    else:
        records = list(records)
        for where, rec in records:
            check_keys(rec, where, exp.task, task.request_keys)
    if not exp.models:  # every generation is imported: a model is known by its id alone
        models.update({rec.model: imported_model(rec.model) for _, rec in records if rec.model not in models})
    summary = GenerationImport(lines=len(records))
    problems: list[str] = []
    unknown: dict[str, list[str]] = {}
    for where, rec in records:
        if rec.model not in models:
            unknown.setdefault(rec.model, []).append(where)
    for model_id, wheres in unknown.items():  # once per model: a harness's log has one model throughout
        more = f" (and {len(wheres) - 1} more record(s) of it)" if len(wheres) > 1 else ""
        problems.append(f"{wheres[0]}: model {model_id!r} is not a model of {exp.path.name} "
                        f"(models: {', '.join(models)}){more}")
    _raise(path, problems)

    with RunLock(exp.store_path, "import-generations"), Store.open(exp.store_path) as store:
        claim_store(store, exp.name, exp.path, take_over=take_over)  # one store, one experiment
        store.save_experiment(exp.name, exp.task, exp.model_dump(mode="json"))
        store.save_items(task.load_items())
        items = {item.id: set(item.variants) for item in store.iter_items()}
        wanted = {(rec.model, rec.item_id, rec.variant) for _, rec in records}
        built: dict[tuple[str, str, str], list[RequestSpec]] = {}
        token = importing.set(True)
        try:
            for model_id in sorted({m for m, _, _ in wanted}):
                for spec in stage.build(store, models[model_id]):
                    if not isinstance(spec, Skipped) and (model_id, spec.item_id, spec.variant) in wanted:
                        built.setdefault((model_id, spec.item_id, spec.variant), []).append(spec)
        finally:
            importing.reset(token)

        seen: dict[str, tuple[str, str]] = {}
        todo: list[ImportedGeneration] = []
        for where, rec in records:
            label = "/".join([rec.model, rec.item_id, rec.variant, *map(str, rec.coordinates.values())])
            candidates = built.get((rec.model, rec.item_id, rec.variant), [])
            matches = [s for s in candidates
                       if all(_same(v, _coordinate(s, k)) for k, v in rec.coordinates.items())]
            if len(matches) != 1:
                if rec.item_id not in items:
                    problems.append(f"{where}: item {rec.item_id!r} is not in the experiment's data ({exp.data})")
                elif rec.variant not in items[rec.item_id]:
                    problems.append(f"{where}: item {rec.item_id!r} has no variant {rec.variant!r} in the "
                                    f"experiment (variants: {', '.join(sorted(items[rec.item_id]))})")
                elif not candidates:
                    problems.append(f"{where}: {label}: the task builds no generation request for it "
                                    "(empty question text?)")
                elif not matches:
                    problems.append(f"{where}: {label}: {_no_match(rec, candidates)}")
                else:
                    problems.append(f"{where}: {label}: matches {len(matches)} requests of the task: "
                                    f"{_ambiguity(matches, task.request_keys, rec.coordinates)}")
                continue
            spec = matches[0]
            request_id = spec.request_id()
            if request_id in seen:
                first_where, first_output = seen[request_id]
                if first_output != rec.output:
                    ref = first_where.removeprefix(f"{path}:").strip()
                    problems.append(f"{where}: {label}: output differs from {'line ' if ref.isdigit() else ''}"
                                    f"{ref} of the same file ({_short(rec.output)} vs {_short(first_output)})")
                else:
                    summary.unchanged += 1
                continue
            seen[request_id] = (where, rec.output)
            stored = stored_generation(store, request_id)
            if stored is not None and stored.status == "ok":
                if stored.output == rec.output:
                    summary.unchanged += 1
                    continue
                origin = stored.meta.get(IMPORTED_FROM)
                source = f"imported from {origin}" if origin else "generated by `dialectbias run`"
                problems.append(f"{where}: {label}: output {_short(rec.output)} conflicts with the stored "
                                f"generation {request_id} ({source}) in {store.path}: "
                                f"{_short(stored.output or '')}")
                continue
            provenance = {IMPORTED_FROM: str(path), **({"import_metadata": rec.metadata} if rec.metadata else {})}
            todo.append(ImportedGeneration(spec.to_row(), provenance, rec.output, rec.finish_reason, rec.tokens_in,
                                           rec.tokens_out, rec.latency_s))
        _raise(path, problems)

        save_imported(store, todo, completed_at=time.time())
        summary.imported += len(todo)
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
