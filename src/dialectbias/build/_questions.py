"""Standard-Bengali question sets from templates over topic lists (SPEC §4 P1 Question sets; Bengali
dialect-bias paper §3.2: four question types over six domains).

Topic file (YAML), one mapping per domain; every list is optional::

    Technology:
      definitional: [অ্যালগরিদম, {topic: অপারেটিং সিস্টেম, form: called}]   # what | called | meaning
      contrasting: [[হার্ডওয়্যার, সফটওয়্যার]]                              # or {a: …, b: …}
      factual:                                                             # form: name | number
        - {context: বাংলাদেশ, topic: প্রথম কৃত্রিম উপগ্রহ, form: name}
        - {topic: একটি বাইটে থাকা বিট, form: number}
      functional: [রাউটার, {topic: প্রসেসর, form: function}]               # use | function

or a CSV with columns `domain, question_type, topic, topic_b, context, form` (one question per row).
Topics are written in their base form; the genitive (-এর/-র) is added by `genitive`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dialectbias._yaml import load_yaml
from dialectbias.errors import DataError, packaged_or_user_text, validation_problems

QUESTION_TYPES = ("definitional", "contrasting", "factual", "functional")
PAPER_DOMAINS = ("Technology", "Social Sciences", "Health & Sports", "Physical & Natural Sciences",
                 "Arts & Humanities", "Business & Economics")
DEFAULT_TOPICS = "topics.yaml"

# Templates per (question type, form): the paper's §3.2 frameworks, with the genitive written into the
# word ({x_gen}) instead of a detached "-এর".
TEMPLATES: dict[tuple[str, str], str] = {
    ("definitional", "what"): "{topic} কী?",
    ("definitional", "called"): "{topic} কাকে বলে?",
    ("definitional", "meaning"): "{topic} বলতে কী বোঝায়?",
    ("contrasting", "difference"): "{a} এবং {b_gen} মধ্যে প্রধান পার্থক্য কী?",
    ("factual", "name"): "{context_gen}{topic_gen} নাম কী?",
    ("factual", "number"): "{context_gen}{topic_gen} সংখ্যা কত?",
    ("functional", "use"): "{topic} কী কাজে ব্যবহৃত হয়?",
    ("functional", "function"): "{topic_gen} প্রধান কাজ কী?",
}

_VOWEL_SIGNS = set("\u09be\u09bf\u09c0\u09c1\u09c2\u09c3\u09c4\u09c7\u09c8\u09cb\u09cc\u0981")  # া ি … ৌ ঁ
_INDEPENDENT_I_U = set("ইঈউঊ")  # বই → বইয়ের
_INDEPENDENT_OTHER = set("অআঋএঐওঔ")  # ডিএনএ → ডিএনএ-র
_CONSONANT = re.compile(r"[\u0995-\u09b9\u09dc\u09dd\u09df]$")  # ক … হ, ড়, ঢ়, য়
_NUKTA = "\u09bc"  # য়/ড়/ঢ় may be written as য/ড/ঢ + nukta


def genitive(phrase: str) -> str:
    """The possessive form of a Bengali noun phrase (its last word takes -এর/-র):
    হৃৎপিণ্ড → হৃৎপিণ্ডের, মাথা → মাথার, বই → বইয়ের, সৌরজগৎ → সৌরজগতের, রং → রঙের, DNA → DNA-এর."""
    text = phrase.rstrip()
    last = text[-1:]
    if last in _VOWEL_SIGNS:
        return text + "র"
    if last in _INDEPENDENT_I_U:
        return text + "য়ের"
    if last in _INDEPENDENT_OTHER:
        return text + "-র"
    if last == "ৎ":
        return text[:-1] + "তের"
    if last == "ং":
        return text[:-1] + "ঙের"
    if _CONSONANT.search(text.removesuffix(_NUKTA)):
        return text + "ের"
    return text + "-এর"  # Latin letters, digits, punctuation


# -- the topic file ------------------------------------------------------------------------------------


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    topic: str = Field(min_length=1)

    @field_validator("topic")
    @classmethod
    def _strip(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("empty text")
        return value.strip()


class DefinitionalTopic(_Entry):
    form: Literal["what", "called", "meaning"] = "what"


class FunctionalTopic(_Entry):
    form: Literal["use", "function"] = "use"


class FactualTopic(_Entry):
    context: str | None = Field(default=None, description="e.g. বাংলাদেশ in 'বাংলাদেশের জাতীয় ফুলের নাম কী?'")
    form: Literal["name", "number"] = "name"

    @field_validator("context")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None


class ContrastingPair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    a: str = Field(min_length=1)
    b: str = Field(min_length=1)


class DomainTopics(BaseModel):
    """The topic lists of one domain."""

    model_config = ConfigDict(extra="forbid")

    definitional: list[DefinitionalTopic] = Field(default_factory=list)
    contrasting: list[ContrastingPair] = Field(default_factory=list)
    factual: list[FactualTopic] = Field(default_factory=list)
    functional: list[FunctionalTopic] = Field(default_factory=list)

    @field_validator("definitional", "functional", mode="before")
    @classmethod
    def _strings_are_topics(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [{"topic": v} if isinstance(v, str) else v for v in value]

    @field_validator("contrasting", mode="before")
    @classmethod
    def _lists_are_pairs(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        out = []
        for v in value:
            if isinstance(v, list | tuple):
                if len(v) != 2:
                    raise ValueError(f"a pair needs exactly two topics, got {len(v)}: {v!r}")
                v = {"a": v[0], "b": v[1]}
            out.append(v)
        return out


def _from_mapping(data: Any, source: str) -> dict[str, DomainTopics]:
    if not isinstance(data, dict) or not data:
        raise DataError(f"{source}: expected a mapping of domain name -> "
                        "{definitional, contrasting, factual, functional}")
    domains: dict[str, DomainTopics] = {}
    problems: list[str] = []
    for key, entry in data.items():
        name = str(key).strip()
        if not isinstance(entry, dict):
            problems.append(f"  - {name}: expected a mapping with keys {', '.join(QUESTION_TYPES)}")
            continue
        try:
            domains[name] = DomainTopics.model_validate(entry)
        except ValidationError as exc:
            problems += validation_problems(exc, name)
    if problems:
        raise DataError("\n".join([f"{source}: invalid topics file", *problems]))
    return domains


_CSV_COLUMNS = ("domain", "question_type", "topic", "topic_b", "context", "form")
_ENTRY_MODELS: dict[str, type[BaseModel]] = {
    "definitional": DefinitionalTopic, "contrasting": ContrastingPair, "factual": FactualTopic,
    "functional": FunctionalTopic}


def _from_csv(text: str, source: str) -> dict[str, DomainTopics]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in ("domain", "question_type", "topic") if c not in header]
    if missing:
        raise DataError(f"{source}:1: missing column(s) {', '.join(missing)} "
                        f"(columns: {', '.join(_CSV_COLUMNS)})")
    unknown = [c for c in header if c not in _CSV_COLUMNS]
    if unknown:
        raise DataError(f"{source}:1: unknown column(s) {', '.join(unknown)} "
                        f"(columns: {', '.join(_CSV_COLUMNS)})")
    raw: dict[str, dict[str, list[Any]]] = {}
    start = 2
    for row in reader:
        line, start = start, reader.line_num + 1
        cells = {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
        if not any(cells.values()):
            continue
        domain, qtype = cells.get("domain", ""), cells.get("question_type", "")
        if not domain:
            raise DataError(f"{source}:{line}: column domain: empty")
        if qtype not in QUESTION_TYPES:
            raise DataError(f"{source}:{line}: column question_type: {qtype!r} is not one of "
                            f"{', '.join(QUESTION_TYPES)}")
        topic, other, context, form = (cells.get(c, "") for c in ("topic", "topic_b", "context", "form"))
        if not topic:
            raise DataError(f"{source}:{line}: column topic: empty")
        if qtype == "contrasting":
            if not other:
                raise DataError(f"{source}:{line}: column topic_b: a contrasting question needs two topics")
            entry: Any = {"a": topic, "b": other}
        else:
            entry = {"topic": topic, **({"form": form} if form else {})}
            if qtype == "factual" and context:
                entry["context"] = context
            elif context:
                raise DataError(f"{source}:{line}: column context: only factual questions take a context")
        if qtype != "contrasting" and other:
            raise DataError(f"{source}:{line}: column topic_b: only contrasting questions take a second "
                            "topic")
        try:
            _ENTRY_MODELS[qtype].model_validate(entry)
        except ValidationError as exc:
            e = exc.errors()[0]
            column = e["loc"][0] if e["loc"] else "topic"
            raise DataError(f"{source}:{line}: column {column}: {e['msg']}") from None
        raw.setdefault(domain, {}).setdefault(qtype, []).append(entry)
    return _from_mapping(raw, source)


def load_topics(path: str | Path | None = None) -> dict[str, DomainTopics]:
    """Topic lists per domain: the packaged `resources/topics.yaml`, or a user YAML/CSV file.
    Raises DataError naming the file and the key (YAML) or line and column (CSV) at fault."""
    source, text = packaged_or_user_text(path, DEFAULT_TOPICS, DataError)
    text = text.removeprefix("\ufeff")  # a spreadsheet's byte-order mark
    suffix = ".yaml" if path is None else Path(path).suffix.lower()
    if suffix == ".csv":
        return _from_csv(text, source)
    if suffix not in (".yaml", ".yml"):
        raise DataError(f"{source}: expected a .yaml, .yml or .csv topics file")
    data, _ = load_yaml(text, source, DataError)
    return _from_mapping(data, source)


# -- questions -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    domain: str
    question_type: str
    form: str
    text: str

    @property
    def id(self) -> str:
        """Stable across runs and topic-list edits: domain, type and a hash of the question text."""
        digest = hashlib.sha256(f"{self.domain}\x1f{self.question_type}\x1f{self.text}".encode()).hexdigest()
        slug = re.sub(r"[^a-z0-9]+", "-", self.domain.lower()).strip("-") or "domain"
        return f"{slug}.{self.question_type}.{digest[:10]}"

    def item(self) -> dict[str, Any]:
        """A qa_bias item (standard variant only; dialect variants are added by translation)."""
        return {"id": self.id, "domain": self.domain, "question_type": self.question_type,
                "variants": {"standard": self.text}}


def _questions(domain: str, topics: DomainTopics) -> dict[str, list[Question]]:
    def q(qtype: str, form: str, **slots: str) -> Question:
        return Question(domain, qtype, form, TEMPLATES[(qtype, form)].format(**slots))

    return {
        "definitional": [q("definitional", t.form, topic=t.topic) for t in topics.definitional],
        "contrasting": [q("contrasting", "difference", a=p.a.strip(), b_gen=genitive(p.b.strip()))
                        for p in topics.contrasting],
        "factual": [q("factual", t.form, topic_gen=genitive(t.topic),
                      context_gen=genitive(t.context) + " " if t.context else "") for t in topics.factual],
        "functional": [q("functional", t.form, topic=t.topic, topic_gen=genitive(t.topic))
                       for t in topics.functional],
    }


def build_questions(topics: dict[str, DomainTopics], *, per_type: int | None = None,
                    seed: int = 0) -> Iterator[Question]:
    """Fill the templates: every domain × question type, in file order, duplicates dropped. With
    `per_type`, a seeded random subset of that many per (domain, type), kept in file order."""
    for domain, lists in topics.items():
        for qtype, questions in _questions(domain, lists).items():
            unique = list({q.text: q for q in questions}.values())
            if per_type is not None and len(unique) > per_type:
                rng = random.Random(f"{seed}\x1f{domain}\x1f{qtype}")
                keep = set(rng.sample(range(len(unique)), per_type))
                unique = [q for i, q in enumerate(unique) if i in keep]
            yield from unique
