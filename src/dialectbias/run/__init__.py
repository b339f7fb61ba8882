"""The run machinery: request table, executors, post-call handling, progress and summaries."""

from dialectbias.run._executors import Executor, check_executor, executor_names, get_executor, register_executor
from dialectbias.run._import import (
    IMPORTED_PROVIDER,
    RECORD_KEYS,
    GenerationImport,
    GenerationRecord,
    ImportTarget,
    import_generations,
    imported_model,
    imported_model_ids,
    importing,
)
from dialectbias.run._postcall import Call, Done, NeedsReask, PostCall, cached_call, chat_request
from dialectbias.run._runner import run_task
from dialectbias.run._specs import RequestSpec, content_hash, draw_seed
from dialectbias.run._stage import Outcome, Skipped, Stage, StagedTask, StageYield, Write
from dialectbias.run._status import read_status
from dialectbias.run._summary import RETRY_KINDS, RunSummary, StageStats, retry_hints

__all__ = [
    "IMPORTED_PROVIDER",
    "RECORD_KEYS",
    "RETRY_KINDS",
    "Call",
    "Done",
    "Executor",
    "GenerationImport",
    "GenerationRecord",
    "ImportTarget",
    "NeedsReask",
    "Outcome",
    "PostCall",
    "RequestSpec",
    "RunSummary",
    "Skipped",
    "Stage",
    "StageStats",
    "StageYield",
    "StagedTask",
    "Write",
    "cached_call",
    "chat_request",
    "check_executor",
    "content_hash",
    "draw_seed",
    "executor_names",
    "get_executor",
    "import_generations",
    "imported_model",
    "imported_model_ids",
    "importing",
    "read_status",
    "register_executor",
    "retry_hints",
    "run_task",
]
