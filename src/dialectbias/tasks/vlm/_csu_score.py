"""Scoring of commonsense short answers (`csu`): the rules in one place (BanglaVerse §3.5, §4.3; the released
CSU scripts, PROCEDURES.md §2).

- The answer read from a reply (`extract_answer`): `raw` is the reply stripped, as the released scripts
  compared it; `clean` (default) also takes the text after the last `Final Answer:` (CoT), its first
  non-empty line, without markdown marks, an `Answer:`/`উত্তর:` label or wrapping quotes.
- Exact match (`exact_match`): equal after NFKC and collapsing every run of whitespace to one space, ends
  stripped (`normalize_answer`, the released `normalize_text`); no punctuation is removed.
- Abstention (`is_abstention`): the answer, normalised and without wrapping quotes or end punctuation, is one
  of the phrases the prompt allows (default the paper's `অনুমান করা যাচ্ছে না`). It is counted in its own
  column; `abstentions: wrong` (default, the released scripts) keeps it in `n` as a wrong answer (and in the
  metric means), `excluded` leaves it out of `n` and of every metric.
- A failed request: outside `n` (`failed_requests: excluded`, default) or, as the released scripts, a wrong
  answer whose text is their placeholder `❌ Failed to answer` (`wrong`).
- Metric columns (BERTScore F1; COMET later) are added by `add_metric` with any scorer
  `(predictions, references) -> [float]` over the rows in `n`; `score_table` averages every metric column.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from dialectbias.data import Item
from dialectbias.errors import DataError
from dialectbias.store import Store
from dialectbias.tasks.vlm._items import csu_variant
from dialectbias.tasks.vlm._score import answer_violation

if TYPE_CHECKING:
    import pandas as pd

    from dialectbias.tasks.vlm._csu import CSUTask

#: the paper's abstention phrase ("cannot be guessed"), from the released CSU prompts
ABSTENTION = "অনুমান করা যাচ্ছে না"
#: what the released CSU scripts stored (and scored) for a request that failed after its retries
FAILED_PLACEHOLDER = "❌ Failed to answer"
Extraction = Literal["clean", "raw"]
AbstentionRule = Literal["wrong", "excluded"]
FailedRule = Literal["excluded", "wrong"]
Scorer = Callable[[list[str], list[str]], list[float]]

_FINAL = re.compile(r"final\s+answer\s*[:：]?|চূড়ান্ত\s+উত্তর\s*[:：]?|अंतिम\s+उत्तर\s*[:：]?|حتمی\s+جواب\s*[:：]?",
                    re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:answer|উত্তর|उत्तर|جواب)\s*[:：]\s*", re.IGNORECASE)
_MARKDOWN = re.compile(r"\*\*|__|`+|^\s*#+\s*|^\s*[-*>]\s+", re.MULTILINE)
_QUOTES = "\"'“”‘’«»「」"
_END = " \t।.!?;:,"


def normalize_answer(text: str | None) -> str:
    """NFKC, every run of whitespace one space, ends stripped (the released scripts' `normalize_text`)."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text or "")).strip()


def exact_match(prediction: str, reference: str) -> bool:
    """True when the two are equal after `normalize_answer`."""
    return normalize_answer(prediction) == normalize_answer(reference)


def extract_answer(output: str, how: Extraction = "clean") -> str:
    """The answer a reply gives (see the module docstring for `raw` and `clean`)."""
    text = (output or "").strip()
    if how == "raw":
        return text
    finals = list(_FINAL.finditer(text))
    if finals:
        text = text[finals[-1].end():]
    text = _MARKDOWN.sub("", text)
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    line = _LABEL.sub("", line).strip()
    if len(line) >= 2 and line[0] in _QUOTES and line[-1] in _QUOTES:
        line = line[1:-1].strip()
    return line


def is_abstention(answer: str, phrases: Sequence[str] = (ABSTENTION,)) -> bool:
    """True when the answer is one of the abstention phrases (normalised; wrapping quotes and end punctuation
    ignored, so `অনুমান করা যাচ্ছে না।` abstains too)."""
    key = normalize_answer(answer).strip(_QUOTES + _END)
    return bool(key) and key in {normalize_answer(p).strip(_QUOTES + _END) for p in phrases}


def csu_rows(task: CSUTask, store: Store) -> list[dict[str, Any]]:
    """One row per current request with a result (ok or failed): the answer read, `abstained`,
    `exact_match`, and `in_n` (whether it is in the exact-match denominator and the metric means)."""
    o = task.options
    items: dict[str, Item] = {i.id: i for i in store.iter_items()}
    rows = []
    for r in store.stage_results("generate", ok_only=False, ordered=True):
        item = items.get(r.item_id)
        if item is None or r.status is None:
            continue
        try:
            entry = csu_variant(item, r.variant)
        except DataError:
            continue
        ok = r.status == "ok"
        answer = extract_answer(r.output or "", o.answer_extraction) if ok else ""
        abstained = ok and is_abstention(answer, o.abstention_phrases)
        counted = ok or o.failed_requests == "wrong"
        if not ok and counted:
            answer = FAILED_PLACEHOLDER
        in_n = counted and not (abstained and o.abstentions == "excluded")
        rows.append({
            "model": r.model_id, "item_id": r.item_id, "variant": r.variant, "strategy": r.meta.get("strategy"),
            "domain": item.domain or "", "human_validated": entry.human_validated, "status": r.status,
            "request_id": r.request_id, "question": entry.question, "reference": entry.answer, "answer": answer,
            "counted": counted, "abstained": abstained, "in_n": in_n,
            "exact_match": counted and exact_match(answer, entry.answer),
            "violation": answer_violation(answer, r.variant, task.exp.dialects) if ok and not abstained else None})
    return rows


def add_metric(rows: list[dict[str, Any]], column: str, scorer: Scorer) -> None:
    """Set `column` on every row in `n` to the scorer's value of (answer, reference); None elsewhere."""
    scored = [r for r in rows if r["in_n"]]
    values = scorer([r["answer"] for r in scored], [r["reference"] for r in scored]) if scored else []
    for r in rows:
        r[column] = None
    for r, value in zip(scored, values, strict=True):
        r[column] = float(value)


def score_table(rows: Sequence[dict[str, Any]], metrics: Sequence[str] = ("bertscore_f1",)) -> pd.DataFrame:
    """`model, variant, strategy, domain, n, exact_match` (percent of n, unrounded), each metric column's mean
    over n (empty when not computed), `abstained`, `abstained_share` (of answers) and `answers` (received,
    plus failed requests under `failed_requests: wrong`); per domain and over `all` domains."""
    import pandas as pd  # the report stack: not loaded by a run

    from dialectbias.tasks.vlm._stats import ALL, KEYS

    cols = [*KEYS, "n", "exact_match", *metrics, "abstained", "abstained_share", "answers"]
    counted = [r for r in rows if r["counted"]]
    if not counted:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(counted)
    for m in metrics:
        df[m] = pd.to_numeric(df[m], errors="coerce") if m in df else math.nan
    df["hit"] = (df["exact_match"] & df["in_n"]).astype(float)
    df["in_n"] = df["in_n"].astype(float)
    df["abstained"] = df["abstained"].astype(float)
    parts = []
    for keys, level in ((KEYS, None), (KEYS[:3], ALL)):
        g = df.groupby(keys, sort=True)
        part = pd.DataFrame({"n": g["in_n"].sum().astype(int), "hits": g["hit"].sum(),
                             "abstained": g["abstained"].sum().astype(int), "answers": g.size()})
        for m in metrics:
            part[m] = df[df["in_n"] > 0].groupby(keys, sort=True)[m].mean().reindex(part.index)
        part = part.reset_index()
        if level is not None:
            part["domain"] = level
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out["exact_match"] = [100.0 * h / n if n else math.nan for h, n in zip(out["hits"], out["n"], strict=True)]
    out["abstained_share"] = out["abstained"] / out["answers"]
    return out.sort_values(KEYS, key=lambda s: s.map(lambda v: (v == ALL, v)) if s.name == "domain" else s,
                           ignore_index=True)[cols]
