"""Text normalisation and tokenisation for matching, retrieval and metrics (SPEC §4 P1 Normalisation).

Normalised text is for comparison only: removing ZWJ/ZWNJ changes how some Bengali conjuncts render
(e.g. র‍্য), so never write it back over the stored original.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Literal

DigitMode = Literal["ascii", "bengali", "keep"]

BENGALI_DIGITS = "০১২৩৪৫৬৭৮৯"
ZERO_WIDTH = "\u200b\u200c\u200d\ufeff\u2060"  # ZWSP, ZWNJ, ZWJ, BOM/ZWNBSP, word joiner
_TO_ASCII = str.maketrans(BENGALI_DIGITS, "0123456789")
_TO_BENGALI = str.maketrans("0123456789", BENGALI_DIGITS)
_DROP_ZERO_WIDTH = str.maketrans("", "", ZERO_WIDTH)
_JOINERS = frozenset("\u200c\u200d")


def normalize_text(text: str, digits: DigitMode = "ascii") -> str:
    """Normalise for matching: drop zero-width chars, NFC, convert digits, collapse whitespace, strip.

    `digits`: 'ascii' maps Bengali digits to ASCII, 'bengali' maps ASCII to Bengali, 'keep' leaves both.
    """
    if digits not in ("ascii", "bengali", "keep"):
        raise ValueError(f"digits must be 'ascii', 'bengali' or 'keep', got {digits!r}")
    out = unicodedata.normalize("NFC", text.translate(_DROP_ZERO_WIDTH))
    if digits == "ascii":
        out = out.translate(_TO_ASCII)
    elif digits == "bengali":
        out = out.translate(_TO_BENGALI)
    return " ".join(out.split())


@lru_cache(maxsize=4096)
def _is_word_char(ch: str) -> bool:
    """Letters, combining marks (Bengali vowel signs, virama, nukta), digits, and ZWJ/ZWNJ inside words."""
    return unicodedata.category(ch)[0] in "LMN" or ch in _JOINERS


#: hyphens that join the parts of one word ("good-natured", "E‑Mail") when `tokenize(keep_hyphens=True)`
WORD_HYPHENS = frozenset("-\u2010\u2011")


def tokenize(text: str, *, keep_hyphens: bool = False) -> list[str]:
    """Split into word tokens at whitespace, punctuation (incl. danda । and ॥) and symbols.

    Unlike regex `\\w`, keeps combining marks (Unicode Mn/Mc) inside tokens, so Bengali vowel signs
    survive: 'আমি ভাত খাই।' → ['আমি', 'ভাত', 'খাই']. Hyphenated words split ('Wi-Fi' → ['Wi', 'Fi'])
    unless `keep_hyphens`: then a hyphen between two word characters stays inside the word ('Wi-Fi' →
    ['Wi-Fi']; 'Wi - Fi' and a trailing 'Wi-' still split). Does not normalise; call `normalize_text`
    first when matching.
    """
    tokens: list[str] = []
    current: list[str] = []
    padded = (*text, " ")
    for i, ch in enumerate(padded):  # trailing space flushes the last token
        if _is_word_char(ch) or (keep_hyphens and ch in WORD_HYPHENS and current and _is_word_char(padded[i + 1])):
            current.append(ch)
        elif current:
            token = "".join(current).strip("\u200c\u200d")  # joiners only count inside a word
            if token:
                tokens.append(token)
            current = []
    return tokens
