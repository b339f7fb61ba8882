"""`dialectbias tasks [NAME]`: each task's `options:` keys, item format and import-generations keys, generated
from the task classes.

Everything shown comes from the code that reads the experiment file — the task's pydantic Options model
(field names, types, constraints, defaults, descriptions), its `item_format` and its `request_keys` (or
`no_imports`) — so it cannot drift.
"""

from __future__ import annotations

import inspect
import json
import textwrap
import types
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import typer

from dialectbias.cli import _app
from dialectbias.cli._app import clear_errors

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

_NAMES = {str: "string", int: "integer", float: "number", bool: "true/false", type(None): "null"}
_BOUNDS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"))


def type_text(annotation: Any) -> str:
    """A YAML-minded name of a field's type: `string | null`, `"naming" | "usage"`, `list of string` …"""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(type_text(a) for a in args)
    if origin is list:
        return f"list of {type_text(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping {type_text(args[0])} → {type_text(args[1])}" if args else "mapping"
    if annotation in _NAMES:
        return _NAMES[annotation]
    return getattr(annotation, "__name__", str(annotation))


def bounds_text(field: FieldInfo) -> str:
    """`≥ 1`, `≥ 0.0, ≤ 1.0` … from the field's constraints; '' when it has none."""
    found = []
    for meta in field.metadata:
        for attr, sign in _BOUNDS:
            value = getattr(meta, attr, None)
            if value is not None:
                found.append(f"{sign} {value}")
    return ", ".join(found)


def default_text(field: FieldInfo) -> str:
    from pydantic import BaseModel

    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
    if isinstance(value, BaseModel):  # a settings object (translation_quality's normalization)
        value = value.model_dump(mode="json")
    return json.dumps(value, ensure_ascii=False)


def _wrap(text: str, indent: str, width: int) -> list[str]:
    """Wrap prose to `width`; lines that start with `{` (JSON examples) are kept whole for copy and paste."""
    lines: list[str] = []
    for para in text.splitlines():
        if para.lstrip().startswith("{"):
            lines.append(indent + para.strip())
        else:
            lines.extend(textwrap.wrap(para, width=max(width, 40), initial_indent=indent, subsequent_indent=indent,
                                       break_on_hyphens=False) or [indent])
    return lines


def options_lines(options: type[BaseModel], width: int) -> list[str]:
    """One block per option: `name: type (bounds) = default`, then its description, indented."""
    lines: list[str] = []
    for name, field in options.model_fields.items():
        bounds = bounds_text(field)
        head = f"    {name}: {type_text(field.annotation)}{f' ({bounds})' if bounds else ''} = {default_text(field)}"
        lines.append(head)
        lines.extend(_wrap(field.description or "(no description)", " " * 8, width))
    return lines or ["    (none)"]


def task_help(name: str, width: int = 80) -> str:
    """The text `dialectbias tasks NAME` prints."""
    from dialectbias.tasks import get_task

    cls = get_task(name)
    doc = inspect.cleandoc(cls.__doc__ or "")
    lines = [f"{name}"]
    lines.extend(_wrap(" ".join(doc.split()), "  ", width))
    lines.append("")
    optional = all(not f.is_required() for f in cls.Options.model_fields.values())
    lines.append("  options: (under `options:` in the experiment file"
                 + ("; every key is optional)" if optional else ")"))
    lines.extend(options_lines(cls.Options, width))
    lines.extend(departure_lines(cls.Options, width))
    lines.append("")
    lines.append("  items:")
    lines.extend(_wrap(cls.item_format or "(not documented)", "    ", width))
    lines.append("")
    lines.extend(import_lines(cls, width))
    return "\n".join(lines)


def departure_lines(options: Any, width: int) -> list[str]:
    """The options whose default departs from a paper, with the paper's value (`replicate: paper` sets them;
    docs/departures.md)."""
    from dialectbias.config import declared_departures

    declared = declared_departures(options)
    if not declared:
        return []
    lines = ["", *_wrap("departures from the papers (`replicate: paper` sets the paper's values; "
                        "docs/departures.md):", "  ", width)]
    for key, dep in declared.items():
        lines.extend(_wrap(f"{key}: {dep.paper!r} ({dep.section})", "    ", width))
    return lines


def import_lines(cls: Any, width: int) -> list[str]:
    """What an `import-generations` line of the task holds: the common keys and the task's request keys."""
    from dialectbias.run import RECORD_KEYS

    if cls.no_imports:
        return ["  import-generations: not supported", *_wrap(cls.no_imports, "    ", width)]
    lines = ["  import-generations: (one JSON object per line)"]
    lines.extend(_wrap(f"keys: {', '.join(RECORD_KEYS)}", "    ", width))
    lines.extend(_wrap("or --from inspect / lm-eval LOG --model ID (docs/other-harnesses.md); `models:` may be "
                       "left out when every generation is imported", "    ", width))
    if cls.request_keys:
        lines.extend(_wrap("request keys (give those that tell apart the requests of the line's model × item × "
                           "variant; a line matching several is an error naming the key):", "    ", width))
        for key, text in cls.request_keys.items():
            lines.append(f"      {key}")
            lines.extend(_wrap(text, " " * 8, width))
    return lines


@clear_errors
def tasks(name: Annotated[str | None, typer.Argument(help="one task (default: all)", show_default=False)]
          = None) -> None:
    """List the tasks with their options (name, type, default, description) and item format.

    Example: dialectbias tasks qa_bias
    """
    from dialectbias.tasks import task_names

    width = min(_app.console.width, 100)
    names = [name] if name is not None else task_names()
    _app.console.print("\n\n".join(task_help(n, width) for n in names), markup=False, highlight=False,
                       soft_wrap=True)
