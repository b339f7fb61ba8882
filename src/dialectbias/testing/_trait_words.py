"""The trait adjectives the association responder's stand-in stereotype follows, read from the packaged
`resources/traits.yaml` (the file the association task reads by default) without the task's code."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from dialectbias._yaml import load_yaml
from dialectbias.errors import DataError, packaged_or_user_text

TRAITS_FILE = "traits.yaml"


def _adjectives(pole: dict[str, Any]) -> frozenset[str]:
    return frozenset(str(word).strip().lower() for word in pole["adjectives"])


@lru_cache(maxsize=1)
def trait_poles() -> list[tuple[frozenset[str], frozenset[str]]]:
    """(trait-pole adjectives, opposite-pole adjectives) of each packaged trait, lowercased."""
    source, text = packaged_or_user_text(None, TRAITS_FILE, DataError)
    data: dict[str, dict[str, Any]] = load_yaml(text, source, DataError)[0]
    return [(_adjectives(entry["trait"]), _adjectives(entry["opposite"])) for entry in data.values()]


__all__ = ["trait_poles"]
