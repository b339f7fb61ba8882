"""What every task with a judge stage shares: the `judgments` row of one finalized judge request, re-scoring the
stored judgments when the experiment changed (issue 19 items 1–2), and the judge stage's yields and summary lines."""

from __future__ import annotations

import json
import sqlite3
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from dialectbias.config import Experiment
from dialectbias.judges import (
    CheckSettings,
    CodeChecks,
    JudgmentValues,
    Rubric,
    evaluate_judgment,
    judge_answer,
    out_of_range_text,
    reevaluate_judgment,
    rescore_override,
    run_checks,
    scoring_fingerprint,
    unscored_kinds,
    unscored_text,
)
from dialectbias.providers import ModelConfig
from dialectbias.run import Outcome, StageYield, Write
from dialectbias.store import (
    JudgeCounts,
    Store,
    dumps,
    judge_counts,
    judge_yields,
    judgments_to_rescore,
    overrides_to_rescore,
    update_judgments,
    update_overrides,
)


def derived_columns(values: JudgmentValues, scoring: str | None) -> dict[str, Any]:
    """The columns of a judgment row derived from the judge's answer by the rubric and settings (`scoring`:
    their fingerprint, `dialectbias.judges.scoring_fingerprint`)."""
    return {
        "parse_status": values.parse_status, "parsed": None if values.parsed is None else dumps(values.parsed),
        "score": values.score, "confidence": values.confidence, "checks": dumps(values.checks),
        "flags": dumps(values.flags), "clipped": dumps({k: list(v) for k, v in values.clipped.items()}),
        "needs_review": int(values.needs_review), "flagged": int(values.flagged), "reason": values.reason,
        "scoring": scoring}


def judgment_row(row: sqlite3.Row, model_id: str, outcome: Outcome, values: JudgmentValues,
                 scoring: str | None = None) -> dict[str, Any]:
    """The record of judge request `row` on model `model_id`'s answer, from the evaluated judgment `values`
    (`scoring`: the fingerprint of the rubric and settings they were computed with; None: re-scored on next use)."""
    return {
        "request_id": row["request_id"], "judge_id": row["model_id"], "model_id": model_id,
        "item_id": row["item_id"], "variant": row["variant"], "rubric": values.rubric,
        "raw_output": outcome.output, "source_request_id": outcome.source_request_id,
        **derived_columns(values, scoring)}


#: the keys of a stored override value derived from the human's field values (`judges.override_value`)
OVERRIDE_DERIVED = ("rubric", "fields", "score", "script_valid", "clipped")


class JudgedTask:
    """A task with a judge stage whose judgments follow the experiment as it is now (issue 19 items 1–2).

    The judge's parsed answer is the measurement; the score, ceilings, flags, the script/refusal zeroing and
    `needs_review` derive from the judge's rubric, `review.confidence_threshold` and the code checks' settings.
    Each judgment row stores the fingerprint of those (`scoring`); `rescore` recomputes, with no model call,
    every current judgment whose fingerprint is not the current one, and the human overrides of them (their
    score through the current rubric). `dialectbias.api.open_experiment` calls it whenever an experiment is
    opened, so a run, `status`, `report`, `export` and the review commands all see the current values.

    A task sets `rubrics` (judge id → rubric) and implements `check_inputs`."""

    exp: Experiment
    rubrics: dict[str, Rubric]

    @abstractmethod
    def check_inputs(self, store: Store, item_id: str, variant: str, refs: Sequence[str],
                     meta: Mapping[str, Any]) -> tuple[str, CheckSettings]:
        """The text the rubric's code checks read (e.g. the dialect answer) and their settings, for the judge
        request on (item, variant) with these refs and meta."""

    def checks_key(self) -> Any:
        """The task settings the code checks depend on beyond the variant (JSON-able), for the fingerprint."""
        return {"dialects": self.exp.dialects}

    def scoring(self, judge_id: str) -> str:
        """The fingerprint of what the judge's judgments are derived with now."""
        cache: dict[str, str] = self.__dict__.setdefault("_scoring", {})
        if judge_id not in cache:
            cache[judge_id] = scoring_fingerprint(self.rubrics[judge_id],
                                                  review_threshold=self.exp.review.confidence_threshold,
                                                  checks=self.checks_key())
        return cache[judge_id]

    def _code_checks(self, store: Store, rubric: Rubric, item_id: str, variant: str, refs: Sequence[str],
                     meta: Mapping[str, Any]) -> CodeChecks:
        if not rubric.checks:
            return run_checks((), "")
        text, settings = self.check_inputs(store, item_id, variant, refs, meta)
        return run_checks(rubric.checks, text, settings)

    def finalize_judgment(self, store: Store, row: sqlite3.Row, outcome: Outcome) -> list[Write]:
        """The judgment of one judge answer (`dialectbias.judges.evaluate_judgment`): the judge's rubric, the
        code checks it declares, review routing; one row of `judgments`."""
        meta, refs = json.loads(row["meta"]), json.loads(row["refs"])
        judge = row["model_id"]
        rubric = self.rubrics[judge]
        code = self._code_checks(store, rubric, row["item_id"], row["variant"], refs, meta)
        values = evaluate_judgment(rubric, outcome.parsed, code, review_threshold=self.exp.review.confidence_threshold)
        return [("judgments", judgment_row(row, meta["model_id"], outcome, values, self.scoring(judge)))]

    def rescore(self, store: Store) -> int:
        """Re-score the current judgments (and their human overrides) derived with another rubric or other
        settings than the experiment's now; no model call. Returns how many judgments changed fingerprint."""
        n = 0
        threshold = self.exp.review.confidence_threshold
        for judge in self.exp.judges:
            rubric = self.rubrics[judge.id]
            fingerprint = self.scoring(judge.id)
            for stale in judgments_to_rescore(store, judge.id, fingerprint):  # in bounded batches
                rows = []
                for j in stale:
                    code = self._code_checks(store, rubric, j.item_id, j.variant, j.refs, j.meta)
                    values = reevaluate_judgment(rubric, j.parse_status, j.parsed, j.clipped, j.reason, code,
                                                 review_threshold=threshold)
                    rows.append({"request_id": j.request_id, **derived_columns(values, fingerprint)})
                update_judgments(store, rows)
                n += len(rows)
            self._rescore_overrides(store, judge.id, rubric)
        return n

    @staticmethod
    def _rescore_overrides(store: Store, judge_id: str, rubric: Rubric) -> None:
        fingerprint = scoring_fingerprint(rubric)
        for stale in overrides_to_rescore(store, judge_id, fingerprint):  # in bounded batches
            updates = []
            for o in stale:
                try:
                    value = rescore_override(rubric, judge_answer(o.judgment_parsed, o.judgment_clipped), o.value)
                except ValueError:
                    continue  # the human's values no longer fit the rubric's fields: its judgment is not current
                kept = {k: v for k, v in o.value.items() if k not in OVERRIDE_DERIVED}  # e.g. a note of the app
                updates.append((o.annotation_id, dumps({**kept, **value}), fingerprint))
            if updates:
                update_overrides(store, updates)


def judge_stage_yields(store: Store, judges: Sequence[ModelConfig]) -> list[StageYield]:
    """Per judge: its scored judgments (unscored ones are unusable)."""
    yields = judge_yields(store)
    out = []
    for judge in judges:
        y = yields.get(judge.id)
        scored = y.scored if y else 0
        detail = (f"{scored} of {y.requests} judge requests scored ({y.unscored} unscored: "
                  f"{unscored_kinds(y.unscored, y.invalid)})"
                  if y and y.requests else "no judgments")
        out.append(StageYield("judge", judge.id, scored, detail))
    return out


def judge_summary_lines(store: Store, judges: Sequence[ModelConfig], review_note: str = "") -> list[str]:
    """One run-summary line per judge: judgments, unscored, and those for human review (`review_note` says why)."""
    counts = judge_counts(store, [j.id for j in judges])
    lines = []
    for judge in judges:
        c = counts.get(judge.id, JudgeCounts())
        lines.append(f"judge {judge.id}: {c.judgments} judgments · {unscored_text(c.unscored, c.invalid)}"
                     f"{out_of_range_text(c.out_of_range)} · "
                     f"{c.needs_review} for human review{review_note}")
    return lines


def out_of_range_alerts(store: Store, judges: Sequence[ModelConfig]) -> list[str]:
    """One line per judge with judgments scored on values it gave out of range, clipped (rubric `out_of_range:
    clip`; issue 24 item 2): what `dialectbias report` warns about and puts at the top of the report."""
    counts = judge_counts(store, [j.id for j in judges])
    return [f"judge {judge.id}: {n} judgment(s) scored on values clipped into their range (rubric out_of_range: "
            "clip): flagged, in the review queue" for judge in judges
            if (n := counts.get(judge.id, JudgeCounts()).out_of_range)]
