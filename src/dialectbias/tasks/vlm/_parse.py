"""Reading a model's VQA answer and caption (BanglaVerse §4.2, App. E; SPEC §4 P5 VQA parsing).

VQA answers follow `Index: <i>, Answer: "<text>"` (CoT: reasoning, then `Final Answer: Index: <i>,
Answer: "<text>"`). The released scripts differ (PROCEDURES.md §2): Gemini/Llama read the index only,
Gemma/Qwen let the quoted text win over a contradicting index. Here:

1. Clean: NFKC, markdown emphasis and code marks removed; an index in digits of any script is read.
2. Scope: the text after the last `Final Answer` when there is one (the final answer wins), else all.
3. Index: the last `Index: <n>` in the scope (label in English, Bengali, Hindi or Urdu).
4. Text: the last `Answer: "<text>"` that is not followed by `Index` (quoted, or to the end of the line);
   with neither an index nor an `Answer:` label, the whole reply (a bare option, or a bare digit).
5. The text is matched to the options: exact, then normalised (`normalize_text`, case folding, quotes
   and end punctuation stripped), then fuzzy (difflib ratio ≥ `fuzzy_cutoff`, 0.6 as in the released
   code, with a unique best option).
6. Decide: index and text agree → `index+text`; only one usable → it (`index`, `text_exact`,
   `text_normalized`, `text_fuzzy`); they disagree → `text_wins` (default) takes the text, `index_first`
   the index, and `conflict` is recorded. Nothing usable → unparseable (`rule = "none"`), scored wrong.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict

from dialectbias.text import normalize_text

ParseRule = Literal["text_wins", "index_first"]
TextMatch = Literal["exact", "normalized", "fuzzy"]
FUZZY_CUTOFF = 0.6

_INDEX_LABEL = r"(?:index|ইনডেক্স|সূচক|সূচি|इंडेक्स|सूचकांक|انڈیکس|اشاریہ)"
_ANSWER_LABEL = r"(?:answer|উত্তর|उत्तर|جواب)"
_FINAL = re.compile(r"final\s+answer|চূড়ান্ত\s+উত্তর|अंतिम\s+उत्तर|حتمی\s+جواب", re.IGNORECASE)
_INDEX = re.compile(rf"{_INDEX_LABEL}\s*(?:[:：=]|is)?\s*[\[(#]?\s*(-?\d+)", re.IGNORECASE)
_ANSWER = re.compile(rf"{_ANSWER_LABEL}\s*[:：]\s*", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“”„«»「『']\s*(.+?)\s*[\"“”«»」』']")
_MARKDOWN = re.compile(r"\*\*|__|`+|^\s*#+\s*|^\s*[-*>]\s+", re.MULTILINE)
_BARE_DIGIT = re.compile(r"^\s*[\[(]?\s*(\d)\s*[\])]?\s*[.।:]?\s*$")
_STRIP = " \t\n\"'“”‘’«»「」『』।.,;:!?()[]{}*_-"


class VQAParse(BaseModel):
    """What was read from one answer: the chosen option (None: unparseable), the rule that decided, and
    what was found on the way (so a report can show why)."""

    model_config = ConfigDict(frozen=True)

    index: int | None
    rule: str
    conflict: bool = False
    raw_index: int | None = None
    raw_text: str | None = None
    text_index: int | None = None
    text_match: TextMatch | None = None

    @property
    def parsed(self) -> bool:
        return self.index is not None


def clean(text: str) -> str:
    """NFKC, markdown marks gone."""
    return _MARKDOWN.sub("", unicodedata.normalize("NFKC", text))


def ascii_digits(text: str) -> str:
    """Every decimal digit (Bengali ০–৯, Devanagari, Arabic-Indic …) as ASCII, one character for one, so
    positions stay those of `text` (an option's own digits, e.g. `১ম স্থান`, are matched as written)."""
    return "".join(str(unicodedata.digit(ch)) if ch.isdigit() and not ch.isascii() else ch for ch in text)


def _key(text: str) -> str:
    return normalize_text(text).casefold().strip(_STRIP)


def match_option(text: str, options: list[str], fuzzy_cutoff: float = FUZZY_CUTOFF
                 ) -> tuple[int | None, TextMatch | None]:
    """The option `text` names and how it was matched (exact, normalized, fuzzy); (None, None) when none
    or when two options tie."""
    text = unicodedata.normalize("NFKC", text).strip()
    nfkc = [unicodedata.normalize("NFKC", o).strip() for o in options]
    if text in nfkc and nfkc.count(text) == 1:
        return nfkc.index(text), "exact"
    key, keys = _key(text), [_key(o) for o in options]
    if key and keys.count(key) == 1:
        return keys.index(key), "normalized"
    if not key:
        return None, None
    ratios = [difflib.SequenceMatcher(None, key, k).ratio() for k in keys]
    best = max(ratios)
    if best >= fuzzy_cutoff and ratios.count(best) == 1:
        return ratios.index(best), "fuzzy"
    return None, None


def _answer_text(scope: str) -> str | None:
    """The last `Answer:` text not followed by `Index` (quoted, else the rest of its line)."""
    found = None
    for m in _ANSWER.finditer(scope):
        rest = scope[m.end():]
        if re.match(rf"\s*{_INDEX_LABEL}", rest, re.IGNORECASE):
            continue
        line = rest.split("\n", 1)[0]
        quoted = _QUOTED.match(line.strip())
        text = quoted[1] if quoted else re.split(rf",?\s*{_INDEX_LABEL}\s*[:：]", line, flags=re.IGNORECASE)[0]
        text = text.strip(_STRIP)
        if text:
            found = text
    return found


def parse_vqa(output: str, options: list[str], rule: ParseRule = "text_wins",
              fuzzy_cutoff: float = FUZZY_CUTOFF) -> VQAParse:
    """Read the chosen option from a VQA answer (see the module docstring for the steps)."""
    text = clean(output or "")
    finals = list(_FINAL.finditer(text))
    scope = text[finals[-1].end():] if finals else text
    indices = [int(m[1]) for m in _INDEX.finditer(ascii_digits(scope))]
    raw_index = indices[-1] if indices else None
    raw_text = _answer_text(scope)
    if raw_index is None and raw_text is None:
        bare = _BARE_DIGIT.match(ascii_digits(scope))
        if bare:
            raw_index = int(bare[1])
        elif scope.strip() and "\n" not in scope.strip():
            raw_text = scope.strip(_STRIP)
    index = raw_index if raw_index is not None and 0 <= raw_index < len(options) else None
    text_index, how = match_option(raw_text, options, fuzzy_cutoff) if raw_text else (None, None)

    def read(chosen: int | None, decided_by: str, conflict: bool = False) -> VQAParse:
        return VQAParse(index=chosen, rule=decided_by, conflict=conflict, raw_index=raw_index, raw_text=raw_text,
                        text_index=text_index, text_match=how)

    if index is not None and text_index is not None:
        if index == text_index:
            return read(index, "index+text")
        if rule == "index_first":
            return read(index, "index", conflict=True)
        return read(text_index, f"text_{how}", conflict=True)
    if index is not None:
        return read(index, "index")
    if text_index is not None:
        return read(text_index, f"text_{how}")
    return read(None, "none")


_CAPTION_LABEL = re.compile(r"^\s*(?:caption|ক্যাপশন|শিরোনাম|कैप्शन|کیپشن)\s*[:：]\s*", re.IGNORECASE)


def clean_caption(output: str) -> str:
    """A caption as scored: markdown marks, a leading `Caption:` label and wrapping quotes removed."""
    text = _MARKDOWN.sub("", unicodedata.normalize("NFC", output or "")).strip()
    text = _CAPTION_LABEL.sub("", text).strip()
    if len(text) >= 2 and text[0] in "\"“'«" and text[-1] in "\"”'»":
        text = text[1:-1].strip()
    return text
