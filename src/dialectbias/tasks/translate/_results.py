"""The translator's stored answers, post-processed: one row per current request (item × target × field
group), and the counts the run summary, the report and the items export share.

Post-processing runs when results are read, not when they are written: it is a pure function of the
stored raw output, the request's prompt and the task's options, so changing `accept_unchanged` or
`script_threshold` re-reads the same answers without a model call, and the raw output stays in `results`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from dialectbias.data import message_text
from dialectbias.store import Store, stage_requests
from dialectbias.tasks.translate._post import FAILURES, CleanContext, clean_list, clean_text, prompt_lines

if TYPE_CHECKING:
    from dialectbias.config import Experiment
    from dialectbias.dialectid import DialectCheck, DialectIdentifier

STAGE = "translate"
#: a request with no result yet / whose call failed after its retries
PENDING, REQUEST_FAILED = "pending", "request_failed"


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
    #: the dialect identifier's check of a translation into a dialect (options.dialect_id): a flag, not a failure
    dialect_check: DialectCheck | None = None
    #: ids of the dialect-only transcripts shown as style context (options.transcript_k)
    transcripts: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def dialect_verdict(self) -> str | None:
        return self.dialect_check.verdict if self.dialect_check else None


def read_translations(store: Store, model_id: str, context: Callable[[str], CleanContext]) -> Iterator[Translation]:
    """Every current translate request of the translator, its answer cleaned (`context(target)` gives the
    target's script, labels and options)."""
    for row in stage_requests(store, STAGE, model_id):
        meta = row.meta
        source = tuple(meta.get("source", ()))
        is_list = bool(meta.get("is_list"))
        messages = store.resolve_messages(row.messages, images="ref")
        prompt = "\n".join(message_text(m.get("content")) for m in messages)
        common: dict[str, Any] = {
            "request_id": row.request_id, "item_id": row.item_id, "target": row.variant,
            "template": row.template, "field": meta.get("field", ""), "is_list": is_list, "source": source,
            "examples": tuple(meta.get("examples", ())), "leaked": meta.get("leaked"), "output": row.output,
            "prompt": prompt, "retrieval": meta.get("retrieval", ""),
            "transcripts": tuple(meta.get("transcripts", ()))}
        if row.status is None:
            yield Translation(status=PENDING, reason="not sent yet", text=None, **common)
            continue
        if row.status != "ok":
            yield Translation(status=REQUEST_FAILED, reason=row.error or "failed", text=None, **common)
            continue
        base = context(row.variant)
        ctx = CleanContext(script=base.script, labels=base.labels, script_threshold=base.script_threshold,
                           accept_unchanged=base.accept_unchanged, prompt_lines=prompt_lines(prompt, exclude=source))
        cleaned = clean_list(row.output or "", source, ctx) if is_list else clean_text(
            row.output or "", source[0] if source else "", ctx)
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


def load_identifier(exp: Experiment, folder: str) -> DialectIdentifier:
    """The translate experiment's `options.dialect_id` model; a ConfigError naming the option and the folder."""
    from dialectbias.dialectid import DialectIdentifier
    from dialectbias.errors import ConfigError

    try:
        return DialectIdentifier.load(exp.resolve(folder))
    except ConfigError as exc:
        raise ConfigError(f"{exp.where('options', 'dialect_id')}: options.dialect_id: {exc}") from None


def check_text(text: str | list[str]) -> str:
    """What the identifier reads: a string as is, a list's elements one per line (short options alone say
    little)."""
    return "\n".join(text) if isinstance(text, list) else text


def check_dialects(rows: list[Translation], identifier: DialectIdentifier, dialect_targets: Collection[str],
                   min_probability: float) -> list[Translation]:
    """`rows` with a `dialect_check` on every usable translation into a dialect target (one batch)."""
    todo = [(i, t.text) for i, t in enumerate(rows) if t.ok and t.text and t.target in dialect_targets]
    checks = identifier.check([check_text(text) for _, text in todo], [rows[i].target for i, _ in todo],
                              min_probability)
    out = list(rows)
    for (i, _), check in zip(todo, checks, strict=True):
        out[i] = replace(out[i], dialect_check=check)
    return out


def dialect_id_counts(rows: list[Translation], order: Sequence[str] = ()) -> dict[str, Counter[str]]:
    """target -> verdict -> translations (checked translations only), targets in `order` first."""
    out: dict[str, Counter[str]] = {}
    for t in rows:
        if t.dialect_check is not None:
            out.setdefault(t.target, Counter())[t.dialect_check.verdict] += 1
    rank = {name: i for i, name in enumerate(order)}
    return dict(sorted(out.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def dialect_id_lines(rows: list[Translation], order: Sequence[str] = ()) -> list[str]:
    """The run summary's line: `dialect id: sylhet 3 ok, 1 standard · chittagong 2 other dialect`."""
    from dialectbias.dialectid import VERDICTS

    counts = dialect_id_counts(rows, order)
    if not counts:
        return []
    parts = [f"{target} " + ", ".join(f"{c[v]} {v.replace('_', ' ')}" for v in VERDICTS if c.get(v))
             for target, c in counts.items()]
    return ["dialect id: " + " · ".join(parts) + " (flags, not failures: flagged variants are still exported)"]


#: when a variant's field groups disagree, the verdict the variant carries: the most serious first
_SEVERITY = ("standard", "other_dialect", "uncertain", "not_covered", "ok")


def dialect_id_provenance(rows: list[Translation]) -> dict[str, Any]:
    """`{"dialect_id": {...}}` for an exported variant whose translations were checked, else {}: the check of
    a one-group variant; for several groups (a VQA variant's question, options …) the most serious verdict and
    `fields: {field: check}`."""
    checked = [(t.field, t.dialect_check) for t in rows if t.dialect_check is not None]
    if not checked:
        return {}
    if len(checked) == 1:
        return {"dialect_id": checked[0][1].as_dict()}
    worst_field, worst = min(checked, key=lambda fc: _SEVERITY.index(fc[1].verdict))
    return {"dialect_id": {**worst.as_dict(), "field": worst_field,
                           "fields": {field: check.as_dict() for field, check in checked}}}
