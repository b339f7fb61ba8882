"""Queue kind `judge_consistency`: people rate how well a judge judged, on the 0–100 rubric BanglaVerse §4.3
adopts from E Sobhani et al. (2026) to validate its caption judge: (i) decision accuracy, 0–50 (does the
judge make the correct quality judgment?), (ii) reasoning alignment, 0–40 (is its analysis logically
consistent with its decision?), (iii) explanation clarity, 0–10 (is the explanation clear and
well-justified?). A rating's total is the Human Consistency Score (HCS) of that judgment; `hcs_table`
averages it per judge and model (the paper: 90.89–92.01 for its Gemini judge over 100 standard-Bengali
samples rated by two experts).

Targets: every current judgment with a parsed answer of the served judge (the primary one unless the app
is given `--judge`) on the experiment's models (`target_id` = the judge request id), showing what was
judged (the task's panels: a caption task shows the reference and the generated caption), the judge's
field values and score, and its explanation or reasoning. The ratings never change a score: they are
stored under their own annotation kind. Draw a sample to rate a subset (`dialectbias review sample
--queue judge_consistency`; default 100 per variant, the paper's 100). The queue is opt-in: an annotator
sees it only when `add-annotator --queues` names it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dialectbias.review._judgment_panels import judgment_panels
from dialectbias.review._kinds import AnnotationError, QueueKind, Rating, ReviewConfig
from dialectbias.review._rubrics import judge_rubric
from dialectbias.review._targets import FormField, Panel, ReviewTarget
from dialectbias.store import JudgmentRecord, Store, get_judgment, item_variants, iter_judgments, ref_outputs

#: (field, maximum points, what it rates) — BanglaVerse §4.3, after E Sobhani et al. (2026)
HCS_COMPONENTS: tuple[tuple[str, int, str], ...] = (
    ("decision_accuracy", 50, "does the judge make the correct quality judgment? (0–50)"),
    ("reasoning_alignment", 40, "is the judge's analysis logically consistent with its decision? (0–40)"),
    ("explanation_clarity", 10, "is the explanation clear and well-justified? (0–10)"),
)
HCS_KIND = "judge_consistency"
JUDGE_DETAIL = "judge"


def parse_component(raw: Any, maximum: int) -> int:
    """A submitted component as an integer in [0, maximum]; ValueError with the reason."""
    if isinstance(raw, bool) or raw is None or raw == "":
        raise ValueError("missing")
    if isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            raise ValueError(f"{raw.strip()!r} is not a number") from None
    elif isinstance(raw, int | float):
        value = float(raw)
    else:
        raise ValueError(f"{raw!r} is not a number")
    if value != int(value):
        raise ValueError(f"{value:g} is not a whole number of points")
    if not 0 <= value <= maximum:
        raise ValueError(f"{value:g} is outside 0–{maximum}")
    return int(value)


def rating_total(value: Mapping[str, Any]) -> int | None:
    """The HCS (0–100) of one stored rating: the sum of its three components; None when one is missing or
    out of range (such a rating is not counted, and the report says how many)."""
    try:
        return sum(parse_component(value.get(name), top) for name, top, _ in HCS_COMPONENTS)
    except ValueError:
        return None


class JudgeConsistencyQueue(QueueKind):
    name = HCS_KIND
    order = 60
    title = "How well the automatic judge judged"
    description = ("rate the automatic judge's verdict: is its conclusion right (0–50), does its reasoning support "
                   "it (0–40), is its explanation clear (0–10). Its scores are not changed.")
    annotation_kind = HCS_KIND
    opt_in = True  # every judgment is a target: only annotators given this queue by name see it

    def targets(self, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
        items = item_variants(store)
        for judge in config.judge_ids:
            for record in iter_judgments(store, judge, config.model_ids, with_refs=True):
                if record.parsed is not None:
                    yield self._target(config, store, record, items.get(record.item_id, {}))

    def target(self, config: ReviewConfig, store: Store, target_id: str) -> ReviewTarget | None:
        record = get_judgment(store, target_id)
        if (record is None or record.parsed is None or record.judge_id not in config.judge_ids
                or record.model_id not in config.model_ids):
            return None
        record.ref_outputs = ref_outputs(store, target_id)
        return self._target(config, store, record, item_variants(store, record.item_id).get(record.item_id, {}))

    def _target(self, config: ReviewConfig, store: Store, record: JudgmentRecord, variants: Mapping[str, Any]
                ) -> ReviewTarget:
        rubric = judge_rubric(config.rubrics, record.judge_id)
        parsed = record.parsed or {}
        panels = judgment_panels(config.judgment_panels, store, record, variants)
        scores = ", ".join(f"{f.name} {parsed.get(f.name, '—')}" for f in rubric.numeric_fields)
        panels.append(Panel(label="the automatic judge's scores", text=scores or "(none)", role="info",
                            name="judge_scores"))
        for field in (rubric.reasoning_field if rubric.reasoning else None,
                      rubric.explanation_field if rubric.explanation else None):
            if field and parsed.get(field):
                panels.append(Panel(label=f"the automatic judge's {field.replace('_', ' ')}", text=str(parsed[field]),
                                    role="reasoning", name=field))
        details = {"judge score": record.score, "rubric": rubric.name, "model": record.model_id,
                   JUDGE_DETAIL: record.judge_id}
        return ReviewTarget(queue=self.name, target_id=record.request_id, item_id=record.item_id,
                            dialect=record.variant, title=f"{record.item_id} · {record.variant} · {record.model_id}",
                            panels=panels, details=details)

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        return [FormField(name=name, label=name.replace("_", " "), kind="number", description=text, minimum=0,
                          maximum=top) for name, top, text in HCS_COMPONENTS]

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for name, top, _ in HCS_COMPONENTS:
            try:
                values[name] = parse_component(data.get(name), top)
            except ValueError as exc:
                problems[name] = str(exc)
        if problems:
            raise AnnotationError(problems)
        return values

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        out: dict[Rating, Any] = {Rating(name, "interval"): value.get(name) for name, _, _ in HCS_COMPONENTS}
        out[Rating("hcs", "interval")] = rating_total(value)
        return out


def hcs_components() -> Sequence[str]:
    return [name for name, _, _ in HCS_COMPONENTS]
