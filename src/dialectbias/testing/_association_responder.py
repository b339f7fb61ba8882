"""A deterministic stand-in model for the association probe (German paper §3.3), for the test server.

Use ``TestServer(responder="dialectbias.testing:association_responder")``. It answers every adjective of an
association prompt with a writer, chosen from a hash of (model, prompt, adjective):

- naming setting (one writer's label mentions "standard"): a built-in stereotype — a trait adjective goes
  to the dialect writer, an opposite adjective to the standard writer, 4 times in 5 (expected bias 0.6);
- usage setting (two texts; it cannot tell which is dialect): a fair coin (expected bias 0).

1 answer in 20 starts with a preamble line (both our parser and the paper's rule reject it) and 1 in 20
is a numbered list (our parser accepts it, the paper's rule, PROCEDURES.md §1.4, does not), so reports
show both rejection rates. JSON-schema requests get the same choices as a JSON object. The numbers mean
nothing about any real model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dialectbias.testing._messages import chat_request, digest, last_user_text, requested_schema
from dialectbias.testing._trait_words import trait_poles

_WRITERS = re.compile(r"Writer A\b[^'\n]*'(?P<a>.*?)'\s*\n\s*Writer B\b[^'\n]*'(?P<b>.*?)'\s*\n", re.DOTALL)
_ADJECTIVES = re.compile(r"The adjectives are (?P<list>.+?)\.(?:\s|$)", re.DOTALL)
STEREOTYPE_SHARE = 8  # of 10: how often the naming-setting answer follows the stereotype


def _trait_adjectives(adjectives: list[str]) -> frozenset[str] | None:
    """The trait-pole adjectives of the (packaged) trait the prompt's adjectives come from."""
    shown = {a.lower() for a in adjectives}
    for trait, opposite in trait_poles():
        if shown <= trait | opposite:
            return trait & shown
    return None


def association_answers(model: str, prompt: str) -> dict[str, str] | None:
    """adjective → 'A' or 'B' for an association prompt, None for any other prompt."""
    found = _ADJECTIVES.search(prompt)
    if not found:
        return None
    adjectives = [a.strip() for a in found.group("list").split(",") if a.strip()]
    writers = _WRITERS.search(prompt)
    dialect: str | None = None
    if writers:
        a_std, b_std = ("standard" in writers.group(w).lower() for w in ("a", "b"))
        dialect = "B" if a_std and not b_std else "A" if b_std and not a_std else None
    trait = _trait_adjectives(adjectives)
    out = {}
    for adj in adjectives:
        h = digest(model, prompt, adj)
        if dialect is None or trait is None:
            out[adj] = "A" if h[0] % 2 else "B"
            continue
        standard = "A" if dialect == "B" else "B"
        stereotypical = dialect if adj.lower() in trait else standard
        out[adj] = stereotypical if h[0] % 10 < STEREOTYPE_SHARE else (standard if stereotypical == dialect
                                                                        else dialect)
    return out


def association_responder(body: dict[str, Any]) -> str | None:
    """Association answers (see the module docstring); None (the server's echo) for other requests."""
    request = chat_request(body)
    if request is None:
        return None
    model, messages = request
    prompt = last_user_text(messages)
    answers = association_answers(model, prompt)
    if answers is None:
        return None
    wants_json, _ = requested_schema(body)
    if wants_json:
        return json.dumps(answers, ensure_ascii=False)
    form = digest(model, prompt)[0] % 20
    lines = [f"{adj}: {writer}" for adj, writer in answers.items()]
    if form == 0:
        return "Here are my answers:\n" + "\n".join(lines)
    if form == 1:
        return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, start=1))
    return "\n".join(lines)


__all__ = ["STEREOTYPE_SHARE", "association_answers", "association_responder"]
