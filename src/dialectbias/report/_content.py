"""What a task's report gives the HTML report: a typed value, not a dict of conventional keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dialectbias.report._html import Section


@dataclass(frozen=True)
class ReportContent:
    """A task's part of `index.html` (its CSV tables are written by then): the report's title, its sections in
    order (the human-validated variants follow them) and its rows of the metadata table, after the experiment's."""

    title: str
    sections: Sequence[Section]
    metadata: Mapping[str, Any] = field(default_factory=dict)
