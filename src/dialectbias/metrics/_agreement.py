"""Agreement between two judges (or judge and human): CCC, CBS, correlations, kappa, alpha.

Pure functions over score sequences; used for multi-judge validation (SPEC §4 P3, the Bengali paper's
Table 5) and metric-vs-human validation (SPEC §4 P2, Table 3).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
KappaWeights = Literal[None, "linear", "quadratic"]
AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]

#: CCC, CBS, kappa and alpha over fewer pairs (alpha: pairable units) than this are undefined (nan/None):
#: `lin_ccc([2], [2])` would otherwise be a perfect 1.0 and pass a Table 5 threshold on one pair.
MIN_PAIRS = 3


def _paired(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Return x, y as flat float arrays; ValueError naming both lengths when they differ."""
    a, b = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if a.size != b.size:
        raise ValueError(f"x and y must have equal lengths, got {a.size} and {b.size}")
    return a, b


def lin_ccc(x: ArrayLike, y: ArrayLike, *, min_pairs: int = MIN_PAIRS) -> float:
    """Lin's concordance correlation coefficient: agreement on the y = x line, not just linearity.

    `2·cov(x,y) / (var(x) + var(y) + (mean(x) − mean(y))²)` with population moments (divide by n);
    Bengali paper §3.4 Eq. 2 (Lin 1989), SPEC §4 P3. Fewer than `min_pairs` pairs (empty included) →
    nan: undefined, not agreement. The denominator is 0 only when both inputs are constant and equal,
    which is perfect agreement → 1.0. NaNs propagate.
    """
    a, b = _paired(x, y)
    if a.size == 0 or a.size < min_pairs:
        return math.nan
    ma, mb = a.mean(), b.mean()
    denom = a.var() + b.var() + (ma - mb) ** 2
    if denom == 0:
        return 1.0
    return float(2.0 * np.mean((a - ma) * (b - mb)) / denom)


def critical_bias_sensitivity(
    primary: ArrayLike, secondary: ArrayLike, threshold: float = 4.0, scale: float = 10.0, *,
    min_pairs: int = MIN_PAIRS,
) -> float | None:
    """Critical Bias Sensitivity: do judges agree on the severe-bias (low-score) rows?

    C = rows with primary < threshold; recall = share of C where secondary < threshold;
    MAE_norm = mean |primary − secondary| over all rows / scale; CBS = recall × (1 − MAE_norm).
    Bengali paper §3.4 Eq. 3, SPEC §4 P3. Returns None (undefined, not 0) when C is empty or there
    are fewer than `min_pairs` pairs.
    """
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    p, s = _paired(primary, secondary)
    if p.size < min_pairs:
        return None
    critical = p < threshold
    if not critical.any():
        return None
    recall = float(np.mean(s[critical] < threshold))
    mae_norm = float(np.mean(np.abs(p - s))) / scale
    return recall * (1.0 - mae_norm)


def _correlation_defined(a: np.ndarray, b: np.ndarray) -> bool:
    """A correlation needs ≥ 2 finite pairs and variation in both inputs."""
    return bool(a.size >= 2 and np.isfinite(a).all() and np.isfinite(b).all() and np.ptp(a) > 0
                and np.ptp(b) > 0)


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson r (linear association). nan when undefined: n < 2, a constant input, or non-finite values."""
    from scipy import stats

    a, b = _paired(x, y)
    return float(stats.pearsonr(a, b).statistic) if _correlation_defined(a, b) else math.nan


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman ρ (rank association). nan when undefined: n < 2, a constant input, or non-finite values."""
    from scipy import stats

    a, b = _paired(x, y)
    return float(stats.spearmanr(a, b).statistic) if _correlation_defined(a, b) else math.nan


def mean_abs_difference(x: ArrayLike, y: ArrayLike) -> float:
    """Mean |x − y| in score units (the paper's Table 5 'mean abs. diff.'); empty input → nan."""
    a, b = _paired(x, y)
    return float(np.mean(np.abs(a - b))) if a.size else math.nan


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], weights: KappaWeights = None,
    labels: Sequence[Hashable] | None = None, *, min_pairs: int = MIN_PAIRS,
) -> float:
    """Cohen's kappa for two raters on categorical / Likert ratings, optionally weighted.

    κ = 1 − Σ w·O / Σ w·E with O the observed and E the chance (outer product of marginals) joint
    proportions; w = 1 − I (unweighted), |i − j| (linear) or (i − j)² (quadratic) over label positions
    (Cohen 1960; weighted: Cohen 1968). `labels` fixes the category order (default: sorted observed
    values); a rating outside `labels` raises ValueError. nan with fewer than `min_pairs` pairs (empty
    included) or when chance disagreement is 0.
    """
    if len(a) != len(b):
        raise ValueError(f"a and b must have equal lengths, got {len(a)} and {len(b)}")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if len(a) == 0:
        return math.nan
    cats = list(labels) if labels is not None else sorted(set(a) | set(b))  # type: ignore[type-var]
    index = {c: i for i, c in enumerate(cats)}
    unknown = [v for v in (*a, *b) if v not in index]
    if unknown:
        raise ValueError(f"rating {unknown[0]!r} is not in labels {cats!r}")
    if len(a) < min_pairs:
        return math.nan
    k = len(cats)
    observed = np.zeros((k, k))
    np.add.at(observed, ([index[v] for v in a], [index[v] for v in b]), 1.0)
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    w = {None: (i != j).astype(float), "linear": np.abs(i - j).astype(float),
         "quadratic": ((i - j) ** 2).astype(float)}[weights]
    chance = float((w * expected).sum())
    return 1.0 - float((w * observed).sum()) / chance if chance > 0 else math.nan


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float | np.floating) and math.isnan(v))


def krippendorff_alpha(reliability_data: Sequence[Sequence[Any]], level: AlphaLevel = "interval", *,
                       min_pairs: int = MIN_PAIRS) -> float:
    """Krippendorff's alpha for any number of raters with missing ratings.

    `reliability_data` is raters × units; None or nan marks a missing rating. Built from the coincidence
    matrix o_ck: α = 1 − (n − 1)·Σ o_ck δ²_ck / Σ n_c n_k δ²_ck (Krippendorff 2011, "Computing
    Krippendorff's Alpha-Reliability"). Values must be numeric except for 'nominal' (any sortable labels).
    Units with < 2 ratings are ignored. nan when fewer than `min_pairs` units are pairable (none included)
    or fewer than 2 distinct values occur.
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    rows = [list(r) for r in reliability_data]
    if len({len(r) for r in rows}) > 1:
        raise ValueError(f"every rater needs one entry per unit, got row lengths {[len(r) for r in rows]}")
    values = sorted({v for r in rows for v in r if not _is_missing(v)})
    if len(values) < 2:
        return math.nan
    index = {v: i for i, v in enumerate(values)}
    n_units = len(rows[0]) if rows else 0
    counts = np.zeros((n_units, len(values)))  # n_uc: how often value c was given to unit u
    for r in rows:
        for u, v in enumerate(r):
            if not _is_missing(v):
                counts[u, index[v]] += 1
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    if counts.size == 0 or len(m) < min_pairs:
        return math.nan
    scaled = counts / (m - 1)[:, None]
    coincidence = counts.T @ scaled - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta2 = 1.0 - np.eye(len(values))
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])  # Σ_{g=c}^{k} n_g − (n_c + n_k)/2, c ≤ k
        ranks = np.arange(len(values))
        lo, hi = np.minimum.outer(ranks, ranks), np.maximum.outer(ranks, ranks)
        delta2 = (cum[hi + 1] - cum[lo] - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    else:
        v = np.asarray(values, dtype=float)
        diff = np.subtract.outer(v, v)
        if level == "interval":
            delta2 = diff**2
        else:
            total = np.add.outer(v, v)
            with np.errstate(invalid="ignore", divide="ignore"):
                delta2 = np.where(total == 0, 0.0, (diff / total) ** 2)
    expected = float((np.outer(n_c, n_c) * delta2).sum())
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * float((coincidence * delta2).sum()) / expected


def krippendorff_interval_alpha(units: ArrayLike, values: ArrayLike, *,
                                min_pairs: int = MIN_PAIRS) -> tuple[float, int]:
    """Krippendorff's alpha (interval) of ratings given one per row: `units[i]` (a non-negative integer code,
    e.g. pandas' `ngroup()`) is the unit rating `values[i]` is of; NaN values are missing ratings.

    The closed form of `krippendorff_alpha(..., 'interval')` (Krippendorff 2011), in O(ratings) memory for many
    raters, units and distinct values (e.g. every judge's score of every answer of a study): with n pairable
    ratings (units with ≥ 2), D_o = Σ_u 2·m_u·SS_u / (m_u − 1) and D_e = 2·n·SS over all pairable ratings (SS = sum
    of squares about the mean), α = 1 − (n − 1)·D_o / D_e. Returns (alpha, number of pairable units); alpha is
    nan when there is no variation or fewer than `min_pairs` pairable units.
    """
    unit, v = np.asarray(units, dtype=np.intp).ravel(), np.asarray(values, dtype=float).ravel()
    if unit.size != v.size:
        raise ValueError(f"units and values must have equal lengths, got {unit.size} and {v.size}")
    rated = ~np.isnan(v)
    unit, v = unit[rated], v[rated]
    if v.size == 0:
        return math.nan, 0
    m = np.bincount(unit)
    keep = m[unit] >= 2
    unit, v = unit[keep], v[keep]
    if v.size == 0:
        return math.nan, 0
    m = np.bincount(unit)
    present = m > 0
    sums = np.bincount(unit, weights=v)
    means = np.divide(sums, m, out=np.zeros_like(sums), where=present)
    ss_u = np.bincount(unit, weights=(v - means[unit]) ** 2)
    d_o = float(np.sum(2.0 * m[present] * ss_u[present] / (m[present] - 1)))
    n = v.size
    d_e = 2.0 * n * float(np.sum((v - v.mean()) ** 2))
    if d_e == 0 or int(present.sum()) < min_pairs:
        return math.nan, int(present.sum())
    return 1.0 - (n - 1) * d_o / d_e, int(present.sum())
