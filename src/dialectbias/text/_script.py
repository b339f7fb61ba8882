"""Deterministic script-validity check: is a response written in the expected script? (SPEC §4 P3)

The Bengali paper (App. B.2) zeroes every Likert score when the dialect response's primary text is not
Bengali script; English is allowed only for numbers, proper nouns and technical terms. This module
gives the toolkit its own verdict to record next to the judge's.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from dialectbias.text._normalize import tokenize

Ranges = tuple[tuple[int, int], ...]

_LATIN: Ranges = (
    (0x0041, 0x005A), (0x0061, 0x007A),  # ASCII letters
    (0x00C0, 0x024F),  # Latin-1 letters, Latin Extended-A/B (ä, ö, ü, ß, ...)
    (0x0300, 0x036F),  # combining diacritics (decomposed accents)
    (0x1E00, 0x1EFF),  # Latin Extended Additional
)
_ARABIC: Ranges = (
    (0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF),  # Arabic (incl. Urdu ٹ ڈ ڑ ں ے), Suppl., Ext-A
    (0xFB50, 0xFDFF), (0xFE70, 0xFEFF),  # presentation forms A/B (Urdu Nastaliq text often uses them)
)

SCRIPT_RANGES: dict[str, Ranges] = {
    "bengali": ((0x0980, 0x09FF),),
    "latin": _LATIN,
    "german": _LATIN,
    "devanagari": ((0x0900, 0x097F), (0xA8E0, 0xA8FF)),
    "arabic": _ARABIC,
    "urdu": _ARABIC,
}


def register_script(name: str, ranges: Iterable[tuple[int, int]]) -> None:
    """Add or replace a script as inclusive code-point ranges, e.g. for a language added in config."""
    checked = tuple((int(lo), int(hi)) for lo, hi in ranges)
    if not checked or any(lo > hi for lo, hi in checked):
        raise ValueError(f"script {name!r} needs non-empty ranges with lo ≤ hi, got {checked!r}")
    SCRIPT_RANGES[name.lower()] = checked


def _ranges(script: str) -> Ranges:
    try:
        return SCRIPT_RANGES[script.lower()]
    except KeyError:
        raise ValueError(f"unknown script {script!r}; known: {sorted(SCRIPT_RANGES)}") from None


def _in(ch: str, ranges: Ranges) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in ranges)


def _is_letter(ch: str) -> bool:
    """Letters and combining marks (category L* or M*): Bengali vowel signs count; digits never do."""
    return unicodedata.category(ch)[0] in "LM"


def script_share(text: str, script: str) -> tuple[float, int]:
    """Share of letters (L* / M* characters, after NFC) that lie in `script`, and the letter count.

    Text without letters → (0.0, 0); callers treat letters == 0 as indeterminable.
    """
    in_script, letters = _count(unicodedata.normalize("NFC", text), _ranges(script))
    return (in_script / letters if letters else 0.0), letters


def _count(text: str, ranges: Ranges) -> tuple[int, int]:
    """(letters in `ranges`, all letters) of already-NFC text."""
    letters = [ch for ch in text if _is_letter(ch)]
    return sum(_in(ch, ranges) for ch in letters), len(letters)


class ScriptVerdict(BaseModel):
    """Outcome of `check_script`: `share` is the share after tolerance, `letters` all letters in the text."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    share: float
    letters: int
    reason: str


def _tolerated_latin(token: str) -> bool:
    """Latin proper noun / acronym / technical token: starts upper-case ('DNA', 'Python') or has a digit."""
    letters = [ch for ch in token if _is_letter(ch)]
    return (bool(letters) and all(_in(ch, _LATIN) for ch in letters)
            and (token[0].isupper() or any(ch.isdigit() for ch in token)))


def check_script(
    text: str, script: str = "bengali", threshold: float = 0.6, max_latin_token_share: float = 0.3
) -> ScriptVerdict:
    """Decide whether `text` is primarily written in `script` (SPEC §4 P3 Script validity).

    share = in-script letters / letters; digits are not letters, so numbers are ignored. Latin proper
    nouns and technical terms are tolerated for a non-Latin `script`: tokens that are all-Latin and
    start upper-case or contain a digit are removed from the denominator, but only when the text has
    some in-script letters and such tokens are ≤ `max_latin_token_share` of its word tokens (so
    romanized or English text still fails). ok = share ≥ threshold; no letters → ok=False, 'no letters'.
    """
    ranges = _ranges(script)
    text = unicodedata.normalize("NFC", text)
    in_script, letters = _count(text, ranges)
    if letters == 0:
        return ScriptVerdict(ok=False, share=0.0, letters=0, reason="no letters")
    words = [t for t in tokenize(text) if any(_is_letter(ch) for ch in t)]
    tolerated = [] if _in("a", ranges) else [t for t in words if _tolerated_latin(t)]
    denom, note = letters, ""
    if in_script and tolerated and len(tolerated) <= max_latin_token_share * len(words):
        denom -= sum(_is_letter(ch) for t in tolerated for ch in t)
        note = f"; tolerated Latin tokens: {', '.join(tolerated)}"
    share = in_script / denom
    ok = share >= threshold
    prefix = "" if ok else "only "
    reason = f"{prefix}{share:.0%} of {denom} letters in {script} script (threshold {threshold:.0%}){note}"
    return ScriptVerdict(ok=ok, share=share, letters=letters, reason=reason)
