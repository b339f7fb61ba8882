"""Plots for reports (matplotlib, headless), returned as PNG bytes and saved as PNG and SVG."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import Normalize
from matplotlib.ticker import MaxNLocator


def heatmap(matrix: pd.DataFrame, title: str, out_stem: Path | None = None, *, vmin: float | None = None,
            vmax: float | None = None, cmap: str = "RdYlGn", fmt: str = "{:.2f}") -> bytes:
    """Heatmap of a rows × columns table with values written in the cells.

    Sized by the table: ~1.1 in per column plus room for the row labels and the colour bar, ~0.5 in per
    row plus room for the title and the rotated column labels, never smaller than 6 × 3.5 in (≈ 660 ×
    385 px at the report's 110 dpi), so a 2 × 3 table is still readable.
    """
    values = matrix.to_numpy(dtype=float)
    n_rows, n_cols = max(1, matrix.shape[0]), max(1, matrix.shape[1])
    label = max([len(str(i)) for i in matrix.index] or [1])
    fig, ax = plt.subplots(figsize=heatmap_size(n_rows, n_cols, label))
    im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(matrix.shape[1]), [str(c) for c in matrix.columns], rotation=40, ha="right")
    ax.set_yticks(range(matrix.shape[0]), [str(i) for i in matrix.index])
    for (r, c), v in np.ndenumerate(values):
        if not np.isnan(v):
            ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=8)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    return _save(fig, out_stem)


def heatmap_size(n_rows: int, n_cols: int, label_chars: int = 10) -> tuple[float, float]:
    """Figure size in inches for a heatmap of n_rows × n_cols cells with row labels of `label_chars`."""
    width = 1.6 + min(4.0, 0.08 * label_chars) + 1.1 * n_cols
    height = 1.8 + 0.5 * n_rows
    return max(6.0, width), max(3.5, height)


def gap_ci_plot(gaps: pd.DataFrame, title: str, out_stem: Path | None = None, *,
                xlabel: str = "gap (10 − score), 95% CI") -> bytes:
    """Dot plot of a gap per row (`model`) and series (`dialect`) with horizontal error bars
    (`ci_low`, `ci_high`); rows keep their order of first appearance, series are offset vertically."""
    rows = list(dict.fromkeys(gaps["model"].tolist()))
    series = list(dict.fromkeys(gaps["dialect"].tolist()))
    fig, ax = plt.subplots(figsize=(8.0, 1.2 + 0.32 * len(rows) * max(1.0, len(series) / 4)))
    cmap = plt.get_cmap("tab10" if len(series) <= 10 else "tab20")
    step = 0.8 / max(1, len(series))
    ypos = {r: i for i, r in enumerate(rows)}
    for k, name in enumerate(series):
        g = gaps[gaps["dialect"] == name]
        y = np.array([ypos[r] for r in g["model"]]) - 0.4 + step * (k + 0.5)
        x = g["gap"].to_numpy(dtype=float)
        lo = np.clip(x - g["ci_low"].to_numpy(dtype=float), 0, None)
        hi = np.clip(g["ci_high"].to_numpy(dtype=float) - x, 0, None)
        ax.errorbar(x, y, xerr=np.nan_to_num(np.vstack([lo, hi])), fmt="o", ms=3.5, lw=1, capsize=1.5,
                    color=cmap(k % cmap.N), label=str(name))
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return _save(fig, out_stem)


def agreement_scatter(panels: list[tuple[str, np.ndarray, np.ndarray]], xlabel: str,
                      out_stem: Path | None = None, *, lim: tuple[float, float] = (0.0, 10.0),
                      bins: int = 41) -> bytes:
    """One panel per (title, x, y): a 2-D histogram of the pairs (one image, so 10⁵ points stay small
    in PNG and SVG; linear colour scale from 1 pair, empty bins blank) with the y = x line of perfect
    agreement."""
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(4.4 * max(1, len(panels)), 4.2), squeeze=False)
    pad = (lim[1] - lim[0]) / 80  # half a bin of a 0–10 score in 41 bins, at any score range
    edges = np.linspace(lim[0] - pad, lim[1] + pad, bins + 1)
    for ax, (title, x, y) in zip(axes[0], panels, strict=False):
        counts, _, _ = np.histogram2d(x, y, bins=[edges, edges])
        if counts.any():
            im = ax.imshow(np.ma.masked_equal(counts.T, 0), origin="lower", cmap="viridis", aspect="equal",
                           extent=(edges[0], edges[-1], edges[0], edges[-1]), norm=count_norm(counts.max()),
                           interpolation="nearest")
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="pairs", ticks=MaxNLocator(integer=True))
        ax.plot(lim, lim, color="0.4", lw=0.8, ls="--")
        ax.set_xlim(edges[0], edges[-1])
        ax.set_ylim(edges[0], edges[-1])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"{title} score")
        ax.set_title(f"{title} (n = {len(x):,})", fontsize=9)
    fig.tight_layout()
    return _save(fig, out_stem)


def bias_ci_plot(table: pd.DataFrame, title: str, out_stem: Path | None = None, *, x: str = "trait",
                 series: str = "model", facet: str | None = None, value: str = "bias", lo: str = "ci_low",
                 hi: str = "ci_high", ylabel: str = "bias (95% CI)",
                 annotations: Mapping[tuple[str, str], str] | None = None,
                 ylim: tuple[float, float] = (-1.05, 1.05)) -> bytes:
    """German paper Figure 2/4/5/9-style plot: one point per `x` × `series` with its CI as an error bar, one
    panel per `facet` value side by side (e.g. naming | usage), a dashed line at 0 (no bias).

    `annotations` maps (facet value, or "" without facets; x value) to a short text written above that x
    group (e.g. "*" where dialect and noise differ significantly). Missing CIs draw the point alone.
    """
    facets = list(dict.fromkeys(table[facet].astype(str))) if facet else [""]
    xs = list(dict.fromkeys(table[x].astype(str)))
    names = list(dict.fromkeys(table[series].astype(str)))
    width = max(4.5, 0.9 * len(xs) * max(1.0, len(names) / 4) + 1.2)
    fig, axes = plt.subplots(1, len(facets), figsize=(min(24.0, width * len(facets) + 2.0), 4.2), sharey=True,
                             squeeze=False)
    cmap = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
    spread = min(0.8, 0.2 * len(names))  # a few series stay close to their tick
    step = spread / max(1, len(names))
    for ax, f in zip(axes[0], facets, strict=True):
        part = table[table[facet].astype(str) == f] if facet else table
        for k, name in enumerate(names):
            g = part[part[series].astype(str) == name]
            if g.empty:
                continue
            pos = np.array([xs.index(str(v)) for v in g[x]]) - spread / 2 + step * (k + 0.5)
            y = g[value].to_numpy(dtype=float)
            err = np.vstack([np.clip(y - g[lo].to_numpy(dtype=float), 0, None),
                             np.clip(g[hi].to_numpy(dtype=float) - y, 0, None)])
            ax.errorbar(pos, y, yerr=np.nan_to_num(err), fmt="o", ms=4, lw=1, capsize=2, color=cmap(k % cmap.N),
                        label=name)
        for (af, ax_value), text in (annotations or {}).items():
            if af == f and ax_value in xs:
                ax.text(xs.index(ax_value), ylim[1] - 0.08, text, ha="center", va="top", fontsize=11)
        ax.axhline(0.0, color="0.4", lw=0.8, ls="--")
        ax.set_xticks(range(len(xs)), xs, rotation=30, ha="right")
        ax.set_ylim(*ylim)
        ax.grid(axis="y", alpha=0.3)
        if f:
            ax.set_title(f, fontsize=10)
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _save(fig, out_stem)


def rate_plot(table: pd.DataFrame, title: str, out_stem: Path | None = None, *, x: str = "model",
              values: Sequence[str] = ("rejection_rate",), labels: Sequence[str] | None = None,
              ylabel: str = "rate") -> bytes:
    """Grouped bars: one group per `x` row, one bar per column of `values` (e.g. our rejection rate and the
    paper's rule's, German paper Figure 8), on a 0–1 axis."""
    rows = table[x].astype(str).tolist()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(rows) * len(values) + 2.0), 3.8))
    step = 0.8 / max(1, len(values))
    for k, col in enumerate(values):
        pos = np.arange(len(rows)) - 0.4 + step * (k + 0.5)
        ax.bar(pos, np.nan_to_num(table[col].to_numpy(dtype=float)), width=step * 0.95,
               label=(labels[k] if labels else col))
    ax.set_xticks(range(len(rows)), rows, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    ax.set_title(title)
    fig.tight_layout()
    return _save(fig, out_stem)


def count_norm(max_count: float) -> Normalize:
    """Linear colour scale for pair counts, from 1 to the largest bin (at least 2, so one pair shows)."""
    return Normalize(vmin=1.0, vmax=max(2.0, float(max_count)))


def _save(fig: plt.Figure, out_stem: Path | None) -> bytes:
    """PNG bytes (also written to `out_stem`.png) and `out_stem`.svg with text kept as text (smaller and
    much faster to write than glyph outlines)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    if out_stem is not None:
        out_stem.with_suffix(".png").write_bytes(buf.getvalue())
        with plt.rc_context({"svg.fonttype": "none"}):
            fig.savefig(out_stem.with_suffix(".svg"))
    plt.close(fig)
    return buf.getvalue()
