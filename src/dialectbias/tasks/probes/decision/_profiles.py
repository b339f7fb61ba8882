"""The two writer profiles of a decision-task answer (Task 1), split per writer for the marked-words analysis
(German paper §6.1; the released code splits the profiles with regexes, PROCEDURES.md §1.5)."""

from __future__ import annotations

import re

#: where Task 2 (the decision) starts: "Task 2", "**Task 2:**", "## Task 2" …
_TASK2 = re.compile(r"^[\s#*_>]*task\s*2\b", re.IGNORECASE | re.MULTILINE)
#: a writer's profile heading: a line starting with "Writer A" (markdown, list marker, "Profile of" allowed)
_HEADING = re.compile(r"^[\s#*_>\-•\d.)]*(?:profile\s+(?:of|for)\s+|profile:\s*)?\**\s*writer\s+([ab])\b",
                      re.IGNORECASE | re.MULTILINE)
_MENTION = re.compile(r"\bwriter\s+([ab])\b", re.IGNORECASE)


def split_profiles(text: str) -> dict[str, str] | None:
    """{'A': Writer A's profile, 'B': Writer B's} from the text before Task 2, or None when the two cannot be
    told apart. Each profile runs from its writer's first heading (a line starting with "Writer A/B"), else its
    first mention, to the other writer's; the writer labels themselves are removed."""
    if not text or not text.strip():
        return None
    task2 = _TASK2.search(text)
    body = text[: task2.start()] if task2 else text
    starts: dict[str, int] = {}
    for pattern in (_HEADING, _MENTION):
        for m in pattern.finditer(body):
            starts.setdefault(m.group(1).upper(), m.start())
        if len(starts) == 2:
            break
        starts = {}
    if len(starts) != 2:
        return None
    first, second = sorted(starts, key=starts.__getitem__)
    parts = {first: body[starts[first]:starts[second]], second: body[starts[second]:]}
    out = {w: _MENTION.sub(" ", p).strip(" \n\t*#:-–—_") for w, p in parts.items()}
    return out if all(out.values()) else None


__all__ = ["split_profiles"]
