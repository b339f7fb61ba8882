"""Text utilities: normalisation and tokenisation, script validity, refusal detection."""

from dialectbias.text._bn_normalize import SHORT_TAG, NormalizedQuery, match_key, match_tokens, normalize_query
from dialectbias.text._normalize import normalize_text, tokenize
from dialectbias.text._refusal import detect_refusal
from dialectbias.text._script import (
    SCRIPT_RANGES,
    ScriptStatus,
    ScriptVerdict,
    check_script,
    register_script,
    script_share,
)

__all__ = [
    "SCRIPT_RANGES",
    "SHORT_TAG",
    "NormalizedQuery",
    "ScriptStatus",
    "ScriptVerdict",
    "check_script",
    "detect_refusal",
    "match_key",
    "match_tokens",
    "normalize_query",
    "normalize_text",
    "register_script",
    "script_share",
    "tokenize",
]
