"""Departures from the papers, declared where they live, and the `replicate: paper` switch (issue 21 item 9).

Where the toolkit's default differs from a paper's procedure or its released code, the task's options class
declares the option once, with the paper's value, the section it comes from and why our default differs:

    class DecisionOptions(ProbeOptions):
        PAPER: ClassVar[Mapping[str, Departure]] = {
            "max_tokens": Departure(350, "German paper App. A.3", "two profiles and a decision need more room"),
        }

A subclass declares only its own; `declared_departures` merges them along the class hierarchy (a subclass's
entry replaces its parent's for the same key). `replicate: paper` in the experiment file sets every declared
option to its paper value (`Experiment.validate_options`); an option the file sets to another value is a
config error naming the key and its line. Which value each departure took ("paper", "toolkit default",
"own value") is `departure_settings`: the report's table, `dialectbias export`'s `departures` table, the run's
stored metadata and the compile fingerprints all read it. `docs/departures.md` lists every departure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Replicate = Literal["toolkit", "paper"]
Used = Literal["paper", "toolkit default", "own value"]


@dataclass(frozen=True)
class Departure:
    """One option whose default departs from a paper: `paper` is the value that reproduces the paper,
    `section` where the paper (or PROCEDURES.md for its released code) says so, `why` one line on our default."""

    paper: Any
    section: str
    why: str


def declared_departures(options: type[BaseModel]) -> dict[str, Departure]:
    """Every departure an options class declares (`PAPER` on it and on its bases), key -> declaration."""
    merged: dict[str, Departure] = {}
    for cls in reversed(options.__mro__):
        merged.update(vars(cls).get("PAPER") or {})
    return merged


class DepartureSetting(BaseModel):
    """What one departure was set to in an experiment: a row of the report's `departures.csv`."""

    model_config = ConfigDict(frozen=True)

    option: str
    value: Any
    paper_value: Any
    used: Used
    section: str
    why: str


def _jsonable(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def departure_settings(options: BaseModel, explicit: Mapping[str, Any]) -> list[DepartureSetting]:
    """One row per declared departure of `options` (validated): its value, and whether that is the paper's,
    our default's, or a value of the file's own (`explicit`: the keys the file set)."""
    rows = []
    for key, dep in declared_departures(type(options)).items():
        value = _jsonable(getattr(options, key))
        used: Used = "paper" if value == dep.paper else "own value" if key in explicit else "toolkit default"
        rows.append(DepartureSetting(option=key, value=value, paper_value=dep.paper, used=used,
                                     section=dep.section, why=dep.why))
    return rows


def paper_options(options: type[BaseModel], given: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`given` (the file's `options:`) with every declared departure the file leaves out set to the paper's
    value, and the keys the file sets to something else than the paper's value (each a config error)."""
    out = dict(given)
    conflicts = []
    for key, dep in declared_departures(options).items():
        if key not in given:
            out[key] = dep.paper
        elif not _same(options, key, given[key], dep.paper):
            conflicts.append(key)
    return out, conflicts


def _same(options: type[BaseModel], key: str, value: Any, paper: Any) -> bool:
    """Whether the file's `value` for `key` is the paper's, compared as the options model reads both."""
    if value == paper:
        return True
    field = options.model_fields.get(key)
    if field is None or field.annotation is None:
        return False
    from pydantic import TypeAdapter, ValidationError

    adapter: TypeAdapter[Any] = TypeAdapter(field.annotation)
    try:
        return bool(_jsonable(adapter.validate_python(value)) == _jsonable(adapter.validate_python(paper)))
    except ValidationError:
        return False


__all__ = ["Departure", "DepartureSetting", "Replicate", "declared_departures", "departure_settings",
           "paper_options"]
