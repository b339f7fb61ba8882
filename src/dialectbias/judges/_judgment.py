"""One judgment record for any rubric (issue 8 item 2): a judge's parsed answer → the rubric's evaluation
(ceilings, score, confidence) → the code checks the rubric declares (script, refusal) and the script/refusal
decision → review routing → the values stored in `judgments`.

Pure: the caller gives the text the checks read (for qa_bias, the dialect answer) and the review threshold;
nothing here touches the store or a task.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dialectbias.judges._rubric import CONFIDENCE_FIELD, Rubric
from dialectbias.judges._structured import StructuredParse
from dialectbias.judges._verdict import judgment_reason, script_refusal_verdict
from dialectbias.text import ScriptVerdict, check_script, detect_refusal

JUDGE_SCRIPT_FIELD = "script_valid"  # the judge-side verdicts `script_refusal_verdict` weighs against the code's
JUDGE_REFUSAL_FIELD = "refusal"
SCORING_VERSION = 1  # bump when the code that derives a judgment's values changes: every stored one is re-scored


@dataclass(frozen=True)
class CheckSettings:
    """How the code checks read a text: the script it must be in, the share of its letters that must be,
    and the longest run of Latin words tolerated as an embedded term (`dialectbias.text.check_script`)."""

    script: str = "bengali"
    threshold: float = 0.6
    max_term_words: int = 4
    #: who zeroes a judgment (`script_refusal_verdict`): agreement (the judge with the code's agreement, or the
    #: code when the script is clearly wrong) or judge (the judge's verdict alone, the Bengali paper's rule)
    zero_rule: str = "agreement"


@dataclass(frozen=True)
class CodeChecks:
    """What the code checks found: `script` None when the script check did not run; `refusal` the matched
    refusal pattern (None: none found, or the check did not run — see `ran`)."""

    ran: tuple[str, ...] = ()
    script: ScriptVerdict | None = None
    refusal: str | None = None
    zero_rule: str = "agreement"  # CheckSettings.zero_rule, for the verdict (not stored with the checks)

    def as_json(self) -> dict[str, Any]:
        """The stored `checks` object: {"script": {"status", "share", "reason"}, "refusal": pattern or null},
        with only the checks that ran."""
        out: dict[str, Any] = {}
        if self.script is not None:
            out["script"] = {"status": self.script.status, "share": self.script.share, "reason": self.script.reason}
        if "refusal" in self.ran:
            out["refusal"] = self.refusal
        return out


def run_checks(names: Sequence[str], text: str, settings: CheckSettings = CheckSettings()) -> CodeChecks:
    """Run the named code checks (`script`, `refusal`) on `text`; other names raise ValueError."""
    unknown = [n for n in names if n not in ("script", "refusal")]
    if unknown:
        raise ValueError(f"no code check named {', '.join(map(repr, unknown))} here (script, refusal)")
    script = check_script(text, settings.script, threshold=settings.threshold,
                          max_term_words=settings.max_term_words) if "script" in names else None
    refusal = detect_refusal(text) if "refusal" in names else None
    return CodeChecks(ran=tuple(names), script=script, refusal=refusal, zero_rule=settings.zero_rule)


#: `reason` of an unscored judgment whose (last) answer was a JSON object of the rubric's shape with values that
#: failed validation (out of range, wrong type): counted as "invalid values", apart from "parse failed"
#: (issue 24 item 6). `parse_status` stays "failed" (unscored) for both: stores of any version read alike.
INVALID_VALUES_PREFIX = "invalid values: "


def unscored_kinds(unscored: int, invalid: int) -> str:
    """Why `unscored` judgments, `invalid` of them with invalid values, are unscored: "parse failed",
    "invalid values", or "3 parse failed, 1 invalid values"."""
    if not invalid:
        return "parse failed"
    if invalid == unscored:
        return "invalid values"
    return f"{unscored - invalid} parse failed, {invalid} invalid values"


def out_of_range_text(clipped: int) -> str:
    """How summaries name scored judgments with a value out of range clipped (`out_of_range: clip`): " · 3 clipped
    out of range (flagged, for review)", or "" when none (a judge on `reask` never clips)."""
    return f" · {clipped} clipped out of range (flagged, for review)" if clipped else ""


def unscored_text(unscored: int, invalid: int) -> str:
    """How summaries name `unscored` judgments of which `invalid` had invalid values: "4 unscored (parse
    failed)", "4 unscored (invalid values)", or "4 unscored (3 parse failed, 1 invalid values)"."""
    return f"{unscored} unscored ({unscored_kinds(unscored, invalid)})"


class JudgmentValues(BaseModel):
    """The derived part of one judgment row: what the rubric, the checks and the review rule made of the
    judge's answer. `parsed` is the answer with its fields after ceilings (None when it did not parse);
    `flags` the reasons a human should look; `reason` the one-line summary stored in `judgments.reason`
    (prefixed 'zeroed: ' or 'review: ', or the parse error of an unscored judgment)."""

    model_config = ConfigDict(frozen=True)

    rubric: str
    parse_status: str
    parsed: dict[str, Any] | None = None
    score: float | None = None
    confidence: int | None = None
    checks: dict[str, Any] = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list)
    clipped: dict[str, tuple[Any, Any]] = Field(default_factory=dict)
    zeroed: bool = False
    flagged: bool = False
    needs_review: bool = True
    reason: str | None = None


def _boolean_field(rubric: Rubric, name: str) -> bool:
    return any(f.name == name and f.type == "boolean" for f in rubric.fields)


def evaluate_judgment(rubric: Rubric, parsed: StructuredParse | None, code: CodeChecks, *,
                      review_threshold: int) -> JudgmentValues:
    """The judgment of one judge answer on `rubric`.

    Parsed: the rubric's ceilings and score; with `script`/`refusal` checks, the judge's `script_valid`/
    `refusal` verdicts (when the rubric has them) and the code's go through `script_refusal_verdict`
    (Bengali paper §3.3: zeroed = the rubric's lowest score, e.g. RLAIF 0; disagreements flagged).
    Review: confidence ≤ `review_threshold`, flagged, or clipped (by a ceiling, or a value out of its range under
    `out_of_range: clip`, flagged "out of range: <field> <value> clipped to <bound>"). Not parsed: unscored
    (never 0), needs review, `reason` = the parse error (prefixed `INVALID_VALUES_PREFIX` when the JSON
    parsed but its values failed validation)."""
    checks = code.as_json()
    if parsed is None or parsed.value is None:
        reason = (parsed.error if parsed else None) or "no answer to parse"
        if parsed is not None and parsed.failure == "values":
            reason = INVALID_VALUES_PREFIX + reason
        return JudgmentValues(rubric=rubric.name, parse_status=parsed.status if parsed else "failed",
                              checks=checks, reason=reason)
    value = parsed.value
    answer = value.model_dump() if isinstance(value, BaseModel) else dict(value)
    result = rubric.evaluate(value)
    judge_script = answer.get(JUDGE_SCRIPT_FIELD) if _boolean_field(rubric, JUDGE_SCRIPT_FIELD) else None
    judge_refusal = answer.get(JUDGE_REFUSAL_FIELD) if _boolean_field(rubric, JUDGE_REFUSAL_FIELD) else None
    judge_only = code.zero_rule == "judge"  # the paper's rule: the judge's own verdicts zero the scores
    decision = script_refusal_verdict(judge_script, judge_refusal if "refusal" in code.ran or judge_only else False,
                                      code.script, code.refusal, judge_only=judge_only)
    score = result.score
    if decision.zero and score is not None:
        bounds = rubric.score_bounds
        score = bounds[0] if bounds else 0.0
    flags = [*decision.reasons, *result.flags]
    flagged = decision.flagged or bool(result.clipped)
    low = result.confidence is not None and result.confidence <= review_threshold
    confidence = {CONFIDENCE_FIELD: result.confidence} if CONFIDENCE_FIELD in result.clipped else {}
    return JudgmentValues(
        rubric=rubric.name, parse_status=parsed.status, parsed={**answer, **result.fields, **confidence},
        score=score,
        confidence=result.confidence, checks=checks, flags=flags, clipped=result.clipped, zeroed=decision.zero,
        flagged=flagged, needs_review=flagged or low, reason=judgment_reason(decision.zero, flags))


def scoring_fingerprint(rubric: Rubric, *, review_threshold: int | None = None,
                        checks: CheckSettings | Mapping[str, Any] | None = None) -> str:
    """What a stored judgment's derived values (score, ceilings, flags, zeroing, review routing) were computed
    with: the whole rubric, the review threshold and the code checks' settings. A judgment whose stored
    fingerprint differs is re-scored from its parsed answer (`reevaluate_judgment`), with no model call; the
    rubric's fields (its JSON schema) are also part of the judge request itself, so a change to them asks the
    judge again. `review_threshold` None: a human override's fingerprint (only the rubric counts)."""
    settings = asdict(checks) if isinstance(checks, CheckSettings) else dict(checks or {})
    # the out-of-range policy counts by what it does (`answer_rule`, None by default), so a rubric that keeps the
    # default has the fingerprint it had before the policy existed: its stored judgments are not re-scored
    dumped = rubric.model_dump(mode="json", exclude={"out_of_range": True, "fields": {"__all__": {"out_of_range"}}})
    key = {"version": SCORING_VERSION, "rubric": dumped, "review": review_threshold, "checks": settings,
           **({"answer_rule": rule} if (rule := rubric.answer_rule()) else {})}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:32]


def judge_answer(parsed: Mapping[str, Any], clipped: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's own answer of a stored judgment: `parsed` holds the fields after ceilings, `clipped`
    {field: [original, capped]} the originals of those a ceiling lowered."""
    return {**parsed, **{name: pair[0] for name, pair in clipped.items()}}


def reevaluate_judgment(rubric: Rubric, parse_status: str, parsed: Mapping[str, Any] | None,
                        clipped: Mapping[str, Any], reason: str | None, code: CodeChecks, *,
                        review_threshold: int) -> JudgmentValues:
    """A stored judgment evaluated again on the rubric and settings as they are now (`evaluate_judgment` on
    the judge's answer as it was parsed, ceilings undone first). An answer that did not parse stays unscored
    with its parse error; a stored answer the rubric no longer accepts (possible only for a row written
    before its request carried the rubric's schema) is unscored (score None, needs review) with the reason, its
    answer and parse status kept as they were."""
    if parse_status == "failed" or parsed is None:
        return evaluate_judgment(rubric, StructuredParse(status="failed", error=reason), code,
                                 review_threshold=review_threshold)
    answer = judge_answer(parsed, clipped)
    try:
        value = rubric.validator().model_validate(answer)
    except ValidationError as exc:  # kept as the judge gave it (no ceiling applied), so a later rubric may read it
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
        return JudgmentValues(rubric=rubric.name, parse_status=parse_status, parsed=answer, checks=code.as_json(),
                              reason=f"the stored answer does not fit the rubric {rubric.name!r} now ({problem})")
    return evaluate_judgment(rubric, StructuredParse(status=parse_status, value=value),  # type: ignore[arg-type]
                             code, review_threshold=review_threshold)


def override_value(rubric: Rubric, judge_fields: Mapping[str, Any], values: Mapping[str, Any] | None,
                   script_valid: bool | None) -> dict[str, Any]:
    """The stored value of a human override (`judgment_override`) of a judgment on `rubric`: the human's
    field `values` scored through the rubric (weights, ceilings; a ceiling's condition may read the judge's
    other fields, `judge_fields`); with `script_valid` False the score is the rubric's lowest, and with no
    values every field is at its lowest (Bengali paper App. B.2). Raises ValueError naming the field at fault."""
    if values is None:
        if script_valid is not False:
            raise ValueError(f"{rubric.numeric_fields[0].name}: missing")
        values = {f.name: f.minimum if f.minimum is not None else 0 for f in rubric.numeric_fields}
    result = rubric.rescore({**judge_fields, **values})
    score = result.score
    if script_valid is False and score is not None:
        score = (rubric.score_bounds or (0.0, 0.0))[0]
    value: dict[str, Any] = {"rubric": rubric.name, "fields": result.fields, "score": score,
                             "script_valid": script_valid}
    if result.clipped:
        value["clipped"] = {k: list(v) for k, v in result.clipped.items()}
    return value


def rescore_override(rubric: Rubric, judge_fields: Mapping[str, Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    """A stored override value re-scored with the rubric as it is now: the human's own field values (ceilings
    undone) through `override_value`. Raises ValueError when they no longer fit the rubric."""
    fields = stored.get("fields")
    values = judge_answer(fields, stored.get("clipped") or {}) if isinstance(fields, Mapping) else None
    return override_value(rubric, judge_fields, values, stored.get("script_valid"))
