"""Strict parsing of association answers (SPEC §4 P4; German paper §3.3): every adjective assigned to
exactly one writer, or the answer is rejected with its reasons."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.tasks.probes._prompt import AssociationPrompt
from dialectbias.tasks.probes._traits import _norm

Answer = Literal["A", "B", "none", "both"]


class AssociationParse(BaseModel):
    """Result of strictly parsing one answer.

    `assignments` maps each prompt adjective (prompt spelling) to 'A', 'B', 'none' or 'both'. When
    `ok` is False it holds the lines that could be read, for diagnostics only; do not score it.
    """

    model_config = ConfigDict(extra="forbid")

    ok: bool
    reason: str | None = None
    assignments: dict[str, Answer] = Field(default_factory=dict)


_FENCE = re.compile(r"^```[\w+-]*$")
_LIST_MARKER = re.compile(r"^(?:[-*+•·]\s+|\d{1,2}[.)]\s*|\(\d{1,2}\)\s*)")
_SEPARATOR = re.compile(r"\s*:\s*|\s+[-–—]\s+")
_EDGE = " \t\"'`*_()[]{}.,;!?।"
_WRITER_RE = re.compile(r"^(?:writer\s*)?\(?([ab])\)?$")
_MAX_REASONS = 5
_WRITERS: dict[str, Answer] = {"a": "A", "b": "B"}
_NEUTRAL: dict[str, Answer] = {"none": "none", "both": "both"}


def _side(text: str) -> str:
    return _norm(text).strip(_EDGE).strip()


def _answer(side: str) -> Answer | None:
    m = _WRITER_RE.match(side)
    if m:
        return _WRITERS[m.group(1)]
    return _NEUTRAL.get(side)


def _show(line: str, limit: int = 60) -> str:
    line = line.strip()
    return repr(line if len(line) <= limit else line[: limit - 1] + "…")


def parse_association(output: str, prompt: AssociationPrompt,
                      allow_neutral: bool | None = None) -> AssociationParse:
    """Strictly parse a model's association answer (SPEC §4 P4 "Association task"; German paper §3.3).

    Accepted: exactly one ``adjective: writer`` line per prompt adjective, each adjective once, writer
    A or B ('None'/'Both' too when `allow_neutral`; default: the prompt's own setting). Anything else
    rejects the whole answer, with a reason naming the offending line(s): a line that is not a pair,
    an unknown or extra adjective, a duplicate, a missing adjective, another writer.

    Tolerated: surrounding whitespace, blank lines, code-fence lines, leading list markers ("1.",
    "2)", "-", "*", "•"), markdown bold/italics/backticks, quotes, trailing punctuation, case,
    "Writer A" / "writer a" / "A" / "(A)", the order "writer: adjective", separators ':' (also
    full-width) or a spaced dash (' - ', ' – ', ' — '), Unicode hyphen variants and zero-width
    characters. Unlike the paper's code (PROCEDURES.md §1.4) the line count is not fixed at 10, but
    every non-blank line must be a valid pair, so preambles and trailing comments still reject.
    """
    neutral_ok = prompt.allow_neutral if allow_neutral is None else allow_neutral
    index = {_norm(w): w for w in prompt.adjectives}
    allowed = "A or B" + (" (or None/Both)" if neutral_ok else "")
    problems: list[str] = []
    assignments: dict[str, Answer] = {}
    first_line: dict[str, int] = {}
    mentioned: set[str] = set()  # prompt adjectives seen on any line, valid or not

    for n, raw in enumerate(output.splitlines(), start=1):
        line = _norm(raw).replace("**", "").replace("__", "").replace("`", " ").strip()
        if not line or _FENCE.match(raw.strip()):
            continue
        line = _LIST_MARKER.sub("", line, count=1).strip()
        parts = _SEPARATOR.split(line)
        if len(parts) != 2:
            problems.append(f"line {n} {_show(raw)}: not an 'adjective: writer' pair")
            continue
        left, right = _side(parts[0]), _side(parts[1])
        if left in index and (answer := _answer(right)) is not None:
            adj_side = left
        elif right in index and (answer := _answer(left)) is not None:
            adj_side = right
        elif left in index or right in index:
            other = parts[1] if left in index else parts[0]
            mentioned.add(index[left if left in index else right])
            problems.append(f"line {n} {_show(raw)}: writer {other.strip()!r} is not {allowed}")
            continue
        elif _answer(left) is not None or _answer(right) is not None:
            other = right if _answer(left) is not None else left
            problems.append(f"line {n} {_show(raw)}: adjective {other!r} is not in the prompt")
            continue
        else:
            problems.append(f"line {n} {_show(raw)}: no prompt adjective and no writer found")
            continue
        mentioned.add(index[adj_side])
        if answer in ("none", "both") and not neutral_ok:
            problems.append(f"line {n} {_show(raw)}: neutral answer {answer!r} not allowed (writer must be "
                            "A or B)")
            continue
        adjective = index[adj_side]
        if adjective in first_line:
            problems.append(f"line {n} {_show(raw)}: duplicate adjective {adjective!r} "
                            f"(first on line {first_line[adjective]})")
            continue
        first_line[adjective] = n
        assignments[adjective] = answer

    missing = [w for w in prompt.adjectives if w not in mentioned]
    if not output.strip():
        problems = ["empty output"]
    elif missing:
        problems.append(f"missing adjective(s): {', '.join(missing)}")
    if problems:
        more = len(problems) - _MAX_REASONS
        reason = "; ".join(problems[:_MAX_REASONS]) + (f"; and {more} more problem(s)" if more > 0 else "")
        return AssociationParse(ok=False, reason=reason, assignments=assignments)
    return AssociationParse(ok=True, assignments=assignments)
