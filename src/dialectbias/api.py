"""The Python API: what the CLI commands do, callable from notebooks and scripts."""

from dialectbias.config import load_experiment
from dialectbias.run import RunSummary, run_experiment

__all__ = ["RunSummary", "load_experiment", "run_experiment"]
