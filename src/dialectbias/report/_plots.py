"""Plots for reports (matplotlib, headless), returned as PNG bytes and saved as PNG and SVG."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def heatmap(matrix: pd.DataFrame, title: str, out_stem: Path | None = None, *, vmin: float | None = None,
            vmax: float | None = None, cmap: str = "RdYlGn", fmt: str = "{:.2f}") -> bytes:
    """Heatmap of a rows × columns table with values written in the cells."""
    values = matrix.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * max(1, matrix.shape[1]), 1.0 + 0.45 * max(1, matrix.shape[0])))
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


def _save(fig: plt.Figure, out_stem: Path | None) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    if out_stem is not None:
        fig.savefig(out_stem.with_suffix(".png"), dpi=110)
        fig.savefig(out_stem.with_suffix(".svg"))
    plt.close(fig)
    return buf.getvalue()
