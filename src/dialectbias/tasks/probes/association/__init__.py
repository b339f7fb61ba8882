"""The association probe (German paper §3.1): traits matched to writer labels."""

from __future__ import annotations

from dialectbias.tasks.probes.association._task import (
    JSON_INSTRUCTION,
    AssociationOptions,
    AssociationTask,
    json_answer_to_lines,
)

__all__ = ["JSON_INSTRUCTION", "AssociationOptions", "AssociationTask", "json_answer_to_lines"]
