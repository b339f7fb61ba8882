"""Which parts of an item's source variant the translator translates, and how the translated parts make a
variant of the same shape again.

A variant is a string (qa_bias, association items) or an object (VQA items: `question`, `options` (a list
of strings), `answer_index`, `caption` …). Every string field and every list of strings is a *field
group*, translated by one request; a list comes back aligned (same length, same order). Other values
(numbers, ids, nested objects) are copied. A string field equal to an element of a translated list (a VQA
`answer` given as text) is not translated on its own: it takes the translation of that element, so it
still names the same option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: the field name of a variant that is a plain string
TEXT_FIELD = "text"


@dataclass(frozen=True)
class FieldGroup:
    """One request's worth of a variant: a string field (`texts` has one element) or a list of strings."""

    name: str
    texts: tuple[str, ...]
    is_list: bool


@dataclass(frozen=True)
class VariantPlan:
    """How to translate one source variant: its groups, the string fields that follow a list element
    (`derived`: field -> (list field, index)) and the requested fields it lacks or cannot translate."""

    groups: tuple[FieldGroup, ...]
    derived: Mapping[str, tuple[str, int]]
    missing: tuple[str, ...]


def plan_variant(value: Any, fields: Sequence[str] | None = None) -> VariantPlan:
    """The field groups of a source variant; `fields` restricts an object variant to those keys (default:
    every string and list-of-strings field)."""
    if isinstance(value, str):
        return VariantPlan((FieldGroup(TEXT_FIELD, (value,), False),) if value.strip() else (), {}, ())
    if not isinstance(value, Mapping):
        return VariantPlan((), {}, (f"a {type(value).__name__}, not a string or an object",))
    wanted = list(fields) if fields is not None else list(value)
    missing = tuple(name for name in wanted if name not in value)
    groups: list[FieldGroup] = []
    strings: list[str] = []
    for name in wanted:
        v = value.get(name)
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            groups.append(FieldGroup(name, tuple(v), True))
        elif isinstance(v, str) and v.strip():
            strings.append(name)
        elif fields is not None and name in value:
            missing += (f"{name} (not a string or a list of strings)",)
    derived: dict[str, tuple[str, int]] = {}
    others = [k for k, v in value.items() if k not in wanted and isinstance(v, str)]
    for name in [*strings, *others]:  # a string naming a translated list element follows it, asked for or not
        follows = next(((g.name, g.texts.index(value[name])) for g in groups if value[name] in g.texts), None)
        if follows is not None:
            derived[name] = follows
        elif name in strings:
            groups.append(FieldGroup(name, (value[name],), False))
    order = {name: i for i, name in enumerate(wanted)}
    return VariantPlan(tuple(sorted(groups, key=lambda g: order[g.name])), derived, missing)


def assemble_variant(source: Any, plan: VariantPlan, translated: Mapping[str, str | list[str]]) -> Any:
    """The new variant: the source's shape with every group replaced by its translation (`translated`:
    group name -> text, or list of texts for a list group; every group must be there)."""
    if isinstance(source, str):
        return translated[TEXT_FIELD]
    out = dict(source)
    for group in plan.groups:
        out[group.name] = list(translated[group.name]) if group.is_list else translated[group.name]
    for name, (list_field, index) in plan.derived.items():
        out[name] = translated[list_field][index]
    return out

