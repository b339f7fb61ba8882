"""The translator's stored answers, post-processed: one row per current request (item × target × field
group), and the counts the run summary, the report and the items export share.

Post-processing runs when results are read, not when they are written: it is a pure function of the
stored raw output, the request's prompt and the task's options, so changing `accept_unchanged` or
`script_threshold` re-reads the same answers without a model call, and the raw output stays in `results`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dialectbias.data import message_text
from dialectbias.store import Store
from dialectbias.tasks._translate_post import FAILURES, CleanContext, clean_list, clean_text, prompt_lines

STAGE = "translate"
#: a request with no result yet / whose call failed after its retries
PENDING, REQUEST_FAILED = "pending", "request_failed"

_SQL = """
SELECT r.request_id, r.item_id, r.variant, r.template, r.meta, r.messages, s.status, s.output, s.error
FROM current_requests cr JOIN requests r ON r.request_id = cr.request_id
LEFT JOIN results s ON s.request_id = r.request_id
WHERE cr.stage = ? AND cr.model_id = ? ORDER BY r.item_id, r.variant, r.request_id
"""


@dataclass(frozen=True)
class Translation:
    """One field group of one item translated into one target."""

    request_id: str
    item_id: str
    target: str
    template: str
    field: str
    is_list: bool
    source: tuple[str, ...]
    status: str  # ok, a post-processing failure (empty, wrong_script, echo, misaligned), request_failed, pending
    reason: str
    output: str | None
    text: str | list[str] | None
    examples: tuple[str, ...]
    leaked: bool | None
    prompt: str
    retrieval: str = ""
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def read_translations(store: Store, model_id: str, context: Callable[[str], CleanContext]) -> Iterator[Translation]:
    """Every current translate request of the translator, its answer cleaned (`context(target)` gives the
    target's script, labels and options)."""
    for row in store.iter_query(_SQL, (STAGE, model_id)):
        meta = json.loads(row["meta"])
        source = tuple(meta.get("source", ()))
        is_list = bool(meta.get("is_list"))
        messages = store.resolve_messages(row["messages"], images="ref")
        prompt = "\n".join(message_text(m.get("content")) for m in messages)
        common: dict[str, Any] = {
            "request_id": row["request_id"], "item_id": row["item_id"], "target": row["variant"],
            "template": row["template"], "field": meta.get("field", ""), "is_list": is_list, "source": source,
            "examples": tuple(meta.get("examples", ())), "leaked": meta.get("leaked"), "output": row["output"],
            "prompt": prompt, "retrieval": meta.get("retrieval", "")}
        if row["status"] is None:
            yield Translation(status=PENDING, reason="not sent yet", text=None, **common)
            continue
        if row["status"] != "ok":
            yield Translation(status=REQUEST_FAILED, reason=row["error"] or "failed", text=None, **common)
            continue
        base = context(row["variant"])
        ctx = CleanContext(script=base.script, labels=base.labels, script_threshold=base.script_threshold,
                           accept_unchanged=base.accept_unchanged, prompt_lines=prompt_lines(prompt, exclude=source))
        cleaned = clean_list(row["output"] or "", source, ctx) if is_list else clean_text(
            row["output"] or "", source[0] if source else "", ctx)
        yield Translation(status=cleaned.status, reason=cleaned.reason, text=cleaned.text, notes=cleaned.notes,
                          **common)


@dataclass
class TranslationCounts:
    """What the run summary and the report say about the translations."""

    requests: int = 0
    translated: int = 0
    failed: Counter[str] = field(default_factory=Counter)  # reason kind -> count (post-processing and calls)
    pending: int = 0
    variants: int = 0  # item × target with every group translated
    variants_incomplete: int = 0
    items: int = 0
    leaked_items: int = 0
    leak_checked: bool = False

    @property
    def n_failed(self) -> int:
        return sum(self.failed.values())


def count_translations(rows: list[Translation]) -> TranslationCounts:
    c = TranslationCounts(requests=len(rows))
    by_variant: dict[tuple[str, str], list[Translation]] = {}
    leaked: dict[str, bool | None] = {}
    for t in rows:
        by_variant.setdefault((t.item_id, t.target), []).append(t)
        if t.leaked is None:
            leaked.setdefault(t.item_id, None)
        else:
            leaked[t.item_id] = bool(leaked.get(t.item_id)) or t.leaked
        if t.ok:
            c.translated += 1
        elif t.status == PENDING:
            c.pending += 1
        else:
            c.failed[t.status] += 1
    for group in by_variant.values():
        if all(t.ok for t in group):
            c.variants += 1
        else:
            c.variants_incomplete += 1
    c.items = len(leaked)
    c.leak_checked = any(v is not None for v in leaked.values())
    c.leaked_items = sum(bool(v) for v in leaked.values())
    return c


def failure_text(failed: Counter[str]) -> str:
    """`2 wrong script, 1 echo` in a fixed order."""
    order = [*FAILURES, REQUEST_FAILED]
    names = {REQUEST_FAILED: "call failed after retries"}
    return ", ".join(f"{failed[k]} {names.get(k, k.replace('_', ' '))}" for k in order if failed.get(k))
