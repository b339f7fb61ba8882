"""What a judgment of the `judgments` queue shows: the texts its judge judged, as panels. The review app
shows them side by side; the review CSV has one column per panel (its `name`, else its role), so a task
that shows its own panels (`ReviewConfig.judgment_panels`) gets its own text columns.

Without a task's panels, a judgment shows the default four: the standard question and the dialect
question (the item's variants) and the outputs the judge request refers to (`refs`: the answers to both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dialectbias.review._targets import Panel
from dialectbias.store import JudgmentRecord, Store, dumps

#: the task's panels of a judgment: (store, judgment) -> panels (`ReviewConfig.judgment_panels`)
PanelsOf = Callable[[Store, Any], list[Any]]

#: the CSV columns of the default panels, in their order
DEFAULT_PANEL_COLUMNS = ("standard_question", "dialect_question", "standard_response", "dialect_response")


def default_panels(record: JudgmentRecord, variants: Mapping[str, Any]) -> list[Panel]:
    """Both questions and both answers a judgment judged (its refs' outputs: standard, then dialect)."""
    std, dia = [*record.ref_outputs, None, None][:2]
    sq, dq, sr, dr = DEFAULT_PANEL_COLUMNS
    return [Panel(label="standard question", text=_text(variants.get("standard")), variant="standard",
                  role="question", name=sq),
            Panel(label=f"{record.variant} question", text=_text(variants.get(record.variant)),
                  variant=record.variant, role="question", name=dq),
            Panel(label="answer to the standard question", text=std or "", variant="standard", role="answer",
                  name=sr),
            Panel(label=f"answer to the {record.variant} question", text=dia or "", variant="standard",
                  role="answer", name=dr)]


def judgment_panels(panels_of: PanelsOf | None, store: Store, record: JudgmentRecord,
                    variants: Mapping[str, Any]) -> list[Panel]:
    """The task's panels of the judgment (`panels_of`), else the default ones."""
    if panels_of is not None:
        return list(panels_of(store, record))
    return default_panels(record, variants)


def panel_cells(panels: Sequence[Panel]) -> dict[str, str]:
    """column -> text of each panel: its name, else its role (a second panel of a role gets `<role>_2`, …)."""
    out: dict[str, str] = {}
    for p in panels:
        base = p.name or p.role
        column, n = base, 1
        while column in out:
            n += 1
            column = f"{base}_{n}"
        out[column] = p.text
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else dumps(value)
