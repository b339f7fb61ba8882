"""The run machinery: request table, local executor, progress and summaries."""

from dialectbias.run._import import GenerationImport, GenerationRecord, import_generations
from dialectbias.run._runner import run_experiment
from dialectbias.run._specs import RequestSpec, content_hash
from dialectbias.run._stage import Outcome, Skipped, Stage
from dialectbias.run._summary import RunSummary, StageStats

__all__ = ["GenerationImport", "GenerationRecord", "Outcome", "RequestSpec", "RunSummary", "Skipped", "Stage",
           "StageStats", "content_hash", "import_generations", "run_experiment"]
