"""The first name of the persona in a decision-task profile and its gender (German paper App. E).

The paper reads the first names Llama-3.1 8B gave its personas and compares them "to the most common German male
and female names to infer binary gender"; how it found the names, and which name list it used, it does not say.
Our documented rule, applied to each writer's profile (`split_profiles`):

1. a name after a cue: ``Name: X``, ``named X``, ``called X``, ``meet X`` (case of the cue ignored);
2. else a name opening the profile, followed by ``,``, ``(``, ``:``, a dash, ``is`` or ``was`` (e.g.
   "Anna Huber (34) is a …", "Sepp, a farmer …"); a title before it (Dr., Mr., Mrs., Ms., Herr, Frau, Prof.)
   is skipped.

A name is a capitalised word (letters, an inner hyphen or apostrophe); the first word of a full name is the first
name. Words that open profiles but are not names (pronouns, articles, "Writer", "Profile" …) never count. No
match: the profile has no name (counted as `no_name`).

The gender comes from `gender-guesser` (the `names` extra; its name list is country-weighted, `name_country`,
default germany): male, female, mostly_male, mostly_female, andy (androgynous) or unknown.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: gender-guesser's answers, in table order
GENDERS = ("male", "female", "mostly_male", "mostly_female", "andy", "unknown")
NO_NAME = "no_name"

_NAME = r"[A-ZÄÖÜÉÈ][a-zäöüßéèáàíóúñç]+(?:[-'][A-ZÄÖÜa-zäöüß][a-zäöüßéè]+)?"
_TITLE = r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?|Herr|Frau)\s+"
_CUE = re.compile(rf"\b(?:[Nn]ame\s*(?:is\s*)?:?|[Nn]amed|[Cc]alled|[Mm]eet)\s+(?:{_TITLE})?(?P<name>{_NAME})")
_OPENING = re.compile(rf"^[\s*_#>\-•:,.]*(?:{_TITLE})?(?P<name>{_NAME})(?:\s+{_NAME})*\s*(?:[,(:–—-]|\bis\b|\bwas\b)")
#: words that open a profile but are no names
NOT_NAMES = frozenset([
    "a", "an", "the", "he", "she", "they", "his", "her", "their", "this", "that", "who", "writer", "profile",
    "persona", "background", "age", "occupation", "name", "born", "based", "both", "each", "one", "as", "in",
    "at", "with", "from", "for", "meet", "is", "was", "being", "having", "known", "our", "someone", "somebody",
    "person", "individual", "candidate", "manager", "athlete", "musician", "composer",
])


def persona_name(profile: str) -> str | None:
    """The persona's first name in one profile by the rule above, or None."""
    for pattern in (_CUE, _OPENING):
        m = pattern.search(profile)
        if m and m.group("name").lower() not in NOT_NAMES:
            return m.group("name")
    return None


def _module() -> Any:
    try:
        import gender_guesser.detector as gd
    except ImportError:
        return None
    return gd


@lru_cache(maxsize=1)
def _detector() -> Any:
    """The detector (built once: reading its name list takes about half a second)."""
    gd = _module()
    return gd.Detector(case_sensitive=False) if gd is not None else None


def guesser_available() -> bool:
    return _module() is not None


def countries() -> list[str]:
    """gender-guesser's country names (empty without it); the name list is not read."""
    gd = _module()
    return list(gd.Detector.COUNTRIES) if gd is not None else []


def name_gender(name: str, country: str | None) -> str:
    """gender-guesser's answer for a first name (`country`: weighted for that country, None: all)."""
    detector = _detector()
    if detector is None:
        raise RuntimeError("gender-guesser is not installed: pip install 'dialectbias[names]'")
    return str(detector.get_gender(name, country) if country else detector.get_gender(name))


__all__ = ["GENDERS", "NOT_NAMES", "NO_NAME", "countries", "guesser_available", "name_gender", "persona_name"]
