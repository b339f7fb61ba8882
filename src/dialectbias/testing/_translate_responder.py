"""A test-server responder for translate prompts (`dialectbias.testing:translate_responder`).

It recognises the package's translate templates (`… <source label> <text>` then a last line `<target
label>:`; a list as numbered lines), and answers with a deterministic stand-in translation: Bengali words
swapped for dialect forms (or, for English, Hindi and Urdu targets, a sentence in that script), wrapped
in the noise real models add — quotes, a label, a preamble, an explanation — chosen by a hash of the
request, so the post-processing is exercised end to end. A source text containing `রোমান` is answered in
romanized Bengali (a wrong-script failure). Every other request goes to `qa_responder`, so one server
serves a translate experiment and the qa_bias experiment that reads its items.
"""

from __future__ import annotations

import re
from typing import Any

from dialectbias.testing._messages import digest, last_user_text
from dialectbias.testing._qa_responder import qa_responder

#: standard form -> dialect form, the same for every dialect (a stand-in, not linguistics)
_DIALECT_WORDS = {"কী": "কিতা", "জেলার": "জিলার", "নদীর": "গাঙর", "প্রধান": "বড়", "হলে": "অইলে",
                  "করা": "গরা", "কাকে": "কারে", "বলে": "কয়", "মাছ": "মাছো", "খাবার": "খানা"}
_LANGUAGE_TEXT = {"english": "This is the translated text", "hindi": "यह अनुवादित पाठ है",
                  "urdu": "یہ ترجمہ شدہ متن ہے"}
_NUMBERED = re.compile(r"^\s*(\d+)\.\s*(.*)$")
WRONG_SCRIPT_MARKER = "রোমান"


def _translate_line(text: str, target: str, salt: int) -> str:
    if WRONG_SCRIPT_MARKER in text:
        return "Tumi kita koro?"
    language = _LANGUAGE_TEXT.get(target.lower())
    if language is not None:
        return f"{language} {salt}."
    words = text.split()
    out = [_DIALECT_WORDS.get(w.rstrip("?।"), w.rstrip("?।")) + w[len(w.rstrip("?।")):] for w in words]
    if out == words:  # nothing to swap: a dialect particle, so the answer is never the source unchanged
        out = [*words, "গো"]
    return " ".join(out)


def _parse(prompt: str) -> tuple[str, str, list[str], bool] | None:
    """(target label, target name, source texts, is a list) of a translate prompt; None for anything else."""
    lines = [ln.rstrip() for ln in prompt.strip().splitlines() if ln.strip()]
    if len(lines) < 2 or not lines[-1].endswith(":") or len(lines[-1]) > 60:
        return None
    label = lines[-1]
    target = label[:-1].removesuffix(" dialect").strip()
    numbered: list[str] = []
    i = len(lines) - 2
    while i >= 0 and (m := _NUMBERED.match(lines[i])):
        numbered.insert(0, m.group(2))
        i -= 1
    if numbered:
        return label, target, numbered, True
    head, sep, text = lines[-2].partition(": ")
    if not sep or len(head) > 40:
        return None
    return label, target, [text], False


def translate_responder(body: dict[str, Any]) -> str | None:
    """A stand-in translation for translate prompts; `qa_responder`'s answer for every other request."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or body.get("response_format"):
        return qa_responder(body)
    parsed = _parse(last_user_text(messages))
    if parsed is None:
        return qa_responder(body)
    label, target, texts, is_list = parsed
    h = digest(body.get("model"), messages)
    lines = [_translate_line(t, target, h[1 + i % 8]) for i, t in enumerate(texts)]
    if is_list:
        answer = "\n".join(f"{i}. {t}" for i, t in enumerate(lines, start=1))
        return answer if h[0] % 2 else f"{label}\n{answer}"
    line = lines[0]
    style = h[0] % 5
    if style == 1:
        return f"“{line}”"
    if style == 2:
        return f"{label} {line}"
    if style == 3:
        return f"Here is the translation:\n\n{line}\n\nNote: a stand-in translation by the test server."
    if style == 4:
        return f"**{line}**"
    return line
