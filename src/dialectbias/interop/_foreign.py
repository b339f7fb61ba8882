"""Answers from other harnesses as import records: inspect_ai logs and lm-evaluation-harness samples.

Each sample leads back to one generation request through what `dialectbias export` wrote: the sample's
metadata (inspect) or doc (lm-eval) holds `item_id`, `variant` and `request_keys`; the sample id
(`item|variant|key=value…`, `dialectbias.interop._ids`) says the same and must agree with them. The records
then go through `dialectbias.run.import_generations` exactly as lines of our own JSONL, so every guarantee of
an import holds (all or nothing, re-import a no-op, a differing output an error).

A sample with an error or without output is not an answer: the import refuses the whole log, counting them
and naming the first, rather than scoring the rest as if the model had answered everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from dialectbias.data import read_jsonl
from dialectbias.errors import DataError
from dialectbias.interop._ids import parse_sample_id
from dialectbias.interop._inspect_log import read_inspect_log
from dialectbias.run import GenerationRecord

Harness = Literal["dialectbias", "inspect", "lm-eval"]
HARNESSES: tuple[str, ...] = ("dialectbias", "inspect", "lm-eval")
MAX_SHOWN = 5
#: inspect_ai's stop reasons as the finish reasons our providers store
_STOP_REASONS = {"stop": "stop", "max_tokens": "length", "model_length": "length", "content_filter": "content_filter",
                 "tool_calls": "tool_calls"}

Records = list[tuple[str, GenerationRecord]]


def _coordinates(sample_id: str, fields: Mapping[str, Any], where: str) -> tuple[str, str, dict[str, Any]]:
    """(item_id, variant, request keys) of a sample: from the exported metadata/doc when it has them (checked
    against the id), else from the id."""
    item_id, variant, keys = parse_sample_id(sample_id, where)
    if "item_id" in fields or "variant" in fields:
        given = (str(fields.get("item_id")), str(fields.get("variant")))
        if given != (item_id, variant):
            raise DataError(f"{where}: sample id {sample_id!r} says item {item_id!r} variant {variant!r}, its "
                            f"metadata item {given[0]!r} variant {given[1]!r}: was the id or the data edited?")
        meta_keys = fields.get("request_keys")
        if isinstance(meta_keys, dict) and {k: str(v) for k, v in meta_keys.items()} != keys:
            raise DataError(f"{where}: sample id {sample_id!r} and its metadata request_keys {meta_keys} differ")
        if isinstance(meta_keys, dict):
            return item_id, variant, dict(meta_keys)
    return item_id, variant, keys


def _record(where: str, item_id: str, variant: str, keys: dict[str, Any], model: str, output: str,
            extra: dict[str, Any]) -> GenerationRecord:
    try:
        return GenerationRecord.model_validate({"item_id": item_id, "variant": variant, "model": model,
                                                "output": output, **extra, **keys})
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'sample'}: {e['msg']}" for e in exc.errors())
        raise DataError(f"{where}: {details}") from None


def _refuse(path: Path, bad: list[str], total: int) -> None:
    if not bad:
        return
    shown = bad[:MAX_SHOWN]
    more = f"\n… and {len(bad) - len(shown)} more" if len(bad) > len(shown) else ""
    raise DataError("\n".join([f"{path}: {len(bad)} of {total} sample(s) have an error or no output: they are "
                               "not answers; rerun them (or leave them out of the log) and import again; nothing "
                               "was imported", *shown]) + more)


def inspect_records(path: Path, model: str) -> Records:
    """The records of an inspect_ai log (`.eval` or `.json`), one per sample × epoch."""
    header, samples = read_inspect_log(path)
    if header.status in ("started", "cancelled") and not samples:
        raise DataError(f"{path}: the eval's status is {header.status!r} and it holds no sample")
    records: Records = []
    bad: list[str] = []
    for where, s in samples:
        where = f"{where} (id {s.id!r})"
        text = s.output.text() if s.output is not None else ""
        error = (s.error.message if s.error is not None else "") or (s.output.error if s.output else "") or ""
        if error.strip() or s.error is not None or s.output is None or not text.strip():
            bad.append(f"{where}: {error.strip().splitlines()[0] if error.strip() else 'no output'}")
            continue
        item_id, variant, keys = _coordinates(str(s.id), s.metadata, where)
        choice = s.output.choices[0] if s.output.choices else None
        usage = s.output.usage
        extra: dict[str, Any] = {
            "finish_reason": _STOP_REASONS.get(choice.stop_reason or "", choice.stop_reason) if choice else None,
            "tokens_in": usage.input_tokens if usage else 0, "tokens_out": usage.output_tokens if usage else 0,
            "latency_s": s.output.time or 0.0,
            "metadata": {"harness": "inspect_ai", "sample_id": str(s.id), "epoch": s.epoch,
                         "harness_model": s.output.model or header.eval.get("model"),
                         "harness_task": header.eval.get("task"), "eval_id": header.eval.get("eval_id")}}
        records.append((where, _record(where, item_id, variant, keys, model, text, extra)))
    _refuse(path, bad, len(samples))
    if not records:
        raise DataError(f"{path}: the log holds no sample")
    return records


def lm_eval_records(path: Path, model: str) -> Records:
    """The records of lm-evaluation-harness `--log_samples` output (samples_<task>_<date>.jsonl): one per
    line; the answer is the raw response (`resps`), not a filter's extraction."""
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    records: Records = []
    bad: list[str] = []
    total = 0
    for lineno, row in read_jsonl(path):
        total += 1
        where = f"{path}:{lineno}"
        doc = row.get("doc")
        if not isinstance(doc, dict) or "resps" not in row:
            raise DataError(f"{where}: not an lm-eval sample (no `doc` or `resps`): give the "
                            "samples_<task>_<date>.jsonl that `lm_eval --log_samples` writes")
        sample_id = doc.get("id")
        if not isinstance(sample_id, str):
            raise DataError(f"{where}: the doc has no `id`: the task was not written by "
                            "`dialectbias export --lm-eval-task`")
        where = f"{where} (doc_id {row.get('doc_id')}, id {sample_id!r})"
        texts = {t for resp in row["resps"] for t in (resp if isinstance(resp, list) else [resp])
                 if isinstance(t, str)}
        if not texts or not any(t.strip() for t in texts):
            bad.append(f"{where}: no output")
            continue
        if len(texts) > 1:
            raise DataError(f"{where}: {len(texts)} different responses (repeats): import one per request")
        item_id, variant, keys = _coordinates(sample_id, doc, where)
        extra = {"metadata": {"harness": "lm-eval", "doc_id": row.get("doc_id"), "sample_id": sample_id,
                              "filter": row.get("filter"), "doc_hash": row.get("doc_hash")}}
        records.append((where, _record(where, item_id, variant, keys, model, texts.pop(), extra)))
    _refuse(path, bad, total)
    if not records:
        raise DataError(f"{path}: no sample")
    return records


def foreign_records(harness: str, path: Path, model: str | None) -> Records | None:
    """The records of another harness's output (None for our own JSONL, read by the import itself).
    DataError for an unknown harness or a missing --model."""
    if harness == "dialectbias":
        if model is not None:
            raise DataError("--model is for --from inspect / lm-eval: our own JSONL names the model on each line")
        return None
    if harness not in HARNESSES:
        raise DataError(f"--from {harness!r}: one of {', '.join(HARNESSES)}")
    if not model:
        raise DataError(f"--from {harness} needs --model ID: the model id the answers are stored under (a model "
                        "of the experiment, or any id when it lists no models)")
    path = path.expanduser().resolve()
    return inspect_records(path, model) if harness == "inspect" else lm_eval_records(path, model)


__all__ = ["HARNESSES", "foreign_records", "inspect_records", "lm_eval_records"]
