"""The registry of dialect and language names (SPEC §3), extensible per experiment: a leaf module that `data`
(item loading) and `text` (script checks) both read."""

from __future__ import annotations

import difflib
from functools import lru_cache
from importlib import resources
from typing import Any

from dialectbias._yaml import load_yaml
from dialectbias.errors import DialectBiasError

STANDARD = "standard"


@lru_cache(maxsize=1)
def _registry() -> dict[str, Any]:
    """The packaged `dialects.yaml`, read once."""
    text = (resources.files("dialectbias") / "resources" / "dialects.yaml").read_text("utf-8")
    return load_yaml(text, "dialectbias/resources/dialects.yaml (package data)", DialectBiasError)[0]


@lru_cache(maxsize=1)
def _builtin() -> frozenset[str]:
    return frozenset({STANDARD, *_registry().get("languages", []), *control_variants(), *_dialect_languages()})


@lru_cache(maxsize=1)
def control_variants() -> frozenset[str]:
    """Variant names that are controls, not dialects (`noisy`: the noised standard text of SPEC §4 P1)."""
    return frozenset(_registry().get("controls", []))


def known_variants(extra: dict[str, list[str]] | None = None) -> frozenset[str]:
    """`standard`, the registered dialects and languages, and an experiment's own additions."""
    added = {name.lower() for names in (extra or {}).values() for name in names}
    return _builtin() | added


def unknown_variant_message(name: str, known: frozenset[str]) -> str:
    close = difflib.get_close_matches(name.lower(), sorted(known), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (f"unknown variant {name!r} ({hint}add it to the registry with `dialects: {{<language>: [{name}]}}` "
            "in the experiment file)")


def language_of(variant: str, extra: dict[str, list[str]] | None = None) -> str | None:
    """The language code a dialect belongs to (`bavarian` → `de`), from an experiment's `dialects:`
    additions or the registry; None for `standard`, a bare language name or an unknown variant."""
    name = variant.lower()
    for lang, names in (extra or {}).items():
        if name in {n.lower() for n in names}:
            return lang
    return _dialect_languages().get(name)


@lru_cache(maxsize=1)
def _dialect_languages() -> dict[str, str]:
    return {d: key for key, entry in _registry().items() if key not in ("languages", "controls")
            for d in entry.get("dialects", [])}
