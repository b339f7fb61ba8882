"""Text utilities: normalisation and tokenisation, script validity, refusal detection, the noisy-text control."""

from dialectbias.text._bn_normalize import SHORT_TAG, NormalizedQuery, match_key, match_tokens, normalize_query
from dialectbias.text._noise import (
    BUILTIN_TOKENIZERS,
    NOISY,
    TokenCounter,
    Vocabulary,
    add_noise,
    count_words,
    load_vocabulary,
    token_counts,
    token_length_parity,
)
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
    "BUILTIN_TOKENIZERS",
    "LANGUAGE_SCRIPTS",
    "NOISY",
    "SCRIPT_RANGES",
    "SHORT_TAG",
    "NormalizedQuery",
    "ScriptStatus",
    "ScriptVerdict",
    "TokenCounter",
    "Vocabulary",
    "add_noise",
    "check_script",
    "count_words",
    "detect_refusal",
    "dominant_script",
    "language_verdict",
    "load_vocabulary",
    "match_key",
    "match_tokens",
    "normalize_query",
    "normalize_text",
    "register_language_script",
    "register_script",
    "script_for_language",
    "script_share",
    "script_violation",
    "token_counts",
    "token_length_parity",
    "tokenize",
]
