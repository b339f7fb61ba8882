"""Refusal detection by per-language patterns (SPEC §4 P3 Script validity: a refusal scores 0).

Only phrasing that starts near the beginning of a response counts, so an answer that merely quotes a
refusal later on is not flagged.
"""

from __future__ import annotations

import re
import unicodedata

from dialectbias.text._normalize import normalize_text

_CANT = r"(?:can'?t|cannot|can not|won'?t|am unable to|'m unable to|am not able to|'m not able to)"
_BN_NOT_ABLE = r"(?:পারছি|পারব|পারবো|পারি) ?না"
_PATTERNS: dict[str, str] = {
    # English
    "en_cant_help": rf"\bi {_CANT} (?:help|assist)",
    "en_cannot_answer": rf"\bi {_CANT} (?:answer|respond|provide an answer)",
    "en_as_an_ai": r"\bas an ai\b|\bas a (?:large )?language model\b",
    "en_sorry_but": r"\bi(?:'m| am) sorry,? but\b",
    "en_unable": r"\bi(?:'m| am) (?:unable|not able) to\b",
    "en_dont_understand": r"\bi (?:don'?t|do not) understand (?:the|your|this) question",
    # Bengali (ঃ is often typed as ':')
    "bn_sorry": r"আমি দু[ঃ:]খিত|^দু[ঃ:]খিত",
    "bn_cannot_answer": rf"উত্তর দিতে {_BN_NOT_ABLE}",
    "bn_dont_understand": rf"বুঝতে {_BN_NOT_ABLE}|বুঝতে পারিনি",
    "bn_cannot_help": rf"সাহায্য করতে {_BN_NOT_ABLE}",
    "bn_as_an_ai": r"আমি (?:একটি |একজন )?(?:এআই|ai|কৃত্রিম বুদ্ধিমত্তা)",
    # German (text is casefolded: ß → ss)
    "de_sorry": r"\bes tut mir leid\b|\bleider kann ich\b",
    "de_cannot": r"\bich kann (?:\w+ ){0,6}?nicht\b",
    "de_unable": r"\bich bin nicht in der lage\b",
    "de_as_an_ai": r"\bals (?:eine? )?(?:ki|sprachmodell)\b",
}
_COMPILED = [(name, re.compile(unicodedata.normalize("NFC", pattern))) for name, pattern in _PATTERNS.items()]


def detect_refusal(text: str, window: int = 200) -> str | None:
    """Name of the refusal pattern starting earliest within the first `window` characters, else None.

    Matching is on NFC-normalised, zero-width-free, whitespace-collapsed, casefolded text with curly
    apostrophes straightened. Pattern names are '<lang>_<kind>', e.g. 'bn_cannot_answer'.
    """
    norm = normalize_text(text, digits="keep").replace("\u2019", "'").casefold()
    hits = [(m.start(), name) for name, rx in _COMPILED if (m := rx.search(norm)) and m.start() < window]
    return min(hits)[1] if hits else None
