"""A self-contained HTML report: tables, embedded plots, run metadata. All text is escaped."""

from __future__ import annotations

import base64
import datetime as dt
import html
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from dialectbias import __version__

_CSS = """body{font-family:system-ui,'Noto Sans Bengali','Noto Sans',sans-serif;margin:2rem auto;max-width:72rem;
color:#222;padding:0 1rem}table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}.meta td{text-align:left}img{max-width:100%}
.note{color:#555;font-size:.9rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd}"""


class Section(BaseModel):
    """One part of a report: a heading, an explanation, and a table and/or an image."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    heading: str
    text: str = ""
    table: pd.DataFrame | None = None
    image_png: bytes | None = None
    image_alt: str = ""


def _table(df: pd.DataFrame) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "—" if pd.isna(v) else f"{v:.3f}"
        return html.escape(str(v))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def write_html(path: Path, title: str, sections: list[Section], metadata: dict[str, Any]) -> Path:
    """Write `index.html`, readable on its own (plots are embedded as data URLs)."""
    meta = {**metadata, "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "dialectbias": __version__}
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>",
             "<table class='meta'>" + "".join(
                 f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                 for k, v in meta.items()) + "</table>"]
    for s in sections:
        parts.append(f"<h2>{html.escape(s.heading)}</h2>")
        if s.text:
            parts.append(f"<p class='note'>{html.escape(s.text)}</p>")
        if s.table is not None:
            parts.append(_table(s.table))
        if s.image_png is not None:
            data = base64.b64encode(s.image_png).decode("ascii")
            parts.append(f"<img alt='{html.escape(s.image_alt)}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
