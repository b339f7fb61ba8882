"""Per-answer scores of the BanglaVerse tasks, read from the store: one row per VQA answer or caption.

VQA: the parse (option, deciding rule, conflict), correctness against the gold index, and the
language-constraint check of the answer text. Captions: the cleaned caption, the script check, each
judge's score (a human override wins, as everywhere) and rubric fields. Failed requests are rows too
(`status = failed`), so their count reaches the report; they are outside `n`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from dialectbias.data import Item
from dialectbias.errors import DataError
from dialectbias.store import Store, judgment_scores
from dialectbias.tasks.vlm._items import caption_reference, vqa_variant
from dialectbias.tasks.vlm._parse import clean_caption, parse_vqa
from dialectbias.text import script_violation

if TYPE_CHECKING:
    from dialectbias.tasks.vlm._caption import CaptionTask
    from dialectbias.tasks.vlm._vqa import VQATask


def answer_violation(text: str | None, variant: str, dialects: dict[str, list[str]]) -> bool | None:
    """True/False: the text is (not) in the variant's script; None: no text or no letters to tell."""
    if not text:
        return None
    try:
        return script_violation(text, variant, extra=dialects)
    except ValueError:
        return None


def vqa_rows(task: VQATask, store: Store) -> list[dict[str, Any]]:
    """One row per current VQA request with a result (ok or failed)."""
    items = {i.id: i for i in store.iter_items()}
    o = task.options
    rows = []
    for r in store.stage_results("generate", ok_only=False, ordered=True):
        item = items.get(r.item_id)
        if item is None or r.status is None:
            continue
        entry = vqa_variant(item, r.variant)
        if o.exclude_unanswerable and entry.gold is None:
            continue
        row: dict[str, Any] = {
            "model": r.model_id, "item_id": r.item_id, "variant": r.variant, "strategy": r.meta.get("strategy"),
            "domain": item.domain or "", "human_validated": entry.human_validated, "gold": entry.gold,
            "answerable": entry.gold is not None, "status": r.status, "request_id": r.request_id,
            "pred": None, "correct": False, "rule": None, "conflict": False, "parsed": False, "raw_index": None,
            "raw_text": None, "violation": None}
        if r.status == "ok":
            p = parse_vqa(r.output or "", entry.options, o.vqa_parse, o.fuzzy_cutoff)
            row.update(pred=p.index, correct=p.index is not None and p.index == entry.gold, rule=p.rule,
                       conflict=p.conflict, parsed=p.parsed, raw_index=p.raw_index, raw_text=p.raw_text,
                       violation=answer_violation(p.raw_text, r.variant, task.exp.dialects))
        rows.append(row)
    return rows


def vqa_summary(rows: list[dict[str, Any]]) -> list[str]:
    """Per model: answers, correct, unparseable, conflicts and failures, for the run summary."""
    lines = []
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        ok = [r for r in mine if r["status"] == "ok"]
        rules = Counter(r["rule"] for r in ok)
        lines.append(
            f"{model}: {len(ok)} answers · {sum(r['correct'] for r in ok)} correct · {rules.get('none', 0)} "
            f"unparseable (scored wrong) · {sum(r['conflict'] for r in ok)} index/text conflicts · "
            f"{sum(not r['answerable'] for r in ok)} on items whose answer is not among the options · "
            f"{sum(r['violation'] is True for r in ok)} answers not in the variant's script · "
            f"{len(mine) - len(ok)} failed requests")
    return lines


def caption_judgments(store: Store, human: str = "mean") -> dict[str, dict[str, dict[str, Any]]]:
    """generation request id → judge id → {score, fields, human}: current judgments; a human score (`human`:
    review.human_score, the mean over annotators or the latest) replaces the judge's (`human` True)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for j in judgment_scores(store, human):
        out.setdefault(j.refs[0], {})[j.judge_id] = {
            "score": j.human_score if j.human_score is not None else j.score, "fields": j.parsed,
            "human": j.human_score is not None}
    return out


def caption_rows(task: CaptionTask, store: Store) -> list[dict[str, Any]]:
    """One row per current caption request with a result, with each judge's score (None: not judged or
    unscored) as `judge:<id>` and its numeric rubric fields as `judge:<id>:<field>`."""
    items: dict[str, Item] = {i.id: i for i in store.iter_items()}
    judged = caption_judgments(store, task.exp.review.human_score)
    judges = [j.id for j in task.exp.judges]
    rows = []
    for r in store.stage_results("generate", ok_only=False, ordered=True):
        item = items.get(r.item_id)
        if item is None or r.status is None:
            continue
        try:
            reference, validated = caption_reference(item, r.variant)
        except DataError:
            continue
        caption = clean_caption(r.output or "") if r.status == "ok" else ""
        row: dict[str, Any] = {
            "model": r.model_id, "item_id": r.item_id, "variant": r.variant, "strategy": r.meta.get("strategy"),
            "domain": item.domain or "", "human_validated": validated, "status": r.status,
            "request_id": r.request_id, "reference": reference, "caption": caption,
            "violation": answer_violation(caption, r.variant, task.exp.dialects) if r.status == "ok" else None}
        for judge in judges:
            j = judged.get(r.request_id, {}).get(judge)
            row[f"judge:{judge}"] = j["score"] if j else None
            for field in task.rubrics[judge].fields:
                value = (j["fields"] if j else {}).get(field.name)
                if field.numeric:
                    row[f"judge:{judge}:{field.name}"] = value
        rows.append(row)
    return rows


def caption_summary(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        ok = [r for r in mine if r["status"] == "ok"]
        lines.append(f"{model}: {len(ok)} captions · {sum(r['violation'] is True for r in ok)} not in the "
                     f"variant's script · {sum(not r['caption'] for r in ok)} empty after cleaning · "
                     f"{len(mine) - len(ok)} failed requests")
    return lines
