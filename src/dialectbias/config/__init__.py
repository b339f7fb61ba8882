"""Experiment files: YAML validated by pydantic, with errors that name the file and key."""

from dialectbias.config._departures import Departure, DepartureSetting, declared_departures, paper_options
from dialectbias.config._experiment import Experiment, ReviewSettings, load_experiment

__all__ = ["Departure", "DepartureSetting", "Experiment", "ReviewSettings", "declared_departures", "load_experiment",
           "paper_options"]
