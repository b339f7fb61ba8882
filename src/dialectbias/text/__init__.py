"""Text utilities: normalisation and tokenisation, script validity, refusal detection."""

from dialectbias.text._normalize import normalize_text, tokenize
from dialectbias.text._refusal import detect_refusal
from dialectbias.text._script import (
    LANGUAGE_SCRIPTS,
    SCRIPT_RANGES,
    ScriptStatus,
    ScriptVerdict,
    check_script,
    dominant_script,
    language_verdict,
    register_language_script,
    register_script,
    script_for_language,
    script_share,
    script_violation,
)

__all__ = [
    "LANGUAGE_SCRIPTS",
    "SCRIPT_RANGES",
    "ScriptStatus",
    "ScriptVerdict",
    "check_script",
    "detect_refusal",
    "dominant_script",
    "language_verdict",
    "normalize_text",
    "register_language_script",
    "register_script",
    "script_for_language",
    "script_share",
    "script_violation",
    "tokenize",
]
