"""Query-side normalisation for retrieval: match keys, BM25 tokens and the `[[SHORT]]` tag (SPEC §4 P1
Normalisation; Bengali paper §3.1.2 "Input Normalization and Tagging": queries of fewer than four tokens are
tagged `[[SHORT]]` for the lexical matcher).

All of it is for comparison only; stored texts keep their original form.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from dialectbias.text._normalize import DigitMode, normalize_text, tokenize

SHORT_TAG = "[[SHORT]]"
#: a query with fewer tokens than this is short (Bengali paper §3.1.2)
SHORT_TOKENS = 4


def match_key(text: str, digits: DigitMode = "ascii") -> str:
    """The form two texts are compared in: normalised (NFC, digits, whitespace, no zero-width characters) and
    case-folded (Latin words inside Bengali text)."""
    return normalize_text(text, digits).casefold()


def match_tokens(text: str, digits: DigitMode = "ascii") -> list[str]:
    """Word tokens of the match key; Bengali vowel signs, virama and nukta stay inside tokens."""
    return tokenize(match_key(text, digits))


class NormalizedQuery(BaseModel):
    """A query as the retriever sees it: the original, its match key, its tokens and whether it is short."""

    model_config = ConfigDict(frozen=True)

    original: str
    normalized: str
    tokens: tuple[str, ...]
    short: bool

    @property
    def tagged(self) -> str:
        """The match key with `[[SHORT]]` appended when the query is short (the paper's tagged query)."""
        return f"{self.normalized} {SHORT_TAG}" if self.short else self.normalized


def normalize_query(text: str, digits: DigitMode = "ascii", short_tokens: int = SHORT_TOKENS) -> NormalizedQuery:
    """Normalise a query and tag it short when it has fewer than `short_tokens` tokens."""
    key = match_key(text, digits)
    tokens = tuple(tokenize(key))
    return NormalizedQuery(original=text, normalized=key, tokens=tokens, short=len(tokens) < short_tokens)
