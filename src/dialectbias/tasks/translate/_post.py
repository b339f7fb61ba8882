"""Post-processing of a translator's raw output (SPEC §4 P1 RAG translator: "strip quotes, labels, extra
lines"): what is left is the translation, or a failure with its reason — never a variant.

Pure functions. A model asked for "the dialect sentence only" still often answers with a preamble
("Here is the translation:"), a label (`সিলেটি:`), quotes, markdown, a `<think>` block, an explanation
after the sentence, the few-shot pattern continued (`Standard Bengali: … / Sylhet dialect: …`), or the
prompt itself. Failures: `empty`, `wrong_script` (no usable line in the target's script), `echo` (only the
prompt's own lines, or the source returned unchanged), `misaligned` (a list that does not come back with
one line per element, in order).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dialectbias.text import ScriptVerdict, check_script, normalize_text

CleanStatus = Literal["ok", "empty", "wrong_script", "echo", "misaligned"]
FAILURES: tuple[CleanStatus, ...] = ("empty", "wrong_script", "echo", "misaligned")

# a whole-string wrapper the model added: quotes of several conventions, markdown emphasis, backticks
_WRAPPERS = (('"', '"'), ("“", "”"), ("„", "“"), ("'", "'"), ("‘", "’"), ("«", "»"), ("「", "」"),
             ("`", "`"), ("**", "**"), ("__", "__"), ("*", "*"))
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$")
_BULLET = re.compile(r"^\s*(?:[-•*>]\s+|#+\s+)")
_NUMBERED = re.compile(r"^\s*[\(\[]?([0-9০-৯]{1,3})[\.\)\]:।]\s*(.*)$")
_BENGALI_DIGITS = str.maketrans("০১২৩৪৫৬৭৮৯", "0123456789")
# words that make a short `prefix:` a label, not part of the text (English and Bengali)
_LABEL_WORDS = re.compile(
    r"translation|translated|output|answer|result|dialect|version|sentence|target|standard|language|"
    r"অনুবাদ|অনূদিত|উত্তর|উপভাষা|ভাষায়|ভাষা|আঞ্চলিক|বাক্য|রূপ", re.I)
# a line that starts an explanation, a note or a self-description: everything from it on is dropped
_EXPLANATION = re.compile(
    r"^\s*[\(\[]?\s*(?:\*\*)?\s*(?:note|notes|explanation|explanations|breakdown|literal(?:ly)?|meaning|"
    r"in this translation|this translation|the translation|i (?:have|kept|used|translated)|"
    r"ব্যাখ্যা|টীকা|নোট|দ্রষ্টব্য|বিঃদ্রঃ|বি\.দ্র\.|অর্থাৎ|এই অনুবাদে)\b", re.I)
# an explanation marker used as a label: `Note:`, `(Explanation: …`, `ব্যাখ্যা:`
_NOTE_LABEL = re.compile(_EXPLANATION.pattern + r"\s*(?:\*\*)?\s*[:：]", re.I)
# a chatty opener with no text of its own: "Sure!", "Here is the translation:", "অবশ্যই!"
_PREAMBLE = re.compile(r"^\s*(?:sure|certainly|of course|okay|ok|here(?:'s| is| are)|below is|অবশ্যই|নিশ্চয়ই)\b",
                       re.I)
_LABEL_MAX_CHARS = 48


@dataclass(frozen=True)
class Cleaned:
    """A translation after post-processing: `text` (a string, or one string per element of a list field)
    when `status` is ok, else None and `reason` says why; `notes` list what was stripped."""

    status: CleanStatus
    text: str | list[str] | None = None
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class CleanContext:
    """What the cleaner knows of the request: the target's script (None: not checked), the labels the
    prompt used (stripped where the model repeats them) and the prompt's own lines (an answer made only
    of them is an echo)."""

    script: str | None
    labels: tuple[str, ...] = ()
    prompt_lines: frozenset[str] = frozenset()
    script_threshold: float = 0.6
    accept_unchanged: bool = False


def prompt_lines(prompt: str, exclude: Iterable[str] = ()) -> frozenset[str]:
    """The normalised non-empty lines of a rendered prompt, minus `exclude` (the query text itself: an
    answer equal to the source is judged as `unchanged`, not as an echoed instruction)."""
    skip = {_norm(t) for t in exclude}
    return frozenset(n for line in prompt.splitlines() if (n := _norm(line)) and n not in skip)


def script_verdict(text: str, script: str | None, threshold: float) -> tuple[bool | None, str]:
    """Is `text` written in `script`? (True / False / None = cannot tell: no letters), with the reason.

    The one place the translator checks a script (`dialectbias.text.check_script`)."""
    if script is None:
        return True, "script not checked"
    verdict = _check(text, script, threshold)
    return verdict.ok, verdict.reason


def _check(text: str, script: str, threshold: float) -> ScriptVerdict:
    """The script check every rule here goes through (switch it here for another checker)."""
    return check_script(text, script, threshold)


def clean_text(output: str, source: str, ctx: CleanContext) -> Cleaned:
    """The translation of one text (a question, a caption) from the raw output."""
    notes: list[str] = []
    lines = _content_lines(output, notes)
    if not lines:
        return Cleaned("empty", reason=_why_empty(output), notes=tuple(notes))
    kept, echoed, foreign = _candidate_lines(lines, ctx, notes, colon_free=":" not in source)
    if not kept:
        if not foreign and not echoed:
            return Cleaned("empty", reason="nothing left after removing quotes, labels and preambles",
                           notes=tuple(notes))
        if foreign:
            return Cleaned("wrong_script", reason=f"no line in {ctx.script} script: {_clip(foreign[0])}",
                           notes=tuple(notes))
        return Cleaned("echo", reason=f"only the prompt's own lines came back: {_clip(echoed[0])}",
                       notes=tuple(notes))
    n_source = max(1, len([ln for ln in source.splitlines() if ln.strip()]))
    if len(kept) > n_source:
        notes.append(f"dropped {len(kept) - n_source} extra line(s)")
    text = "\n".join(kept[:n_source])
    text = _strip_trailing_aside(text, ctx, notes)
    if not any(ch.isalnum() for ch in text):
        return Cleaned("empty", reason="nothing left after removing quotes and labels", notes=tuple(notes))
    if _has_letters(source) and not ctx.accept_unchanged:
        copied, whole = _norm(text), _norm(source)
        if copied == whole:
            return Cleaned("echo", reason="the source text came back unchanged", notes=tuple(notes))
        if copied in whole and len(copied) >= len(whole) / 2:  # cut off by max_tokens or a confused model
            return Cleaned("echo", reason="a truncated copy of the source text", notes=tuple(notes))
    if _has_letters(source):
        ok, why = script_verdict(text, ctx.script, ctx.script_threshold)
        if ok is not True:
            return Cleaned("wrong_script", reason=why, notes=tuple(notes))
    return Cleaned("ok", text=text, notes=tuple(notes))


def clean_list(output: str, sources: Sequence[str], ctx: CleanContext) -> Cleaned:
    """The translation of a list field (e.g. VQA options), sent as numbered lines `1. …`: one string per
    element, in the same order. The last complete block `1..n` wins (a model that first repeats the
    numbered source, then translates it); without numbering, exactly n lines are taken in order."""
    notes: list[str] = []
    lines = _content_lines(output, notes)
    n = len(sources)
    if not lines:
        return Cleaned("empty", reason=_why_empty(output), notes=tuple(notes))
    elements = _numbered_block(lines, n)
    if elements is None:
        no_colon = not any(":" in t for t in sources)
        plain = [s for ln in lines if (s := _strip_wrappers(_strip_label(ln, ctx, colon_free=no_colon), notes))
                 and not _EXPLANATION.match(s) and not _PREAMBLE.match(s) and _norm(s) not in ctx.prompt_lines]
        if len(plain) != n:
            found = sorted({int(m.group(1).translate(_BENGALI_DIGITS)) for ln in lines if (m := _NUMBERED.match(ln))})
            return Cleaned("misaligned", reason=f"expected {n} numbered lines 1–{n}, found "
                           f"{f'numbers {found}' if found else f'{len(plain)} unnumbered line(s)'}",
                           notes=tuple(notes))
        elements = plain
    out: list[str] = []
    for i, (raw, source) in enumerate(zip(elements, sources, strict=True), start=1):
        text = _strip_trailing_aside(_strip_wrappers(_strip_label(raw, ctx, colon_free=":" not in source), notes),
                                     ctx, notes)
        if not text:
            return Cleaned("empty", reason=f"element {i} is empty", notes=tuple(notes))
        if _has_letters(source):
            ok, why = script_verdict(text, ctx.script, ctx.script_threshold)
            if ok is not True:
                return Cleaned("wrong_script", reason=f"element {i}: {why}", notes=tuple(notes))
        out.append(text)
    return Cleaned("ok", text=out, notes=tuple(notes))


def numbered(texts: Sequence[str]) -> str:
    """A list field as the numbered lines the prompt shows (`clean_list` reads them back)."""
    return "\n".join(f"{i}. {' '.join(t.split())}" for i, t in enumerate(texts, start=1))


# -- steps --------------------------------------------------------------------------------------


def _content_lines(output: str, notes: list[str]) -> list[str]:
    """Non-empty lines without `<think>` blocks, code fences and bullets."""
    text = unicodedata.normalize("NFC", output or "")
    if _THINK.search(text):
        text = _THINK.sub("", text)
        notes.append("removed a <think> block")
    lines = []
    for line in text.splitlines():
        if _FENCE.match(line):
            continue
        line = _BULLET.sub("", line).strip()
        if line:
            lines.append(line)
    return lines


def _candidate_lines(lines: list[str], ctx: CleanContext, notes: list[str], *, colon_free: bool
                     ) -> tuple[list[str], list[str], list[str]]:
    """(kept lines, echoed prompt lines, lines in another script) of a one-text answer: labels, preambles
    and echoed prompt lines are dropped; an explanation line ends the translation; a line without a letter
    of a non-Latin target script is the model talking, not translating."""
    kept: list[str] = []
    echoed: list[str] = []
    foreign: list[str] = []
    for line in lines:
        if _norm(line) in ctx.prompt_lines:
            echoed.append(line)
            if kept:  # the few-shot pattern continued after the translation
                break
            continue
        if _EXPLANATION.match(line):
            if kept:
                notes.append("removed an explanation")
                break
            if _NOTE_LABEL.match(line):  # before the translation only a labelled note: "I have a cough." is text
                continue
        body = _strip_wrappers(_strip_label(line, ctx, notes, colon_free=colon_free), notes)
        if not body or _norm(body) in ctx.prompt_lines:
            if body:
                echoed.append(line)
            continue
        if _PREAMBLE.match(body) and (body.rstrip().endswith(":") or (not kept and _is_other_script(body, ctx))):
            notes.append("removed a preamble")
            continue
        if _is_other_script(body, ctx):
            foreign.append(body)
            if kept:
                break
            continue
        kept.append(body)
    return kept, echoed, foreign


def _is_other_script(text: str, ctx: CleanContext) -> bool:
    """True when a non-Latin target script has no letter in `text` while it has letters (chatter in
    English, romanized text)."""
    if ctx.script is None or not _has_letters(text):
        return False
    if _check("a", ctx.script, 0.5).ok:  # a Latin target: any Latin line may be the translation
        return False
    return _check(text, ctx.script, ctx.script_threshold).share == 0.0


def _strip_label(line: str, ctx: CleanContext, notes: list[str] | None = None, *, colon_free: bool = False) -> str:
    """Remove a leading `label:` — one of the prompt's labels, a short prefix naming a translation, dialect
    or language (`Sylhet dialect translation:`, `অনুবাদ:`), a word or two in another script than a
    non-Latin target's followed by text in it (`Sylheti: তুমি কিতা খাইছো?`), or, when the source has no
    colon (`colon_free`), any prefix of at most three words (`Bairisch: Wia geht's da?`)."""
    original = line.strip()
    stripped = original.lstrip("*_ ").strip()
    for label in sorted(ctx.labels, key=len, reverse=True):
        for candidate in (label, label.rstrip(":")):
            if candidate and stripped.casefold().startswith(candidate.casefold()):
                rest = stripped[len(candidate):].lstrip("*_ ")
                if rest.startswith((":", "：")) or candidate.endswith(":"):
                    if notes is not None:
                        notes.append("removed a label")
                    return rest.lstrip(":： *_").strip()
    head, sep, rest = stripped.partition(":")
    head = head.strip(" *_")
    if sep and 0 < len(head) <= _LABEL_MAX_CHARS and not _NUMBERED.match(stripped) and (
            _LABEL_WORDS.search(head) or (len(head.split()) <= 2 and _is_other_script(head, ctx)
                                          and not _is_other_script(rest, ctx))
            or (colon_free and len(head.split()) <= 3 and rest.strip())):
        if notes is not None:
            notes.append("removed a label")
        return rest.strip(" *_").strip()
    return original


def _strip_wrappers(text: str, notes: list[str]) -> str:
    """Remove quotes or emphasis wrapping the whole text (repeatedly: `"**…**"`)."""
    text = text.strip()
    changed = True
    while changed and text:
        changed = False
        for left, right in _WRAPPERS:
            if len(text) >= len(left) + len(right) and text.startswith(left) and text.endswith(right):
                inner = text[len(left):len(text) - len(right)]
                if left in ("'", "*") and (left in inner):  # an apostrophe or a bullet inside: not a wrapper
                    continue
                text = inner.strip()
                notes.append("removed quotes" if left not in ("*", "**", "__") else "removed emphasis")
                changed = True
                break
        # a closing quote before the final danda or full stop: “…”। → …।
        for left, right in _WRAPPERS[:7]:
            for end in ("।", "."):
                if text.startswith(left) and text.endswith(right + end) and len(text) > len(left) + len(right) + 1:
                    text = text[len(left):-(len(right) + len(end))].strip() + end
                    notes.append("removed quotes")
                    changed = True
    return text


def _strip_trailing_aside(text: str, ctx: CleanContext, notes: list[str]) -> str:
    """Drop a trailing `(…)` or ` - …` aside written in another script than a non-Latin target's
    (`তুমি কিতা খাইছো? (What did you eat?)`)."""
    match = re.search(r"\s*(?:\(([^()]*)\)|\[([^\[\]]*)\]|\s[-–—]\s+(.+))\s*$", text)
    if match and match.start() > 0:
        aside = next(g for g in match.groups() if g is not None)
        if _is_other_script(aside, ctx) or _EXPLANATION.match(aside):
            notes.append("removed an aside")
            return text[:match.start()].rstrip()
    return text


def _numbered_block(lines: list[str], n: int) -> list[str] | None:
    """The texts of the last run of numbered lines 1, 2, …, n; None when there is none."""
    blocks: list[dict[int, str]] = []
    for line in lines:
        m = _NUMBERED.match(line)
        if not m:
            continue
        number = int(m.group(1).translate(_BENGALI_DIGITS))
        if number == 1 or not blocks:
            blocks.append({})
        if number not in blocks[-1]:
            blocks[-1][number] = m.group(2).strip()
    for block in reversed(blocks):
        if sorted(block) == list(range(1, n + 1)):
            return [block[i] for i in range(1, n + 1)]
    return None


def _why_empty(output: str) -> str:
    if not (output or "").strip():
        return "empty output"
    return "nothing but a <think> block, code fences or bullets"


def _has_letters(text: str) -> bool:
    return any(unicodedata.category(ch)[0] in "LM" for ch in text)


def _norm(text: str) -> str:
    """For comparing lines: normalised, without surrounding quotes/emphasis and final punctuation."""
    return normalize_text(text, digits="ascii").strip(" \"'“”‘’«»*_`").rstrip("।.?!？").strip().casefold()


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
