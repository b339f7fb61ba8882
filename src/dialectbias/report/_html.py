"""A self-contained HTML report: tables, embedded plots, run metadata. All text is escaped."""

from __future__ import annotations

import base64
import datetime as dt
import html
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from dialectbias import __version__

_CSS = """body{font-family:system-ui,'Noto Sans Bengali','Noto Sans',sans-serif;margin:2rem auto;max-width:72rem;
color:#222;padding:0 1rem}table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}.meta td{text-align:left}img{max-width:100%}
.note{color:#555;font-size:.9rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd}
.table-wrap{max-width:100%;overflow-x:auto}.table-wrap table{table-layout:fixed}
.legend{font-size:.85rem;color:#444;display:grid;grid-template-columns:max-content auto;gap:.1rem .8rem}
.legend dt{font-weight:600}.legend dd{margin:0}.caveat{border-left:4px solid #c90;padding:.4rem .8rem;
background:#fff8e6}.empty{font-style:italic}"""

#: shown for a missing value (None, NaN): never the text 'None' or 'nan'
MISSING = "—"


class Section(BaseModel):
    """One part of a report: a heading, an explanation, and a table and/or an image.

    `legend` explains the table's columns: one entry per column, or one entry for several columns whose
    key lists them separated by ", " (e.g. the dialect columns). A table without rows is shown as
    `empty` (a sentence), never as a bare header.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    heading: str
    text: str = ""
    table: pd.DataFrame | None = None
    legend: dict[str, str] = Field(default_factory=dict)
    empty: str = "none"
    image_png: bytes | None = None
    image_alt: str = ""

    def unexplained_columns(self) -> list[str]:
        """Columns of the table that no legend entry names."""
        if self.table is None:
            return []
        named = {c.strip() for key in self.legend for c in key.split(", ")}
        return [str(c) for c in self.table.columns if str(c) not in named]


def _is_missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float | np.floating) and math.isnan(v)


def _cell(v: Any) -> str:
    """A value as text: — when missing, integers without decimals, other numbers with three."""
    if _is_missing(v):
        return MISSING
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return f"{v:.3f}"
    return html.escape(str(v))


def _table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return f"<div class='table-wrap'><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"


def _legend(legend: dict[str, str]) -> str:
    items = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in legend.items())
    return f"<dl class='legend'>{items}</dl>"


def write_html(path: Path, title: str, sections: list[Section], metadata: dict[str, Any],
               note: str | None = None, alerts: Sequence[str] = ()) -> Path:
    """Write `index.html`, readable on its own (plots are embedded as data URLs). `alerts` (what makes the
    report empty) come first under the title, then `note` (e.g. the experiment's own caveat)."""
    meta = {**metadata, "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "dialectbias": __version__}
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p class='caveat alert'>{html.escape(alert)}</p>" for alert in alerts]
    if note:
        parts.append(f"<p class='caveat'>{html.escape(note)}</p>")
    parts.append("<table class='meta'>" + "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{_cell(v)}</td></tr>" for k, v in meta.items()) + "</table>")
    for s in sections:
        parts.append(f"<h2>{html.escape(s.heading)}</h2>")
        if s.text:
            parts.append(f"<p class='note'>{html.escape(s.text)}</p>")
        if s.table is not None and s.table.empty:
            parts.append(f"<p class='note empty'>{html.escape(s.empty)}</p>")
        elif s.table is not None:
            parts.append(_table(s.table))
            if s.legend:
                parts.append(_legend(s.legend))
        if s.image_png is not None:
            data = base64.b64encode(s.image_png).decode("ascii")
            parts.append(f"<img alt='{html.escape(s.image_alt)}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
