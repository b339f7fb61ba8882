"""Noisy-text control (SPEC §4 P1 "Noisy-text control"; German paper §6.2 and App. C.2).

The usage bias could come from a model reading dialect text as *erroneous* text rather than as dialect.
The control pairs each standard text with a synthetically distorted copy of itself: each word is
distorted with probability p (default 0.5; App. C.2 found 0.25 too far from the dialect texts' token
lengths). A distorted word gets, with equal probability,

- a character-level edit: substitute, delete or insert one random character (equally likely), or
- a word-level edit: delete the word, substitute it, or insert a word after it (equally likely), the new
  words drawn uniformly from the language's most frequent words (default the top 2,000, as the paper).

`mode="replace"` is the simpler control some studies use: every distorted word is replaced by a random
frequent word. Punctuation and whitespace are kept as they are; only word tokens change. Words are the
tokens of `dialectbias.text.tokenize(keep_hyphens=True)` (letters, digits and combining marks, so a Bengali
vowel sign stays in its word; a hyphenated word such as "E-Mail" is one word: one draw, and a word edit
replaces or deletes it whole), and character edits work on grapheme-like clusters (a base character with its
combining marks), so an edit never leaves a vowel sign without its consonant; they never touch the hyphen.

Inserted and substituted characters are the *lowercase letters of the word's script* that the vocabulary
uses (`Vocabulary.letters_for`): the released code draws from a–z (PROCEDURES.md §1.2), which would put
Latin letters into Bengali text. For a German word that is a–z plus ä, ö, ü and ß (the letters of the
lowercased frequent words; ß is lowercase, and German words use these letters in the middle), never a
capital in mid-word and never a letter of another script. A letter must occur in at least
`MIN_LETTER_SHARE` of the vocabulary's words, so a loanword's letter (the é of "Café") is not drawn. For a
Bengali word it is the Bengali-block letters (no case) of the vocabulary; vowel signs are marks, not
letters, and stay attached to their consonant. A word in a script the vocabulary lacks (a Latin name in
Bengali text) draws from its own lowercased letters; a word without letters (a number) from the
vocabulary's main script. Everything is drawn from one `random.Random(seed)`: same text, vocabulary and
seed → same output.
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, Protocol

from dialectbias.text._normalize import WORD_HYPHENS, _is_word_char, tokenize
from dialectbias.text._script import dominant_script

NOISY = "noisy"
"""Variant name of a noised standard text in an items file (`dialectbias build noise`)."""
DEFAULT_P = 0.5
DEFAULT_TOP = 2000
NoiseMode = Literal["mixed", "replace"]


#: a letter is drawn for character edits only if at least this share of the vocabulary's words contain it
MIN_LETTER_SHARE = 0.001


def _noise_letters(words: Iterable[str]) -> tuple[str, ...]:
    """The lowercase and caseless letters (Ll, Lo) of the lowercased `words` that occur in at least
    `MIN_LETTER_SHARE` of them (and in one word at least), sorted."""
    counts: Counter[str] = Counter()
    n = 0
    for w in words:
        n += 1
        counts.update({ch for ch in w.lower() if unicodedata.category(ch) in ("Ll", "Lo")})
    floor = max(1, math.ceil(MIN_LETTER_SHARE * n))
    return tuple(sorted(ch for ch, c in counts.items() if c >= floor))


@lru_cache(maxsize=256)
def _letters_of_script(letters: tuple[str, ...], script: str | None) -> tuple[str, ...]:
    return tuple(ch for ch in letters if dominant_script(ch) == script)


@dataclass(frozen=True)
class Vocabulary:
    """Frequent words of a language, most frequent first, and the letters character edits draw from (the
    lowercase or caseless letters its words use, see `MIN_LETTER_SHARE`)."""

    words: tuple[str, ...]
    letters: tuple[str, ...]

    def letters_for(self, word: str) -> tuple[str, ...]:
        """The letters a character edit of `word` may insert: the vocabulary's letters in the word's script
        (a word without letters: the vocabulary's main script); none there → the word's own lowercase
        letters; still none → all the vocabulary's letters."""
        script = dominant_script(word) or dominant_script("".join(self.letters))
        found = _letters_of_script(self.letters, script)
        if found:
            return found
        own = tuple(sorted({ch for ch in word.lower() if unicodedata.category(ch) in ("Ll", "Lo")}))
        return own or self.letters

    @classmethod
    def from_words(cls, words: Iterable[str], top: int | None = DEFAULT_TOP) -> Vocabulary:
        """The first `top` distinct non-empty words (None: all); ValueError when none is left."""
        seen: dict[str, None] = {}
        for w in words:
            w = unicodedata.normalize("NFC", w.strip())
            if w and w not in seen:
                seen[w] = None
                if top is not None and len(seen) >= top:
                    break
        if not seen:
            raise ValueError("the vocabulary has no word")
        letters = _noise_letters(seen)
        if not letters:
            raise ValueError("the vocabulary has no letter to draw random characters from")
        return cls(words=tuple(seen), letters=letters)


@lru_cache(maxsize=8)
def load_vocabulary(path: str | Path, top: int | None = DEFAULT_TOP) -> Vocabulary:
    """Read a vocabulary file: one word per line, most frequent first (UTF-8); a line may carry a count or
    other columns after a tab (`word<TAB>count`, what `dialectbias build vocabulary` writes); blank lines
    and lines starting with '#' are skipped. Keeps the first `top` words (None: all)."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{p}: cannot read the vocabulary file: {exc}") from exc
    words = (line.split("\t", 1)[0] for line in lines if line.strip() and not line.lstrip().startswith("#"))
    try:
        return Vocabulary.from_words(words, top=top)
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from exc


def count_words(texts: Iterable[str], lowercase: bool = False) -> Counter[str]:
    """Word frequencies over `texts` with the Bengali-aware `tokenize` (NFC; digits-only tokens skipped)."""
    counts: Counter[str] = Counter()
    for text in texts:
        text = unicodedata.normalize("NFC", text)
        for tok in tokenize(text.lower() if lowercase else text, keep_hyphens=True):
            if not tok.isdigit() and any(unicodedata.category(c).startswith("L") for c in tok):
                counts[tok] += 1
    return counts


def _segments(text: str) -> list[tuple[bool, str]]:
    """Split text into (is_word, chunk) runs; concatenating the chunks gives back the text. A hyphen between
    two word characters belongs to the word ("E-Mail" is one chunk), as in `tokenize(keep_hyphens=True)`."""
    out: list[tuple[bool, str]] = []
    for i, ch in enumerate(text):
        is_word = _is_word_char(ch) or (ch in WORD_HYPHENS and bool(out) and out[-1][0]
                                        and i + 1 < len(text) and _is_word_char(text[i + 1]))
        if out and out[-1][0] == is_word:
            out[-1] = (is_word, out[-1][1] + ch)
        else:
            out.append((is_word, ch))
    return out


def _clusters(word: str) -> list[str]:
    """A base character with the combining marks and joiners that follow it, one cluster each."""
    out: list[str] = []
    for ch in word:
        if out and (unicodedata.category(ch) in ("Mn", "Mc", "Me") or ch in "\u200c\u200d"):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _char_edit(word: str, vocab: Vocabulary, rng: random.Random) -> str:
    """Substitute, delete (2+ clusters) or insert one character; the hyphens of a hyphenated word stay."""
    clusters = _clusters(word)
    letters = vocab.letters_for(word)
    editable = [i for i, c in enumerate(clusters) if c not in WORD_HYPHENS]
    ops = ["substitute", "delete", "insert"] if len(editable) >= 2 else ["substitute", "insert"]
    op = rng.choice(ops)
    if op == "substitute":
        i = rng.choice(editable)
        clusters[i] = rng.choice(letters)
    elif op == "delete":
        del clusters[rng.choice(editable)]
    else:
        clusters.insert(rng.randrange(len(clusters) + 1), rng.choice(letters))
    return "".join(clusters)


def add_noise(
    text: str, p: float = DEFAULT_P, vocabulary: Vocabulary | Sequence[str] | str | Path | None = None,
    seed: int = 0, *, mode: NoiseMode = "mixed", top: int | None = DEFAULT_TOP,
) -> str:
    """Distort each word of `text` with probability `p` (SPEC §4 P1; German paper §6.2), reproducibly.

    `vocabulary`: a `Vocabulary`, a list of words (most frequent first) or a vocabulary file; the first
    `top` words are used (SPEC default 2,000; None: all). `mode="mixed"` (default) is the paper's
    control: half the distorted words get a character edit, half a word edit (delete / substitute /
    insert after); `mode="replace"` substitutes every distorted word. Punctuation and whitespace are
    kept; a deleted word takes one neighbouring space with it. Examples with a one-word vocabulary:
    add_noise("a b.", p=0, vocabulary=["x"]) == "a b."; add_noise("a b.", p=1, vocabulary=["x"],
    mode="replace") == "x x.".
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if mode not in ("mixed", "replace"):
        raise ValueError(f"mode must be 'mixed' or 'replace', got {mode!r}")
    if vocabulary is None:
        raise ValueError("add_noise needs a vocabulary: a file of frequent words or a list of them")
    if isinstance(vocabulary, Vocabulary):
        vocab = vocabulary
    elif isinstance(vocabulary, (str, Path)):
        vocab = load_vocabulary(str(vocabulary), top)
    else:
        vocab = Vocabulary.from_words(vocabulary, top=top)
    rng = random.Random(seed)
    segments = _segments(text)
    out: list[str] = []
    drop_next_space = False
    for is_word, chunk in segments:
        if not is_word:
            if drop_next_space:
                drop_next_space = False
                if chunk.isspace():
                    continue
                if chunk[0].isspace():
                    chunk = chunk[1:]
            out.append(chunk)
            continue
        if rng.random() >= p:
            out.append(chunk)
            continue
        if mode == "replace":
            out.append(rng.choice(vocab.words))
            continue
        if rng.random() < 0.5:
            out.append(_char_edit(chunk, vocab, rng))
            continue
        op = rng.choice(("delete", "substitute", "insert"))
        if op == "substitute":
            out.append(rng.choice(vocab.words))
        elif op == "insert":
            out.append(f"{chunk} {rng.choice(vocab.words)}")
        elif out and out[-1].isspace():  # delete: take the preceding space with it
            out.pop()
        elif out and out[-1][-1:].isspace():
            out[-1] = out[-1][:-1]
        else:
            drop_next_space = True
    return "".join(out)


class Encoder(Protocol):
    """What `token_counts` needs of a Hugging Face tokenizer."""

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]: ...


def token_counts(texts: Sequence[str], tokenizer: str = "words", hf_tokenizer: Encoder | None = None) -> list[int]:
    """Tokens per text: 'whitespace' (str.split), 'words' (`tokenize`: words without punctuation) or, with
    `hf_tokenizer` (a loaded Hugging Face tokenizer), its token ids without special tokens."""
    if hf_tokenizer is not None:
        return [len(hf_tokenizer.encode(t, add_special_tokens=False)) for t in texts]
    if tokenizer == "whitespace":
        return [len(t.split()) for t in texts]
    if tokenizer == "words":
        return [len(tokenize(t)) for t in texts]
    raise ValueError(f"tokenizer must be 'whitespace' or 'words' (or pass hf_tokenizer), got {tokenizer!r}")


TokenCounter = Callable[[Sequence[str]], list[int]]
BUILTIN_TOKENIZERS: dict[str, TokenCounter] = {
    "whitespace": lambda texts: token_counts(texts, "whitespace"),
    "words": lambda texts: token_counts(texts, "words"),
}


def token_length_parity(
    items: Sequence[Mapping[str, str]], tokenizers: Mapping[str, TokenCounter] | None = None,
) -> list[dict[str, object]]:
    """Mean token length per tokenizer × variant, with its ratio to the standard text and to the dialect text
    of the same items (German paper App. C.2, Figure 13: the noise rate was chosen so noisy and dialect
    texts tokenise to similar lengths; SPEC §4 P1: the mean ratio noisy/standard per tokenizer).

    `items`: one mapping variant → text per item, e.g. {"standard": …, "bavarian": …, "noisy": …}.
    `ratio_to_standard` of variant v = Σ tokens(v) / Σ tokens(standard) over the items having both;
    `ratio_to_dialect` = Σ tokens(v) / Σ tokens(d) over every (item, dialect d) pair, a dialect being any
    variant other than standard, noisy and v itself (nan without such a pair, e.g. for a dialect row when
    each item has one dialect). Default tokenizers: 'whitespace' and 'words'.
    """
    tokenizers = dict(tokenizers or BUILTIN_TOKENIZERS)
    variants = list(dict.fromkeys(v for item in items for v in item))
    rows: list[dict[str, object]] = []
    for name, counter in tokenizers.items():
        keys = [(i, v) for i, item in enumerate(items) for v in item]
        counted = dict(zip(keys, counter([items[i][v] for i, v in keys]), strict=True))
        for v in variants:
            own = [(i, n) for (i, var), n in counted.items() if var == v]
            with_std = [(n, counted[(i, "standard")]) for i, n in own if (i, "standard") in counted]
            with_dia = [(n, counted[(i, d)]) for i, n in own for d in items[i] if d not in ("standard", NOISY, v)]

            def ratio(pairs: list[tuple[int, int]]) -> float:
                den = sum(b for _, b in pairs)
                return sum(a for a, _ in pairs) / den if den else math.nan

            rows.append({"tokenizer": name, "variant": v, "n_texts": len(own),
                         "mean_tokens": sum(n for _, n in own) / len(own) if own else math.nan,
                         "ratio_to_standard": ratio(with_std), "ratio_to_dialect": ratio(with_dia)})
    return rows


__all__ = ["BUILTIN_TOKENIZERS", "DEFAULT_P", "DEFAULT_TOP", "MIN_LETTER_SHARE", "NOISY", "Encoder", "NoiseMode",
           "TokenCounter", "Vocabulary", "add_noise", "count_words", "load_vocabulary", "token_counts",
           "token_length_parity"]
