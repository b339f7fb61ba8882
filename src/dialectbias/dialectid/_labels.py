"""Dialect-identification labels: registry names (lowercase), `standard`, and a few spellings mapped to them."""

from __future__ import annotations

from dialectbias.dialects import STANDARD

#: other spellings of registry names (district spellings, demonyms, the German study's ISO 639-3 codes, which
#: the registry lists beside the dialect names) -> the name a model is trained with
ALIASES: dict[str, str] = {
    "barisal": "barishal", "chattogram": "chittagong", "chittagonian": "chittagong", "sylheti": "sylhet",
    "cumilla": "comilla", "noakhali_dialect": "noakhali", "standard_bengali": STANDARD, "standard_bangla": STANDARD,
    "nds": "low_german", "frr": "north_frisian", "stq": "saterfrisian", "ksh": "ripuarian",
    "pfl": "rhine_franconian", "als": "alemannic", "bar": "bavarian",
}


def canonical_label(name: str) -> str:
    """`Barishal`, ` barisal `, `Low German` → barishal, barishal, low_german: lowercase, spaces and hyphens as
    underscores, known other spellings mapped to the registry name."""
    key = "_".join(name.strip().lower().replace("-", " ").split())
    return ALIASES.get(key, key)
