"""Queue kind `judgments`: low-confidence, flagged or clipped judgments of any rubric (SPEC §4 P3 Human
fallback; Bengali paper §3.3–3.4). The form is the rubric's numeric fields with their anchors, as in the
CSV queue; a submission is the same `judgment_override` record `review import` writes, so the human score
replaces the judge's in the final tables (the latest override wins)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from dialectbias.judges import Rubric, RubricField, load_rubric, packaged_rubrics
from dialectbias.review._kinds import AnnotationError, QueueKind, Rating, ReviewConfig
from dialectbias.review._queue import DEFAULT_RUBRIC, has_script_column, override_value
from dialectbias.review._targets import FormField, Panel, ReviewTarget, scale_keys
from dialectbias.store import OVERRIDE_KIND, JudgmentRecord, Store, get_judgment, iter_judgments

#: a rubric's integer field with at most this many values is a row of radio buttons, else a number box
MAX_SCALE_VALUES = 11
SCRIPT_FIELD = "script_valid"


def rubric_for(config: ReviewConfig, record: JudgmentRecord) -> Rubric:
    if record.judge_id in config.rubrics:
        return config.rubrics[record.judge_id]
    return load_rubric(record.rubric if record.rubric in packaged_rubrics() else DEFAULT_RUBRIC)


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
    description = ("low-confidence, flagged or clipped judgments of the primary judge (any rubric); your scores "
                   "replace the judge's")
    annotation_kind = OVERRIDE_KIND

    def _needs_review(self, config: ReviewConfig, record: JudgmentRecord) -> bool:
        return record.needs_review or (record.judge_id, record.variant) in config.routed

    def targets(self, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
        items = {row[0]: json.loads(row[1]) for row in store.query("SELECT item_id, variants FROM items")}
        for judge in config.judge_ids:
            for record in iter_judgments(store, judge, config.model_ids, with_refs=True):
                if self._needs_review(config, record):
                    yield self._target(config, store, record, items.get(record.item_id, {}))

    def target(self, config: ReviewConfig, store: Store, target_id: str) -> ReviewTarget | None:
        record = get_judgment(store, target_id)
        if record is None or record.judge_id not in config.judge_ids or not self._needs_review(config, record):
            return None
        rows = store.query("SELECT (SELECT json_group_array(s.output) FROM json_each(q.refs) e LEFT JOIN results s "
                           "ON s.request_id = e.value) FROM requests q WHERE q.request_id = ?", (target_id,))
        record.ref_outputs = json.loads(rows[0][0]) if rows else []
        variants = store.query("SELECT variants FROM items WHERE item_id = ?", (record.item_id,))
        return self._target(config, store, record, json.loads(variants[0][0]) if variants else {})

    def _target(self, config: ReviewConfig, store: Store, record: JudgmentRecord, variants: Mapping[str, Any]
                ) -> ReviewTarget:
        rubric = rubric_for(config, record)
        parsed = record.parsed or {}
        std, dia = [*record.ref_outputs, None, None][:2]
        reasoning = parsed.get(rubric.reasoning_field, "") if rubric.reasoning else ""
        if not reasoning and rubric.explanation:
            reasoning = parsed.get(rubric.explanation_field, "")
        if config.judgment_panels is not None:  # the task shows what its judges judged
            panels = list(config.judgment_panels(store, record))
        else:
            panels = [Panel(label="standard question", text=_text(variants.get("standard")), variant="standard",
                            role="question"),
                      Panel(label=f"{record.variant} question", text=_text(variants.get(record.variant)),
                            variant=record.variant, role="question"),
                      Panel(label="answer to the standard question", text=std or "", variant="standard",
                            role="answer"),
                      Panel(label=f"answer to the {record.variant} question", text=dia or "", variant="standard",
                            role="answer")]
        panels.append(Panel(label=f"judge's reasoning ({record.judge_id})", text=str(reasoning or "(none)"),
                            role="reasoning"))
        details = {f"judge {f.name}": parsed.get(f.name, "") for f in rubric.numeric_fields}
        details |= {"judge score": record.score, "confidence": record.confidence,
                    "flags": "; ".join(record.flags) or (record.reason or ""), "rubric": rubric.name}
        return ReviewTarget(queue=self.name, target_id=record.request_id, item_id=record.item_id,
                            dialect=record.variant, title=f"{record.item_id} · {record.variant}", panels=panels,
                            details=details)

    def _rubric(self, config: ReviewConfig, target: ReviewTarget) -> Rubric:
        name = str(target.details.get("rubric", DEFAULT_RUBRIC))
        for rubric in config.rubrics.values():
            if rubric.name == name:
                return rubric
        return load_rubric(name if name in packaged_rubrics() else DEFAULT_RUBRIC)

    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        rubric = self._rubric(config, target)
        out = rubric_form(rubric)
        if has_script_column(rubric):
            out.append(FormField(name=SCRIPT_FIELD, label="dialect answer in the required script?", kind="choice",
                                 description="no = not in the required script: the score is the rubric's lowest",
                                 keys={"yes": "y", "no": "n"}, required=False))
        return out

    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        record = get_judgment(store, target.target_id)
        if record is None:
            raise AnnotationError({"target": "the judgment no longer exists"})
        rubric = rubric_for(config, record)
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
        rubric = load_rubric(value["rubric"]) if value.get("rubric") in packaged_rubrics() else None
        rubric = next((r for r in config.rubrics.values() if r.name == value.get("rubric")), rubric)
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


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
