"""Queue kind `judgments`: low-confidence, flagged or clipped judgments of any rubric (SPEC §4 P3 Human
fallback; Bengali paper §3.3–3.4). The form is the rubric's numeric fields with their anchors, as in the
CSV queue; a submission is the same `judgment_override` record `review import` writes, so the human score
replaces the judge's in the final tables (the latest override wins)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from dialectbias.judges import Rubric, RubricField
from dialectbias.review._judgment_panels import judgment_panels
from dialectbias.review._kinds import AnnotationError, QueueKind, Rating, ReviewConfig
from dialectbias.review._queue import has_script_column, override_value
from dialectbias.review._rubrics import judge_rubric, rubric_named
from dialectbias.review._targets import FormField, Panel, ReviewTarget, scale_keys
from dialectbias.store import (
    OVERRIDE_KIND,
    JudgmentRecord,
    Store,
    get_judgment,
    item_variants,
    iter_judgments,
    ref_outputs,
)

#: a rubric's integer field with at most this many values is a row of radio buttons, else a number box
MAX_SCALE_VALUES = 11
SCRIPT_FIELD = "script_valid"
#: the target detail naming the judgment's judge (its rubric is the judge's)
JUDGE_DETAIL = "judge"


def _is_scale(f: RubricField) -> bool:
    return (f.type == "integer" and f.minimum is not None and f.maximum is not None
            and f.maximum - f.minimum + 1 <= MAX_SCALE_VALUES)


def parse_number(raw: Any, f: RubricField) -> int | float:
    """A form string or JSON value as the field's value; ValueError with the reason."""
    if isinstance(raw, bool) or raw is None or raw == "":
        raise ValueError("missing")
    if isinstance(raw, str):
        text = raw.strip()
        try:
            value: int | float = int(text) if f.type == "integer" else float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not {'an integer' if f.type == 'integer' else 'a number'}") from None
    elif isinstance(raw, int | float):
        value = raw
    else:
        raise ValueError(f"{raw!r} is not a number")
    if f.type == "integer" and value != int(value):
        raise ValueError(f"{value!r} is not an integer")
    if (f.minimum is not None and value < f.minimum) or (f.maximum is not None and value > f.maximum):
        raise ValueError(f"{value} is outside {f.range_text()}")
    return int(value) if f.type == "integer" else float(value)


def parse_yes_no(raw: Any) -> bool | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "yes", "true", "y"):
        return True
    if text in ("0", "no", "false", "n"):
        return False
    raise ValueError(f"{raw!r} is not yes/no")


def rubric_form(rubric: Rubric) -> list[FormField]:
    """A rubric's numeric fields as form inputs: radio scales with the verbal anchors, or number boxes."""
    out = []
    for f in rubric.numeric_fields:
        if _is_scale(f):
            values = list(range(int(f.minimum or 0), int(f.maximum or 0) + 1))
            out.append(FormField(name=f.name, label=f.name.replace("_", " "), kind="scale",
                                 description=f.description, values=values,
                                 anchors={int(k): v for k, v in (f.anchors or {}).items()}, keys=scale_keys(values)))
        else:
            out.append(FormField(name=f.name, label=f.name.replace("_", " "), kind="number",
                                 description=f.description, minimum=f.minimum, maximum=f.maximum))
    return out


class JudgmentQueue(QueueKind):
    name = "judgments"
    order = 10
    title = "Judgments to check"
    description = ("answers the automatic judge was unsure about or that its checks questioned; your scores "
                   "replace the judge's")
    annotation_kind = OVERRIDE_KIND

    def _needs_review(self, config: ReviewConfig, record: JudgmentRecord) -> bool:
        return record.needs_review or (record.judge_id, record.variant) in config.routed

    def targets(self, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
        items = item_variants(store)
        for judge in config.judge_ids:
            for record in iter_judgments(store, judge, config.model_ids, with_refs=True):
                if self._needs_review(config, record):
                    yield self._target(config, store, record, items.get(record.item_id, {}))

    def target(self, config: ReviewConfig, store: Store, target_id: str) -> ReviewTarget | None:
        record = get_judgment(store, target_id)
        if record is None or record.judge_id not in config.judge_ids or not self._needs_review(config, record):
            return None
        record.ref_outputs = ref_outputs(store, target_id)
        return self._target(config, store, record, item_variants(store, record.item_id).get(record.item_id, {}))

    def _target(self, config: ReviewConfig, store: Store, record: JudgmentRecord, variants: Mapping[str, Any]
                ) -> ReviewTarget:
        rubric = judge_rubric(config.rubrics, record.judge_id)
        parsed = record.parsed or {}
        reasoning = parsed.get(rubric.reasoning_field, "") if rubric.reasoning else ""
        if not reasoning and rubric.explanation:
            reasoning = parsed.get(rubric.explanation_field, "")
        panels = judgment_panels(config.judgment_panels, store, record, variants)
        panels.append(Panel(label="the automatic judge's reasoning", text=str(reasoning or "(none)"),
                            role="reasoning"))
        details = {f"judge {f.name}": parsed.get(f.name, "") for f in rubric.numeric_fields}
        details |= {"judge score": record.score, "confidence": record.confidence,
                    "flags": "; ".join(record.flags) or (record.reason or ""), "rubric": rubric.name,
                    JUDGE_DETAIL: record.judge_id}
        return ReviewTarget(queue=self.name, target_id=record.request_id, item_id=record.item_id,
                            dialect=record.variant, title=f"{record.item_id} · {record.variant}", panels=panels,
                            details=details)

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        rubric = judge_rubric(config.rubrics, str(target.details.get(JUDGE_DETAIL, "")))
        out = rubric_form(rubric)
        if has_script_column(rubric):
            out.append(FormField(name=SCRIPT_FIELD, label="dialect answer in the required script?", kind="choice",
                                 description="no = the answer is not written in the required script (it "
                                             "then gets the lowest score)",
                                 keys={"yes": "y", "no": "n"}, required=False))
        return out

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        record = get_judgment(store, target.target_id)
        if record is None:
            raise AnnotationError({"target": "the judgment no longer exists"})
        rubric = judge_rubric(config.rubrics, record.judge_id)
        problems: dict[str, str] = {}
        script_valid = None
        if has_script_column(rubric):
            try:
                script_valid = parse_yes_no(data.get(SCRIPT_FIELD))
            except ValueError as exc:
                problems[SCRIPT_FIELD] = str(exc)
        values: dict[str, Any] = {}
        given = [f for f in rubric.numeric_fields if data.get(f.name) not in (None, "")]
        if given or script_valid is not False:
            for f in rubric.numeric_fields:
                try:
                    values[f.name] = parse_number(data.get(f.name), f)
                except ValueError as exc:
                    problems[f.name] = str(exc)
        if problems:
            raise AnnotationError(problems)
        try:
            return override_value(rubric, record, values or None, script_valid)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            raise AnnotationError({field: message}) from None

    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        rubric = rubric_named(config.rubrics, str(value.get("rubric", "")))
        out: dict[Rating, Any] = {}
        for name, v in (value.get("fields") or {}).items():
            f = next((f for f in rubric.numeric_fields if f.name == name), None) if rubric else None
            labels = tuple(range(int(f.minimum or 0), int(f.maximum or 0) + 1)) if f is not None and _is_scale(f) \
                else ()
            out[Rating(name, "interval", labels)] = v
        if value.get("score") is not None:
            out[Rating("score", "interval")] = value["score"]
        return out

    def form_values(self, value: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(value.get("fields") or {})
        if value.get("script_valid") is not None:
            out[SCRIPT_FIELD] = "yes" if value["script_valid"] else "no"
        return out
