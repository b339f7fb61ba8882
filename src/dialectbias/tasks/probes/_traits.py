"""Traits and writer labels of the association probe (SPEC §4 P4; German paper §3.1, App. D.1/D.2): the
adjective and concept word lists of each trait pole, the writer labels of the naming setting, and
their YAML files (the package's `resources/` or a user file)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dialectbias._yaml import load_yaml
from dialectbias.errors import DataError, packaged_or_user_text, validation_problems

#: Adjectives sampled from each pole per prompt (German paper §3.3: 10 = 5 + 5).
ADJECTIVES_PER_POLE = 5

_KEY = r"^[a-z][a-z0-9_]*$"
_RESERVED = {"a", "b", "none", "both", "writer", "writer a", "writer b"}
_BAD_WORD_CHARS = re.compile(r"[:,\n\r]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")


def _norm(text: str) -> str:
    """Matching key: NFKC, no zero-width characters, ASCII hyphens, single spaces, casefolded."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub("[\u200b\u200c\u200d\u2060\ufeff]", "", text)
    text = _DASHES.sub("-", text)
    return " ".join(text.split()).casefold()


class Pole(BaseModel):
    """One pole of a trait: its label, association adjectives and decision concepts."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1)
    adjectives: list[str] = Field(min_length=ADJECTIVES_PER_POLE)
    concepts: list[str] = Field(min_length=1)

    @field_validator("label")
    @classmethod
    def _label(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("label is empty")
        return value

    @field_validator("adjectives")
    @classmethod
    def _adjectives(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        seen: dict[str, int] = {}
        for i, word in enumerate(value):
            word = word.strip()
            if not word or _BAD_WORD_CHARS.search(word):
                raise ValueError(f"item {i} ({word!r}): an adjective must be non-empty and contain no ':', "
                                 "',' or line break (they would break the prompt or its parsing)")
            key = _norm(word)
            if key in _RESERVED:
                raise ValueError(f"item {i} ({word!r}): reserved word, it reads as a writer answer")
            if key in seen:
                raise ValueError(f"item {i} ({word!r}): duplicate of item {seen[key]}")
            seen[key] = i
            out.append(word)
        return out

    @field_validator("concepts")
    @classmethod
    def _concepts(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        seen: dict[str, int] = {}
        for i, concept in enumerate(value):
            concept = concept.strip()
            if not concept or "\n" in concept:
                raise ValueError(f"item {i} ({concept!r}): a concept must be non-empty and on one line")
            key = _norm(concept)
            if key in seen:
                raise ValueError(f"item {i} ({concept!r}): duplicate of item {seen[key]}")
            seen[key] = i
            out.append(concept)
        return out


class Trait(BaseModel):
    """A stereotype trait with explicit poles (SPEC §4 P4 "Traits"; German paper §3.1).

    `trait` is the pole perception studies attach to dialect speakers (e.g. *uneducated*, *friendly*),
    `opposite` the one attached to standard-language speakers. A positive bias always means the
    dialect writer received the `trait` pole.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=_KEY)
    trait: Pole
    opposite: Pole

    @model_validator(mode="after")
    def _poles_disjoint(self) -> Trait:
        for field in ("adjectives", "concepts"):
            ours = {_norm(w): w for w in getattr(self.trait, field)}
            shared = [w for w in getattr(self.opposite, field) if _norm(w) in ours]
            if shared:
                raise ValueError(f"{field} on both poles: {', '.join(shared)}")
        return self


class WriterLabels(BaseModel):
    """Naming-setting writer descriptions for one language (SPEC §4 P4; German paper §3.2)."""

    model_config = ConfigDict(extra="forbid")

    standard: str = Field(min_length=1)
    dialects: dict[str, str] = Field(min_length=1)
    codes: dict[str, str] = Field(default_factory=dict, description="dataset code -> dialect key")

    @field_validator("dialects")
    @classmethod
    def _dialect_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key, label in value.items():
            if not re.match(_KEY, key):
                raise ValueError(f"dialect key {key!r} must be lowercase ascii (a-z, 0-9, _)")
            if not label.strip():
                raise ValueError(f"dialect {key!r} has an empty label")
        return value

    @model_validator(mode="after")
    def _codes_known(self) -> WriterLabels:
        unknown = [f"{code} -> {key}" for code, key in self.codes.items() if key not in self.dialects]
        if unknown:
            raise ValueError(f"codes point to unknown dialect keys: {', '.join(unknown)}")
        return self

    def dialect_label(self, dialect: str) -> str:
        """Label for a dialect given by key ("low_german"), code ("nds") or name ("Low German")."""
        key = _norm(dialect).replace("-", "_").replace(" ", "_")
        key = self.codes.get(key, key)
        if key not in self.dialects:
            raise KeyError(f"unknown dialect {dialect!r}; known: {', '.join(sorted(self.dialects))}")
        return self.dialects[key]


def _read_yaml(path: str | Path | None, default_name: str) -> tuple[str, Any]:
    """Return (source description, parsed YAML) for a user file or the packaged default."""
    source, text = packaged_or_user_text(path, default_name, DataError)
    return source, load_yaml(text, source, DataError)[0]


def packaged_traits_name(language: str | None) -> str:
    """The packaged traits file for a language: `traits_<language>.yaml` when the package has one (e.g.
    `traits_bn.yaml`, concepts written for Bangladesh), else `traits.yaml` (the German study's lists)."""
    from importlib import resources

    if language and re.match(_KEY, language):
        name = f"traits_{language}.yaml"
        if (resources.files("dialectbias") / "resources" / name).is_file():
            return name
    return "traits.yaml"


def load_traits(path: str | Path | None = None, language: str | None = None) -> dict[str, Trait]:
    """Load trait definitions: a user YAML file, else the packaged file for `language`
    (`packaged_traits_name`: `traits_bn.yaml` for Bengali, `traits.yaml` otherwise).

    Shape: ``<name>: {trait: {label, adjectives, concepts}, opposite: {label, adjectives, concepts}}``.
    Raises `DataError` naming the file and the key at fault.
    """
    source, data = _read_yaml(path, packaged_traits_name(language) if path is None else "traits.yaml")
    if not isinstance(data, dict) or not data:
        raise DataError(f"{source}: expected a mapping of trait name -> {{trait: ..., opposite: ...}}")
    traits: dict[str, Trait] = {}
    problems: list[str] = []
    for key, entry in data.items():
        key = str(key)
        if not isinstance(entry, dict):
            problems.append(f"  - {key}: expected a mapping with keys 'trait' and 'opposite'")
            continue
        if "name" in entry:
            problems.append(f"  - {key}.name: unknown key (the mapping key is the trait name)")
            continue
        try:
            traits[key] = Trait.model_validate({"name": key, **entry})
        except ValidationError as exc:
            problems += validation_problems(exc, key)
    if problems:
        raise DataError("\n".join([f"{source}: invalid traits file", *problems]))
    return traits


def load_writer_labels(path: str | Path | None = None) -> dict[str, WriterLabels]:
    """Load naming-setting writer labels keyed by language code (packaged `writer_labels.yaml` by default).

    Shape: ``<lang>: {standard: str, dialects: {<key>: str}, codes: {<code>: <key>}}``.
    Raises `DataError` naming the file and the key at fault.
    """
    source, data = _read_yaml(path, "writer_labels.yaml")
    if not isinstance(data, dict) or not data:
        raise DataError(f"{source}: expected a mapping of language code -> {{standard: ..., dialects: ...}}")
    labels: dict[str, WriterLabels] = {}
    problems: list[str] = []
    for key, entry in data.items():
        key = str(key)
        try:
            labels[key] = WriterLabels.model_validate(entry)
        except ValidationError as exc:
            problems += validation_problems(exc, key)
    if problems:
        raise DataError("\n".join([f"{source}: invalid writer labels file", *problems]))
    return labels
