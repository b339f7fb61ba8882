"""The decision probe (German paper §3.2): choices between two writers' profiles."""

from __future__ import annotations

from dialectbias.tasks.probes.decision._task import EXTRACTOR_ROLE, RUBRIC, DecisionOptions, DecisionTask

__all__ = ["EXTRACTOR_ROLE", "RUBRIC", "DecisionOptions", "DecisionTask"]
