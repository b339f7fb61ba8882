"""Deterministic script-validity check: is a response written in the expected script? (SPEC §4 P3)

The Bengali paper (App. B.2, §3.3) zeroes every Likert score when the dialect response's *primary text*
is not Bengali script; English is allowed only for numerical values, proper nouns and technical terms,
and a response "primarily in Romanized Bengali or another script" is invalid. This module gives the
toolkit its own verdict to record next to the judge's; the task treats it as a flag (see
`dialectbias.judges.script_refusal_verdict`), not as the last word.

The rule, for a non-Latin target script such as Bengali:

1. No letters at all (`১৯৭১`, `64`, `৬৪`, emoji, punctuation, empty) → *indeterminate*: numerals are
   allowed by the paper, so the script cannot be told from the answer.
2. Word tokens are grouped into *Latin runs* (consecutive Latin/Greek-letter words). A run is an
   *embedded term* — a technical term or proper noun, lower case included — when it has at most
   `max_term_words` words, contains no romanized-Bengali function word (`ami`, `achi`, `eta`, `ekta`, …),
   and no English grammar word (`is`, `it`, `they`, …), except the connectors of a capitalised proper
   name (`Internet of Things`). All-caps tokens (`DNA`, `AR`, `IT`) are acronyms, never grammar words.
3. share = target-script letters / letters outside embedded terms; *ok* when share ≥ `threshold`,
   otherwise *invalid*. Letters of other scripts (Devanagari, Arabic, …) are never tolerated.
4. An invalid verdict is *clear* when the answer has no target-script letter and shows another
   language's frame: a Latin run that is not an embedded term (romanized Bengali, an English sentence)
   or letters of another script. A bare Latin term (`Dhaka`, `Python`) is invalid but not clear.

For a Latin target (German) there is no term tolerance: share = target letters / letters.

Language constraints (BanglaVerse, paper 003 §6 and App. H: "language constraint violation", an answer
not in the requested language's script): `script_for_language` maps a language or variant name to its
script (Bengali and its dialects → Bengali script, Hindi → Devanagari, Urdu → Arabic script, English →
Latin), `language_verdict` applies the rule above to that script and `script_violation` reduces the
verdict to True / False / None (indeterminate). `dominant_script` names the script most letters are in.
Digits of any script (`১৯৭১`, `۱۹۷۱`, `१९७१`, `1971`) are never letters: a digits-only answer is
indeterminate in every language.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from dialectbias.dialects import STANDARD, language_of
from dialectbias.text._normalize import tokenize

Ranges = tuple[tuple[int, int], ...]
ScriptStatus = Literal["ok", "invalid", "indeterminate"]

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
# Scripts an embedded English term may be written in: Latin, plus Greek for symbols (π, α, Ω, µ).
_TERM: Ranges = (*_LATIN, (0x0370, 0x03FF), (0x00B5, 0x00B5))

SCRIPT_RANGES: dict[str, Ranges] = {
    "bengali": ((0x0980, 0x09FF),),
    "latin": _LATIN,
    "german": _LATIN,
    "devanagari": ((0x0900, 0x097F), (0xA8E0, 0xA8FF)),
    "arabic": _ARABIC,
    "urdu": _ARABIC,
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Common romanized forms of a language's function words, pronouns and auxiliaries (casefolded): a Latin
# run containing one is the language written in Latin letters, not an embedded English term.
ROMANIZED_WORDS: dict[str, frozenset[str]] = {
    "bengali": _words(
        "ami amra amar amake tumi tomar tomake apni apnar apnake tara oder eta ota sheta ekta "
        "ekti ei oi ki keno kothay kobe kemon kivabe kibhabe koto na nai nei naki ache achi acho achhe "
        "achhi acche asi aso kori koro kore korbo korben korte korun korechi koreche hoy hoye hoyeche "
        "hobe holo hocche hochche chilo chhilo thake theke thaki jonno kintu ebong ebang abar othoba "
        "shathe sathe moddhe modhye upor niche bhalo valo kharap onek khub ekhon tokhon tahole jodi tobe "
        "dite dibe diye jabe jao jani jano bolo bolte bolchi dekho dekhe er ar"),
}
# Hindi and Urdu share their romanized function words (Hindustani): 'yeh ek tasveer hai'.
_HINDUSTANI = _words(
    "main mein mera meri mere mujhe hum hamara aap aapka tum tumhara yeh ye woh wo voh hai hain tha thi "
    "hoga hogi kya kyun kyon kaise kahan kab kaun nahi nahin aur lekin magar bhi kuch bahut accha acha "
    "karna karta karti karte kiya kar raha rahi rahe hota hoti hote hona ka ki ke ko se par liye "
    "uska uski iska iski unka apna apni")
ROMANIZED_WORDS.update({"devanagari": _HINDUSTANI, "hindi": _HINDUSTANI, "urdu": _HINDUSTANI,
                        "arabic": _HINDUSTANI})

# English words that make a sentence (verbs, auxiliaries, pronouns, negation) — never part of a term.
_ENGLISH_GRAMMAR = _words(
    "is are was were am be been being has have had do does did can could will would shall should may "
    "might must it its i me my you your he him his she her we us our they them their this that these "
    "those there here what which who whom whose not no yes because also very so than then if")
# English connectors: allowed inside a capitalised proper name ('Internet of Things'), grammar elsewhere.
_ENGLISH_CONNECTORS = _words("the a an of and or to in on at for with by from as into about")


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


# Both per-character tests are cached: a judged answer has a few dozen distinct characters, and every judge
# request checks one (2M checks at ten times the Bengali paper's scale, benchmarks/tenx.py). The key holds the
# ranges themselves, so `register_script` replacing a script's ranges never meets a stale entry.
@lru_cache(maxsize=1 << 16)
def _in(ch: str, ranges: Ranges) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in ranges)


@lru_cache(maxsize=1 << 16)
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
    in_script = letters = 0
    for ch, n in Counter(text).items():  # each distinct character once
        if _is_letter(ch):
            letters += n
            in_script += n if _in(ch, ranges) else 0
    return in_script, letters


class ScriptVerdict(BaseModel):
    """Outcome of `check_script`.

    status: 'ok', 'invalid' or 'indeterminate' (no letters); `ok` is True / False / None for them.
    clear: an invalid answer with no target-script letter and another language's frame (see module doc).
    share: target-script share of the letters outside embedded terms; letters: all letters in the text;
    terms: the Latin runs tolerated as embedded terms; reason: one human-readable sentence.
    """

    model_config = ConfigDict(frozen=True)

    status: ScriptStatus
    clear: bool = False
    share: float
    letters: int
    terms: tuple[str, ...] = ()
    reason: str

    @property
    def ok(self) -> bool | None:
        """True (valid), False (invalid) or None (indeterminate: no letters)."""
        return None if self.status == "indeterminate" else self.status == "ok"


def _letters_in(token: str, ranges: Ranges) -> int:
    return sum(_is_letter(ch) and _in(ch, ranges) for ch in token)


def _is_acronym(token: str) -> bool:
    return token.isupper()


def _run_is_term(run: list[str], romanized: frozenset[str], max_words: int) -> bool:
    """An embedded English term or proper noun: short, no romanized word, no English grammar word."""
    if len(run) > max_words:
        return False
    words = [(t, t.casefold()) for t in run if not _is_acronym(t)]
    if any(w in romanized or w in _ENGLISH_GRAMMAR for _, w in words):
        return False
    connectors = [t for t, w in words if w in _ENGLISH_CONNECTORS]
    # connectors only inside a proper name: every other word capitalised ('Bank of England')
    return not connectors or all(not t[0].islower() for t, w in words if w not in _ENGLISH_CONNECTORS)


@lru_cache(maxsize=1 << 16)
def _token_letters(token: str, target: Ranges) -> tuple[int, int, int]:
    """(letters in `target`, letters in a term script, all letters) of one token (words repeat: cached)."""
    return _letters_in(token, target), _letters_in(token, _TERM), sum(_is_letter(ch) for ch in token)


def _latin_runs(tokens: list[str], target: Ranges) -> tuple[list[list[str]], int]:
    """Maximal runs of consecutive word tokens written mostly in a term script (Latin/Greek), and the
    number of letters in tokens of any other non-target script."""
    runs: list[list[str]] = []
    current: list[str] = []
    other = 0
    for token in tokens:
        n_target, n_term, n_letters = _token_letters(token, target)
        if n_term > n_target and n_term * 2 >= n_letters:
            current.append(token)
            continue
        if current:
            runs.append(current)
            current = []
        other += n_letters - n_target - n_term
    if current:
        runs.append(current)
    return runs, other


def check_script(text: str, script: str = "bengali", threshold: float = 0.6, max_term_words: int = 4
                 ) -> ScriptVerdict:
    """Decide whether `text`'s primary text is written in `script` (SPEC §4 P3; Bengali paper App. B.2).

    See the module docstring for the rule. `threshold`: minimum target-script share of the letters
    outside embedded terms; `max_term_words`: longest Latin run tolerated as one embedded term (0 turns
    the tolerance off). Deterministic; NFC-normalises first.
    """
    ranges = _ranges(script)
    text = unicodedata.normalize("NFC", text)
    in_script, letters = _count(text, ranges)
    if letters == 0:
        return ScriptVerdict(status="indeterminate", share=0.0, letters=0,
                             reason="no letters (numbers, symbols or empty): script cannot be told")
    tokens = [t for t in tokenize(text) if any(_is_letter(ch) for ch in t)]
    latin_target = _in("a", ranges)
    runs, other = ([], letters - in_script) if latin_target else _latin_runs(tokens, ranges)
    romanized = ROMANIZED_WORDS.get(script.lower(), frozenset())
    terms = [r for r in runs if _run_is_term(r, romanized, max_term_words)]  # max_term_words 0: none
    foreign = [r for r in runs if r not in terms]
    term_tokens = [token for run in terms for token in run]
    denom = letters - sum(_is_letter(ch) for token in term_tokens for ch in token)
    counted = in_script - sum(_letters_in(token, ranges) for token in term_tokens)
    # only embedded terms (e.g. 'DNA-র' split into 'DNA' + 'র' keeps a Bengali token; 'Dhaka' has none)
    share = counted / denom if denom else float(in_script > 0)
    term_texts = tuple(" ".join(r) for r in terms)
    note = f"; embedded terms: {', '.join(term_texts)}" if term_texts else ""
    measured = f"{share:.0%} of {denom} letters outside embedded terms in {script} script (threshold {threshold:.0%})"
    if in_script and share >= threshold:
        return ScriptVerdict(status="ok", share=share, letters=letters, terms=term_texts, reason=measured + note)
    romanized_hits = sorted({t.casefold() for r in foreign for t in r
                             if t.casefold() in romanized and not _is_acronym(t)})
    evidence = []
    if romanized_hits:
        evidence.append(f"romanized {script} words: {', '.join(romanized_hits)}")
    if other:
        evidence.append(f"{other} letters of another script")
    if foreign and not romanized_hits:
        evidence.append(f"Latin text: {_clip(' / '.join(' '.join(r) for r in foreign))}")
    detail = f" ({'; '.join(evidence)})" if evidence else ""
    if in_script == 0:
        clear = bool(foreign) or other > 0
        reason = (f"clearly not {script} script: no {script} letters{detail}" if clear
                  else f"no {script} letters, only Latin terms: {', '.join(term_texts)}")
        return ScriptVerdict(status="invalid", clear=clear, share=0.0, letters=letters, terms=term_texts,
                             reason=reason)
    return ScriptVerdict(status="invalid", share=share, letters=letters, terms=term_texts,
                         reason=f"only {measured}{note}{detail}")


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# Language (name or ISO 639-1 code, as `language_of` returns) → script name in SCRIPT_RANGES.
LANGUAGE_SCRIPTS: dict[str, str] = {
    "bengali": "bengali", "bangla": "bengali", "bn": "bengali",
    "hindi": "devanagari", "hi": "devanagari",
    "urdu": "urdu", "ur": "urdu",
    "english": "latin", "en": "latin",
    "german": "german", "de": "german",
}


def register_language_script(language: str, script: str) -> None:
    """Declare the script a language (or a variant name) must be written in, e.g. `("nepali", "devanagari")`."""
    _ranges(script)  # unknown script → ValueError naming the known ones
    LANGUAGE_SCRIPTS[language.lower()] = script.lower()


def script_for_language(language: str, *, standard: str = "bengali",
                        extra: dict[str, list[str]] | None = None) -> str:
    """The script an answer in `language` must be written in.

    `language`: a language name or code (`hindi`, `ur`), `standard` (read as the `standard` argument: the
    benchmark's standard language, Bengali for BanglaVerse), or a dialect variant mapped to its language by
    the registry or an experiment's `dialects:` additions (`extra`): `sylhet` → `bn` → Bengali script.
    Raises ValueError naming the variant when no script is known for it.
    """
    name = language.strip().lower()
    if name == STANDARD:
        name = standard.lower()
    if name in LANGUAGE_SCRIPTS:
        return LANGUAGE_SCRIPTS[name]
    lang = language_of(name, extra)
    if lang is not None and lang.lower() in LANGUAGE_SCRIPTS:
        return LANGUAGE_SCRIPTS[lang.lower()]
    raise ValueError(f"no script known for language or variant {language!r} (known languages: "
                     f"{sorted(LANGUAGE_SCRIPTS)}; a dialect needs its language in the registry or in the "
                     "experiment's `dialects:`; declare others with register_language_script)")


def language_verdict(text: str, language: str, *, standard: str = "bengali", threshold: float = 0.6,
                     max_term_words: int = 4, extra: dict[str, list[str]] | None = None) -> ScriptVerdict:
    """`check_script` against the script of `language` (see `script_for_language`).

    Non-Latin targets (Bengali, Devanagari, Arabic) tolerate short English technical terms and proper
    nouns (`DNA`, `email check`) as the Bengali rule does; a Latin target (English) counts every letter.
    Pass the answer text itself: a VQA reply's English scaffolding (`Index: 2, Answer:`) is tolerated as a
    short term, but an English chain-of-thought is a long English run and makes the verdict invalid.
    """
    script = script_for_language(language, standard=standard, extra=extra)
    return check_script(text, script, threshold=threshold, max_term_words=max_term_words)


def script_violation(text: str, language: str, *, standard: str = "bengali", threshold: float = 0.6,
                     max_term_words: int = 4, extra: dict[str, list[str]] | None = None) -> bool | None:
    """True when `text` is not written in `language`'s script (a language-constraint violation), False when
    it is, None when that cannot be told (no letters: empty, digits, punctuation, emoji).

    Keyword arguments as in `language_verdict`.
    """
    ok = language_verdict(text, language, standard=standard, threshold=threshold,
                          max_term_words=max_term_words, extra=extra).ok
    return None if ok is None else not ok


# Scripts `dominant_script` names by their ranges, in this order; aliases (german, urdu) are left out.
_DOMINANT_ORDER = ("bengali", "devanagari", "arabic", "latin")
_ALIASES = frozenset({"german", "urdu"})


def _script_of(ch: str) -> str | None:
    """The script of one letter: a registered script's name, else the first word of its Unicode name
    (`cyrillic`, `tamil`, `cjk`, `greek`), None for a combining mark outside every registered range."""
    for name in (*_DOMINANT_ORDER, *(n for n in SCRIPT_RANGES if n not in _DOMINANT_ORDER and n not in _ALIASES)):
        if _in(ch, SCRIPT_RANGES[name]):
            return name
    if unicodedata.category(ch)[0] == "M":
        return None
    return unicodedata.name(ch, "unknown").split()[0].lower()


def dominant_script(text: str) -> str | None:
    """The script most letters of `text` (after NFC) are written in: `bengali`, `devanagari`, `arabic`
    (Urdu, Arabic, Persian), `latin`, another registered script, or the Unicode script word of an
    unregistered one (`cyrillic`, `tamil`, `cjk`). A combining mark outside the registered ranges counts
    for the letter before it. None when the text has no letters. Ties go to the script seen first.
    """
    counts: dict[str, int] = {}
    previous: str | None = None
    for ch in unicodedata.normalize("NFC", text):
        if not _is_letter(ch):
            previous = None
            continue
        script = _script_of(ch) or previous
        if script is None:
            continue
        counts[script] = counts.get(script, 0) + 1
        previous = script
    if not counts:
        return None
    return max(counts, key=counts.__getitem__)  # dicts keep insertion order: first seen wins a tie
