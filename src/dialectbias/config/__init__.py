"""Experiment files: YAML validated by pydantic, with errors that name the file and key."""

from dialectbias.config._experiment import Experiment, ReviewSettings, load_experiment

__all__ = ["Experiment", "ReviewSettings", "load_experiment"]
