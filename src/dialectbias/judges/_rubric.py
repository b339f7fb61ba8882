"""Rubrics as values (issue 8 item 1): a judge's fields, scales, aggregate, ceilings and checks, declared
once; the JSON schema, the pydantic validator, the prompt's scale text and the score derive from it."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

FieldType = Literal["integer", "number", "boolean", "string"]
ScoreRule = Literal["weighted_sum", "mean", "field", "none"]
Op = Literal["==", "!=", ">=", ">", "<=", "<"]
Problem = tuple[tuple[Any, ...], str]  # (location of the key at fault, message)
#: what happens to a numeric value outside its field's range (issue 24 item 2): `reask` = the answer fails
#: validation and the judge is asked again once (the papers' procedure, the default); `clip` = the value is
#: clipped to the range, the original kept in `clipped`, the judgment flagged and sent to review
OutOfRange = Literal["reask", "clip"]

CHECKS: tuple[str, ...] = ("script", "refusal", "language")
"""Code checks a rubric can declare to run beside the judge (script validity, refusal, language constraint)."""

CONFIDENCE_FIELD = "confidence"
CONFIDENCE_RANGE = (1, 5)
OUT_OF_RANGE_FLAG = "out of range: "  # how a flag of a clipped out-of-range value starts
STRING_MAX_CHARS = 500
_NAME = r"^[A-Za-z][A-Za-z0-9_]*$"
_RESERVED = frozenset(n for n in dir(BaseModel) if not n.startswith("_"))
_OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, ">=": lambda a, b: a >= b,
        ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}
_DEFAULT_CONFIDENCE = {5: "very high (>90% certain)", 4: "high (75–90%)", 3: "moderate (50–75%)",
                       2: "low (25–50%)", 1: "very low (<25%)"}


def _num(x: float) -> int | float:
    """7.0 → 7 for schemas and prompts; 0.5 stays."""
    return int(x) if float(x).is_integer() else x


def _fmt(x: float) -> str:
    return f"{_num(x)}"


def _value_text(x: float) -> str:
    """A judge's value as a flag shows it: 1023984765, 5.5, 1e+300 (never 301 digits)."""
    return f"{x:g}" if isinstance(x, float) and abs(x) >= 1e15 else _fmt(x)


def _yaml_bool_hint(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"got the boolean {str(value).lower()}: YAML reads yes/no/on/off/true/false as booleans; "
                         "quote the text (\"yes\")")
    return value


class RubricField(BaseModel):
    """One field the judge fills. Numeric fields (`integer`, `number`) carry a range, an optional weight
    (used by `score: weighted_sum`) and verbal anchors; `boolean` fields are verdicts (e.g. RLAIF's
    `script_valid`); `string` fields are free text (bounded by `max_chars`) or one of `enum`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME, description="the JSON key")
    type: FieldType
    minimum: float | None = Field(default=None, allow_inf_nan=False)
    maximum: float | None = Field(default=None, allow_inf_nan=False)
    weight: float | None = Field(default=None, ge=0, allow_inf_nan=False,
                                 description="numeric fields, score: weighted_sum; default 1")
    description: str = ""
    anchors: dict[float, str] | None = Field(default=None, description="verbal anchors of numeric values")
    enum: list[str] | None = Field(default=None, min_length=1, description="string fields: the allowed values")
    max_chars: int | None = Field(default=None, ge=1, description=f"free-text fields; default {STRING_MAX_CHARS}")
    out_of_range: OutOfRange | None = Field(default=None, description="numeric fields: this field's policy for a "
                                            "value outside its range; default the rubric's `out_of_range`")

    @field_validator("enum", mode="before")
    @classmethod
    def _enum_not_yaml_bools(cls, value: Any) -> Any:
        if isinstance(value, list):
            for v in value:
                _yaml_bool_hint(v)
        return value

    @property
    def numeric(self) -> bool:
        return self.type in ("integer", "number")

    @property
    def effective_weight(self) -> float:
        return 1.0 if self.weight is None else self.weight

    @model_validator(mode="after")
    def _consistent(self) -> RubricField:
        problems: list[Problem] = []
        if self.name in _RESERVED or self.name.startswith("model_"):
            problems.append((("name",), f"{self.name!r} is reserved (a pydantic model attribute); choose another"))
        if not self.numeric:
            for key in ("minimum", "maximum", "weight", "anchors", "out_of_range"):
                if getattr(self, key) is not None:
                    problems.append(((key,), f"only integer and number fields take {key!r} "
                                             f"({self.name} is {self.type})"))
        if self.type != "string":
            for key in ("enum", "max_chars"):
                if getattr(self, key) is not None:
                    problems.append(((key,), f"only string fields take {key!r} ({self.name} is {self.type})"))
        elif self.enum is not None:
            if len(set(self.enum)) != len(self.enum):
                problems.append((("enum",), "duplicate values"))
            if self.max_chars is not None:
                problems.append((("max_chars",), "an enum field takes no max_chars"))
        if self.type == "integer":
            for key in ("minimum", "maximum"):
                v = getattr(self, key)
                if v is not None and not float(v).is_integer():
                    problems.append(((key,), f"an integer field needs an integer {key}, got {_fmt(v)}"))
        if self.out_of_range == "clip" and self.numeric and self.minimum is None and self.maximum is None:
            problems.append((("out_of_range",), f"{self.name} has no minimum or maximum to clip to"))
        if self.minimum is not None and self.maximum is not None and not self.minimum < self.maximum:
            problems.append((("maximum",), f"maximum ({_fmt(self.maximum)}) must be greater than minimum "
                                           f"({_fmt(self.minimum)})"))
        for value in (self.anchors or {}):
            if (self.minimum is not None and value < self.minimum) or (
                    self.maximum is not None and value > self.maximum):
                problems.append((("anchors", _fmt(value)), f"anchor {_fmt(value)} is outside the field's range "
                                                            f"{self.range_text()}"))
            elif self.type == "integer" and not float(value).is_integer():
                problems.append((("anchors", _fmt(value)),
                                 f"anchor {_fmt(value)} is not an integer ({self.name} is integer)"))
        _raise(problems, "RubricField")
        return self

    def range_text(self) -> str:
        lo = "−∞" if self.minimum is None else _fmt(self.minimum)
        hi = "∞" if self.maximum is None else _fmt(self.maximum)
        return f"{lo}–{hi}"

    def range_words(self) -> str:
        """"from 0 to 5", "≥ 0", "≤ 1" for the prompt."""
        if self.minimum is not None and self.maximum is not None:
            return f"from {_fmt(self.minimum)} to {_fmt(self.maximum)}"
        if self.minimum is not None:
            return f"≥ {_fmt(self.minimum)}"
        return f"≤ {_fmt(self.maximum)}" if self.maximum is not None else "(any value)"

    def python_type(self) -> Any:
        if self.type == "integer":
            return int
        if self.type == "number":
            return float
        if self.type == "boolean":
            return bool
        return Literal[tuple(self.enum)] if self.enum else str

    def json_schema(self) -> dict[str, Any]:
        prop: dict[str, Any] = {"type": self.type}
        if self.description:
            prop["description"] = self.description
        if self.minimum is not None:
            prop["minimum"] = _num(self.minimum)
        if self.maximum is not None:
            prop["maximum"] = _num(self.maximum)
        if self.type == "string":
            if self.enum:
                prop["enum"] = list(self.enum)
            else:
                prop["maxLength"] = self.max_chars or STRING_MAX_CHARS
        return prop


_ITEM_SEPARATORS = re.compile(r"[,;\n،]")
_NO_ITEMS = {"", "none", "n/a", "na", "nil", "-", "—", "–", "[]", "কোনোটি নয়", "নেই"}


def count_items(text: Any) -> int:
    """The items of a free-text list field (e.g. the fidelity judge's `inaccurate_words`): parts separated by a
    comma, semicolon, Arabic comma or new line outside parentheses and brackets (a reason in parentheses may hold
    commas); empty parts and a 'none'-like whole ("none", "n/a", "-", "নেই", …) count 0."""
    value = str(text or "").strip()
    if value.casefold().strip(" .") in _NO_ITEMS:
        return 0
    depth = 0
    parts: list[str] = []
    current: list[str] = []
    for char in value:
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        if depth == 0 and _ITEM_SEPARATORS.match(char):
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return sum(1 for part in parts if part.strip(" .").casefold() not in _NO_ITEMS)


class Condition(BaseModel):
    """`field op value`, e.g. `{field: inaccuracy_count, op: ">=", value: 4}`; `count_items`: the condition reads
    the number of items of a string field's list (`count_items`), e.g. `{field: inaccurate_words, count_items:
    true, op: ">=", value: 4}` (the Bengali paper's ceilings, §3.1.3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    op: Op = "=="
    value: bool | float | str
    count_items: bool = False

    def holds(self, actual: Any) -> bool:
        return bool(_OPS[self.op](count_items(actual) if self.count_items else actual, self.value))

    def text(self) -> str:
        value = str(self.value).lower() if isinstance(self.value, bool) else (
            _fmt(self.value) if isinstance(self.value, float) else repr(self.value))
        return f"{f'items of {self.field}' if self.count_items else self.field} {self.op} {value}"


class Ceiling(BaseModel):
    """A hard ceiling enforced in code: when `when` holds (on the judge's original values), `field` is at
    most `max`; a larger value is clipped, the original kept and the judgment flagged (SPEC §4 P2)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    max: float = Field(allow_inf_nan=False)
    when: Condition


class RubricResult(BaseModel):
    """What a rubric makes of one validated judge answer: field values after ceilings, the score,
    the confidence, `clipped` {field: (original, clipped)} and flags, each a reason."""

    model_config = ConfigDict(frozen=True)

    fields: dict[str, Any]
    score: float | None
    confidence: int | None = None
    clipped: dict[str, tuple[Any, Any]] = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list)


class Rubric(BaseModel):
    """A judge's rubric. Property order of the answer: reasoning (if asked) first, the fields in order,
    the explanation (if asked), the confidence (if asked) last.

    score: `weighted_sum` = Σ weightᵢ·valueᵢ / maximumᵢ over the numeric fields (RLAIF, Sami et al.
    arXiv 2603.21359 §3.3: weights 3, 2.5, 2, 1.5, 1 over 0–5 give 0–10); `mean` = the plain mean of the
    numeric fields; `field` = the value of `score_field` (e.g. a judge's own 0–10 or Overall);
    `none` = no score. Ceilings apply before the score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_\-]*$", max_length=48)
    description: str = ""
    fields: tuple[RubricField, ...]
    score: ScoreRule
    score_field: str | None = Field(default=None, description="score: field only")
    reasoning: bool = False
    reasoning_field: str = Field(default="reasoning", pattern=_NAME)
    reasoning_max_chars: int = Field(default=1500, ge=1)
    reasoning_description: str = "your step-by-step reasoning, written before any score"
    explanation: bool = False
    explanation_field: str = Field(default="explanation", pattern=_NAME)
    explanation_max_chars: int = Field(default=500, ge=1)
    explanation_description: str = "a concise explanation of the scores: key strengths and weaknesses"
    confidence: bool = False
    confidence_anchors: dict[int, str] | None = None
    ceilings: tuple[Ceiling, ...] = ()
    out_of_range: OutOfRange = Field(
        default="reask", description="a numeric value outside its field's range (the confidence's too): `reask` "
        "(fails validation, the judge is asked again once) or `clip` (clipped to the range, flagged, reviewed); "
        "a field's own `out_of_range` wins")
    checks: tuple[str, ...] = Field(default=(), description=f"code checks run beside the judge: {', '.join(CHECKS)}")

    # -- validation of the rubric itself ---------------------------------------------------------
    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        _raise(self._problems(), "Rubric")
        return self

    def _problems(self) -> list[Problem]:
        problems: list[Problem] = [] if self.fields else [(("fields",), "a rubric needs at least one field")]
        by_name = {f.name: f for f in self.fields}
        seen: dict[str, tuple[Any, ...]] = {}
        names: list[tuple[str, tuple[Any, ...]]] = []
        if self.reasoning:
            names.append((self.reasoning_field, ("reasoning_field",)))
        names += [(f.name, ("fields", i, "name")) for i, f in enumerate(self.fields)]
        if self.explanation:
            names.append((self.explanation_field, ("explanation_field",)))
        for name, loc in names:
            if name == CONFIDENCE_FIELD:
                problems.append((loc, "'confidence' is the confidence field's name: set `confidence: true`"))
            elif name in seen:
                problems.append((loc, f"duplicate field name {name!r} (also at {'.'.join(map(str, seen[name]))})"))
            seen.setdefault(name, loc)
        for switch in ("reasoning", "explanation", "confidence"):
            if not getattr(self, switch):
                problems += [((key,), f"{key} needs `{switch}: true`") for key in sorted(self.model_fields_set)
                             if key.startswith(f"{switch}_")]
        for key in ("reasoning_field", "explanation_field"):
            if getattr(self, key) in _RESERVED:
                problems.append(((key,), f"{getattr(self, key)!r} is reserved (a pydantic model attribute)"))
        numeric = [(i, f) for i, f in enumerate(self.fields) if f.numeric]
        if self.score in ("weighted_sum", "mean"):
            if not numeric:
                problems.append((("score",), f"score: {self.score} needs at least one integer or number field"))
            for i, f in numeric:
                for key in ("minimum", "maximum"):
                    if getattr(f, key) is None:
                        problems.append((("fields", i, key), f"score: {self.score} needs a {key} on every "
                                                             f"numeric field"))
                if self.score == "weighted_sum" and f.maximum is not None and f.maximum <= 0:
                    problems.append((("fields", i, "maximum"), "score: weighted_sum divides by each field's "
                                                               "maximum, so it must be > 0"))
            if self.score == "weighted_sum" and numeric and sum(f.effective_weight for _, f in numeric) == 0:
                problems.append((("fields",), "all weights are 0: the score would always be 0"))
        if self.score != "weighted_sum":
            problems += [(("fields", i, "weight"), f"weights are used by score: weighted_sum only "
                                                   f"(this rubric has score: {self.score})")
                         for i, f in enumerate(self.fields) if f.weight is not None]
        if self.score == "field":
            target = by_name.get(self.score_field or "")
            if self.score_field is None:
                problems.append((("score_field",), "score: field needs score_field, the field that is the score"))
            elif target is None:
                problems.append((("score_field",), f"no field named {self.score_field!r}"))
            elif not target.numeric or target.minimum is None or target.maximum is None:
                problems.append((("score_field",), f"{self.score_field!r} must be an integer or number field "
                                                   "with a minimum and a maximum"))
        elif self.score_field is not None:
            problems.append((("score_field",), f"score_field is used by score: field only (score: {self.score})"))
        for i, ceiling in enumerate(self.ceilings):
            problems += _ceiling_problems(i, ceiling, by_name)
        problems += [(("checks", i), f"unknown check {c!r}; known: {', '.join(CHECKS)}")
                     for i, c in enumerate(self.checks) if c not in CHECKS]
        if self.confidence_anchors is not None:
            problems += [(("confidence_anchors", k), f"confidence anchor {k} is outside 1–5")
                         for k in self.confidence_anchors if not 1 <= k <= 5]
        return problems

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Rubric:
        """A copy re-validated when `update` is given, with its own derived schema and validator."""
        if update:
            return Rubric.model_validate({**self.model_dump(exclude_unset=True), **update})
        copied = super().model_copy(deep=deep)
        for key in ("_schema", "_validator"):
            copied.__dict__.pop(key, None)
        return copied

    def __getstate__(self) -> dict[Any, Any]:
        """Pickle without the derived schema and validator (a class made at run time, rebuilt on demand),
        so a rubric travels to worker processes."""
        state = super().__getstate__()
        state["__dict__"] = {k: v for k, v in state["__dict__"].items() if k not in ("_schema", "_validator")}
        return state

    # -- derivations ------------------------------------------------------------------------------
    def question(self) -> dict[str, Any]:
        """What the judge is asked: the rubric without how its answer is scored (weights, the score rule,
        ceilings, code checks). Two rubrics with the same question get the same prompt and schema, so the
        judge's stored answers serve both; the score derives from the rubric at hand (issue 19 item 1)."""
        data = self.model_dump(mode="json", exclude={"score", "score_field", "ceilings", "checks", "out_of_range"})
        data["fields"] = [{k: v for k, v in f.items() if k not in ("weight", "out_of_range")} for f in data["fields"]]
        return data

    def clips(self, name: str) -> bool:
        """Whether a value of field `name` (or `confidence`) outside its range is clipped (`out_of_range: clip`,
        the field's own policy first) rather than re-asked; only a numeric field with a bound clips."""
        if name == CONFIDENCE_FIELD and self.confidence:
            return self.out_of_range == "clip"
        f = self.field(name)
        return f.numeric and (f.minimum is not None or f.maximum is not None) and \
            (f.out_of_range or self.out_of_range) == "clip"

    def answer_rule(self) -> str | None:
        """What the out-of-range policy makes of the calls, when not the default: "out_of_range clip: <fields>"
        (None when every value out of range is re-asked). It decides whether an answer is re-asked, so it is part
        of a judge request's identity (`RequestSpec.answer_rule`): a change builds new requests, which take the
        judge's first answers from the cache and handle them under the policy now (issue 24 item 2)."""
        names = [f.name for f in self.numeric_fields if self.clips(f.name)]
        names += [CONFIDENCE_FIELD] if self.confidence and self.clips(CONFIDENCE_FIELD) else []
        return f"out_of_range clip: {', '.join(names)}" if names else None

    @property
    def schema_name(self) -> str:
        """The `response_format` schema name (OpenAI allows [A-Za-z0-9_-], up to 64 characters)."""
        return f"{self.name}_judgment"

    @property
    def numeric_fields(self) -> tuple[RubricField, ...]:
        return tuple(f for f in self.fields if f.numeric)

    def field(self, name: str) -> RubricField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"rubric {self.name!r} has no field {name!r}")

    @property
    def score_bounds(self) -> tuple[float, float] | None:
        """The score's range (RLAIF 0–10, a mean of [0, 1] fields 0–1); None when the rubric has no score."""
        if self.score == "none":
            return None
        if self.score == "field":
            f = self.field(self.score_field or "")
            return float(f.minimum or 0), float(f.maximum or 0)
        fields = self.numeric_fields
        if self.score == "mean":
            n = len(fields)
            return sum(f.minimum or 0 for f in fields) / n, sum(f.maximum or 0 for f in fields) / n
        return (sum(f.effective_weight * (f.minimum or 0) / (f.maximum or 1) for f in fields),
                sum(f.effective_weight for f in fields))

    def json_schema(self) -> dict[str, Any]:
        """Strict JSON schema for `response_format`: every key required, no others, properties in answer
        order, numeric bounds, free text bounded by `maxLength` (so a rambling judge still closes its JSON).
        Cached per rubric: treat the returned dict as read-only."""
        return self._schema

    def validator(self) -> type[BaseModel]:
        """The pydantic model judge answers are validated against (`parse_structured(text, rubric.validator())`):
        extra keys forbidden, numeric bounds and enums enforced, properties in answer order. Free-text length
        bounds are not enforced: a judge that wrote a long reasoning and still closed its JSON gave a usable
        answer (the bound is in the schema, for constrained decoding). Cached per rubric."""
        return self._validator

    @cached_property
    def _schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {}
        if self.reasoning:
            props[self.reasoning_field] = {"type": "string", "description": self.reasoning_description,
                                           "maxLength": self.reasoning_max_chars}
        for f in self.fields:
            props[f.name] = f.json_schema()
        if self.explanation:
            props[self.explanation_field] = {"type": "string", "description": self.explanation_description,
                                             "maxLength": self.explanation_max_chars}
        if self.confidence:
            props[CONFIDENCE_FIELD] = {"type": "integer", "description": "your confidence that this judgment "
                                       "is correct, 1 (very low) to 5 (very high)", "minimum": 1, "maximum": 5}
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    @cached_property
    def _validator(self) -> type[BaseModel]:
        defs: dict[str, Any] = {}
        if self.reasoning:
            defs[self.reasoning_field] = (str, Field(description=self.reasoning_description))
        for f in self.fields:
            bounds: dict[str, Any] = {"ge": f.minimum, "le": f.maximum} if f.numeric else {}
            if f.type == "integer":
                bounds = {k: None if v is None else int(v) for k, v in bounds.items()}
            if f.numeric and self.clips(f.name):  # any finite number passes; `evaluate` clips it to the range
                bounds = {"allow_inf_nan": False} if f.type == "number" else {}
            defs[f.name] = (f.python_type(), Field(description=f.description or None, **bounds))
        if self.explanation:
            defs[self.explanation_field] = (str, Field(description=self.explanation_description))
        if self.confidence:
            lo, hi = CONFIDENCE_RANGE
            defs[CONFIDENCE_FIELD] = (int, Field() if self.clips(CONFIDENCE_FIELD) else Field(ge=lo, le=hi))
        class_name = "".join(part.capitalize() for part in re.split(r"[_\-]+", self.name)) + "Judgment"
        return create_model(class_name, __config__=ConfigDict(extra="forbid"),
                            __doc__=self.description or f"A judgment on the {self.name} rubric.", **defs)

    def scale_text(self) -> str:
        """The prompt's description of the answer: every key in order with its type, range, meaning and
        anchors — what the judge reads (render it into a judge template as `{{ scale }}`)."""
        lines = ["Answer with one JSON object with exactly these keys, in this order:"]
        if self.reasoning:
            lines.append(f"- {self.reasoning_field} (text, at most {self.reasoning_max_chars} characters; "
                         f"write it FIRST): {self.reasoning_description}")
        for f in self.fields:
            if f.numeric:
                kind = f"{'an integer' if f.type == 'integer' else 'a number'} {f.range_words()}"
            elif f.type == "boolean":
                kind = "true or false"
            elif f.enum:
                kind = "one of " + ", ".join(f'"{v}"' for v in f.enum)
            else:
                kind = f"text, at most {f.max_chars or STRING_MAX_CHARS} characters"
            lines.append(f"- {f.name} ({kind})" + (f": {f.description}" if f.description else ""))
            if f.anchors:
                anchors = [f"{_fmt(v)} = {text}" for v, text in sorted(f.anchors.items())]
                short = all(len(text) <= 30 and "," not in text for text in f.anchors.values())
                lines += ["  " + ", ".join(anchors)] if short else [f"  {a}" for a in anchors]
        if self.explanation:
            lines.append(f"- {self.explanation_field} (text, at most {self.explanation_max_chars} characters): "
                         f"{self.explanation_description}")
        if self.confidence:
            lines.append(f"- {CONFIDENCE_FIELD} (an integer from 1 to 5): "
                         "your confidence that this judgment is correct")
            confidence_anchors = self.confidence_anchors or _DEFAULT_CONFIDENCE
            lines += [f"  {k} = {confidence_anchors[k]}" for k in sorted(confidence_anchors, reverse=True)]
        return "\n".join(lines)

    # -- evaluation -------------------------------------------------------------------------------
    def evaluate(self, value: BaseModel | Mapping[str, Any]) -> RubricResult:
        """Apply the ceilings to one judge answer (a validated value, or a mapping validated here) and
        compute the score. Conditions read the judge's original values; a field under several ceilings
        gets the lowest that applies. Raises pydantic.ValidationError for a mapping that is not valid."""
        model = self.validator()
        if not isinstance(value, model):
            value = model.model_validate(value if isinstance(value, Mapping) else value.model_dump())
        data = value.model_dump()
        answer = {f.name: data[f.name] for f in self.fields}
        if self.confidence:
            answer[CONFIDENCE_FIELD] = data[CONFIDENCE_FIELD]
        in_range, range_clipped, range_flags = self._clip_to_ranges(answer)
        confidence = in_range.pop(CONFIDENCE_FIELD, None)
        fields, clipped, flags = self._apply_ceilings(in_range)
        for name, (_, capped) in clipped.items():  # a value out of range, then capped: keep the judge's own
            if name in range_clipped:
                clipped[name] = (range_clipped[name][0], capped)
        return RubricResult(fields=fields, score=self._score(fields), clipped={**range_clipped, **clipped},
                            flags=[*range_flags, *flags], confidence=confidence)

    def _clip_to_ranges(self, answer: Mapping[str, Any],
                        ) -> tuple[dict[str, Any], dict[str, tuple[Any, Any]], list[str]]:
        """The values with those outside their range clipped to it (fields with `out_of_range: clip`; values a
        re-asking field would have failed validation on), {field: (original, clipped)} and one flag per clip."""
        values = dict(answer)
        clipped: dict[str, tuple[Any, Any]] = {}
        flags: list[str] = []
        for name, value in answer.items():
            if not self.clips(name) or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            lo: float | None
            hi: float | None
            if name == CONFIDENCE_FIELD:
                (lo, hi), integer = CONFIDENCE_RANGE, True
            else:
                f = self.field(name)
                lo, hi, integer = f.minimum, f.maximum, f.type == "integer"
            bound = lo if lo is not None and value < lo else hi if hi is not None and value > hi else None
            if bound is None:
                continue
            values[name] = int(bound) if integer else float(bound)
            clipped[name] = (value, values[name])
            flags.append(f"{OUT_OF_RANGE_FLAG}{name} {_value_text(value)} clipped to {_fmt(values[name])}")
        return values, clipped, flags

    def rescore(self, values: Mapping[str, Any]) -> RubricResult:
        """Score a set of numeric field values given by someone else than the judge (a human override):
        every numeric field is required and must be within its range (an integer field an integer);
        ceilings apply as in `evaluate`, a condition on a field missing from `values` does not hold.
        Raises ValueError naming the field at fault."""
        fields: dict[str, Any] = {}
        for f in self.numeric_fields:
            if f.name not in values or values[f.name] is None:
                raise ValueError(f"{f.name}: missing")
            v = values[f.name]
            if isinstance(v, bool) or not isinstance(v, int | float) or (f.type == "integer" and v != int(v)):
                raise ValueError(f"{f.name}: {v!r} is not {'an integer' if f.type == 'integer' else 'a number'}")
            if (f.minimum is not None and v < f.minimum) or (f.maximum is not None and v > f.maximum):
                raise ValueError(f"{f.name}: {_fmt(v)} is outside {f.range_text()}")
            fields[f.name] = int(v) if f.type == "integer" else float(v)
        capped, clipped, flags = self._apply_ceilings({**values, **fields})
        fields = {name: capped[name] for name in fields}
        return RubricResult(fields=fields, score=self._score(fields), clipped=clipped, flags=flags)

    def _apply_ceilings(self, original: Mapping[str, Any],
                        ) -> tuple[dict[str, Any], dict[str, tuple[Any, Any]], list[str]]:
        """The values after the ceilings, {field: (original, capped)} of the clipped ones and one flag per
        clip. Conditions read `original`; a condition on a field missing from it does not hold."""
        fields = dict(original)
        clipped: dict[str, tuple[Any, Any]] = {}
        flags: list[str] = []
        for ceiling in self.ceilings:
            if ceiling.when.field in original and ceiling.when.holds(original[ceiling.when.field]) \
                    and fields[ceiling.field] > ceiling.max:
                cap = int(ceiling.max) if self.field(ceiling.field).type == "integer" else ceiling.max
                flags.append(f"ceiling: {ceiling.field} {_fmt(fields[ceiling.field])} clipped to {_fmt(cap)} "
                             f"({ceiling.when.text()})")
                fields[ceiling.field] = cap
                clipped[ceiling.field] = (original[ceiling.field], cap)
        return fields, clipped, flags

    def _score(self, values: Mapping[str, Any]) -> float | None:
        if self.score == "none":
            return None
        if self.score == "field":
            return float(values[self.score_field or ""])
        fields = self.numeric_fields
        if self.score == "mean":
            return sum(values[f.name] for f in fields) / len(fields)
        # Σ w·v / max, summed per maximum so one common maximum computes exactly as `rlaif_score`
        groups: dict[float, list[RubricField]] = {}
        for f in fields:
            groups.setdefault(float(f.maximum or 0), []).append(f)
        return float(sum(sum(f.effective_weight * values[f.name] for f in group) / maximum
                         for maximum, group in groups.items()))


def _ceiling_problems(i: int, ceiling: Ceiling, by_name: Mapping[str, RubricField]) -> list[Problem]:
    problems: list[Problem] = []
    target = by_name.get(ceiling.field)
    if target is None:
        problems.append((("ceilings", i, "field"), f"no field named {ceiling.field!r}"))
    elif not target.numeric:
        problems.append((("ceilings", i, "field"), f"{ceiling.field!r} is {target.type}: only integer and number "
                                                   "fields take ceilings"))
    else:
        if (target.minimum is not None and ceiling.max < target.minimum) or (
                target.maximum is not None and ceiling.max > target.maximum):
            problems.append((("ceilings", i, "max"), f"{_fmt(ceiling.max)} is outside {ceiling.field}'s range "
                                                     f"{target.range_text()}"))
        if target.type == "integer" and not float(ceiling.max).is_integer():
            problems.append((("ceilings", i, "max"), f"{ceiling.field} is an integer field: max must be an integer"))
    when = ceiling.when
    source = by_name.get(when.field)
    if source is None:
        problems.append((("ceilings", i, "when", "field"), f"no field named {when.field!r}"))
        return problems
    loc = ("ceilings", i, "when", "value")
    if when.count_items:
        if source.type != "string":
            problems.append((("ceilings", i, "when", "count_items"), f"{when.field} is {source.type}: only a "
                                                                     "string field's items are counted"))
        elif isinstance(when.value, bool) or not isinstance(when.value, float):
            problems.append((loc, "an item count is compared with a number"))
    elif source.numeric:
        if isinstance(when.value, bool) or not isinstance(when.value, float) or math.isnan(when.value):
            problems.append((loc, f"{when.field} is {source.type}: compare it with a number"))
    elif when.op not in ("==", "!="):
        problems.append((("ceilings", i, "when", "op"), f"{when.field} is {source.type}: use == or !="))
    elif source.type == "boolean" and not isinstance(when.value, bool):
        problems.append((loc, f"{when.field} is boolean: compare it with true or false"))
    elif source.type == "string":
        if not isinstance(when.value, str):
            problems.append((loc, f"{when.field} is a string field: compare it with a quoted string "
                                  "(YAML reads yes/no/true/false unquoted as booleans)"))
        elif source.enum and when.value not in source.enum:
            problems.append((loc, f"{when.value!r} is not one of {source.enum}"))
    return problems


def _raise(problems: list[Problem], title: str) -> None:
    """Raise the problems as one pydantic ValidationError whose locations point at the keys at fault
    (so a rubric file's error names the line of the bad key)."""
    if problems:
        raise ValidationError.from_exception_data(title, [
            {"type": "value_error", "loc": loc, "input": None, "ctx": {"error": message}} for loc, message in problems])
