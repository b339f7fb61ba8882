"""Bootstrap CIs, paired/independent tests and effect sizes for report tables (SPEC §4 P3 Reports).

Short or empty input never raises: the documented result is nan. scipy warnings are silenced here
because degenerate cases are handled explicitly.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

ArrayLike = npt.ArrayLike
_CHUNK_ELEMENTS = 2_000_000  # resample in blocks so memory stays ~16 MB whatever n × n_resamples is


@contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _flat(values: ArrayLike) -> np.ndarray:
    return np.asarray(values, dtype=float).ravel()


def _diff(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    a, b = _flat(x), _flat(y)
    if a.size != b.size:
        raise ValueError(f"x and y must have equal lengths, got {a.size} and {b.size}")
    return a - b


def bootstrap_ci(
    values: ArrayLike, statistic: Callable[..., np.ndarray] = np.mean, n_resamples: int = 10_000,
    confidence: float = 0.95, seed: int = 0,
) -> tuple[float, float]:
    """Percentile-bootstrap CI of `statistic` (Efron & Tibshirani 1993, ch. 13), seeded and reproducible.

    `statistic` should be a numpy reducer accepting `axis` (np.mean, np.median) so resamples are
    evaluated vectorised; other callables fall back to a per-row loop. n < 2 → (nan, nan).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be ≥ 1, got {n_resamples}")
    v = _flat(values)
    if v.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    block = max(1, _CHUNK_ELEMENTS // v.size)
    out: list[np.ndarray] = []
    for start in range(0, n_resamples, block):
        sample = v[rng.integers(0, v.size, size=(min(block, n_resamples - start), v.size))]
        try:
            out.append(np.asarray(statistic(sample, axis=1), dtype=float))
        except TypeError:
            out.append(np.array([statistic(row) for row in sample], dtype=float))
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(np.concatenate(out), [alpha, 1.0 - alpha])
    return float(lo), float(hi)


class GroupCI(BaseModel):
    """One group of `cluster_bootstrap_cis`: its observations, point estimate and percentile interval."""

    model_config = ConfigDict(frozen=True)

    n: int
    mean: float
    ci_low: float
    ci_high: float


def _resampled_cell_means(sums: np.ndarray, counts: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Cell means of `n_resamples` cluster resamples, shape (n_resamples, cells): each replicate draws the
    clusters with replacement (multiplicities W) and every cell's mean is Σ W·sum / Σ W·count. Drawn with
    the same generator calls as `bootstrap_ci`, so one cell of one observation per cluster reproduces it."""
    n_clusters = sums.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, sums.shape[1]))
    block = max(1, _CHUNK_ELEMENTS // max(1, n_clusters))
    for start in range(0, n_resamples, block):
        b = min(block, n_resamples - start)
        draws = rng.integers(0, n_clusters, size=(b, n_clusters))
        w = np.bincount((draws + (np.arange(b) * n_clusters)[:, None]).ravel(),
                        minlength=b * n_clusters).reshape(b, n_clusters).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + b] = (w @ sums) / (w @ counts)
    return out


def cluster_bootstrap_cis(
    sums: ArrayLike, counts: ArrayLike, groups: Sequence[Sequence[int]], *, n_resamples: int = 10_000,
    confidence: float = 0.95, seed: int = 0,
) -> list[GroupCI]:
    """Percentile-bootstrap CIs of group means, resampling clusters (items) with all their observations.

    `sums`, `counts`: (clusters × cells) — the sum and number of a cell's observations in each cluster
    (an item's scores of one model in one dialect, say). A cell's mean is Σ sums / Σ counts; a group (a
    list of cell indices) has the mean of its cells' means (a macro mean; nan when a cell has no
    observation). One cluster resample is shared by every cell in a replicate, so groups spanning several
    cells are bootstrapped consistently (the qa_bias report's Table 4 gaps and every breakdown use this one
    function). A group with fewer than 2 observations has no interval (nan); replicates where a cell drew
    no observation are left out of its quantiles. Seeded, reproducible; with one cell of one observation
    per cluster it equals `bootstrap_ci(values, np.mean, …)` for the same seed.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be ≥ 1, got {n_resamples}")
    s, c = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
    if s.ndim != 2 or s.shape != c.shape:
        raise ValueError(f"sums and counts must be 2-D of one shape, got {s.shape} and {c.shape}")
    n_cell = c.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = s.sum(axis=0) / n_cell
    reps = _resampled_cell_means(s, c, n_resamples, seed) if s.shape[0] >= 1 else None
    alpha = (1.0 - confidence) / 2.0
    out = []
    for group in groups:
        idx = np.asarray(group, dtype=np.intp)
        n = int(n_cell[idx].sum())
        mean = float(np.mean(point[idx])) if idx.size else math.nan
        lo = hi = math.nan
        if reps is not None and n >= 2 and not math.isnan(mean):
            with _quiet():
                stat = reps[:, idx].mean(axis=1) if idx.size > 1 else reps[:, idx[0]]
                nan = np.isnan(stat)
                q = np.quantile(stat[~nan] if nan.any() else stat, [alpha, 1 - alpha]) if not nan.all() \
                    else (math.nan, math.nan)
            lo, hi = float(q[0]), float(q[1])
        out.append(GroupCI(n=n, mean=mean, ci_low=lo, ci_high=hi))
    return out


def paired_bootstrap_ci(
    x: ArrayLike, y: ArrayLike, n_resamples: int = 10_000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap CI of mean(x − y), resampling pairs (items) together; n < 2 → (nan, nan)."""
    return bootstrap_ci(_diff(x, y), np.mean, n_resamples=n_resamples, confidence=confidence, seed=seed)


class PairedTestResult(BaseModel):
    """Paired t-test and Wilcoxon signed-rank test on the same items; nan where undefined."""

    model_config = ConfigDict(frozen=True)

    n: int
    mean_diff: float
    t_statistic: float
    t_pvalue: float
    wilcoxon_statistic: float
    wilcoxon_pvalue: float


def paired_test(x: ArrayLike, y: ArrayLike) -> PairedTestResult:
    """Compare x and y on the same items: t (scipy ttest_rel) and Wilcoxon signed-rank (zeros dropped).

    n < 2 → nan statistics (mean_diff is still reported for n = 1, nan for n = 0). All differences zero →
    both statistics 0.0 with p = 1.0 (no observed difference). Constant non-zero differences → t = ±inf,
    p = 0.0 (scipy's result).
    """
    from scipy import stats

    d = _diff(x, y)
    mean_diff = float(d.mean()) if d.size else math.nan
    nan = math.nan
    if d.size < 2:
        return PairedTestResult(n=d.size, mean_diff=mean_diff, t_statistic=nan, t_pvalue=nan,
                                wilcoxon_statistic=nan, wilcoxon_pvalue=nan)
    if not d.any():
        return PairedTestResult(n=d.size, mean_diff=0.0, t_statistic=0.0, t_pvalue=1.0,
                                wilcoxon_statistic=0.0, wilcoxon_pvalue=1.0)
    with _quiet():
        t = stats.ttest_rel(_flat(x), _flat(y))
        w = stats.wilcoxon(d)
    return PairedTestResult(n=d.size, mean_diff=mean_diff, t_statistic=float(t.statistic),
                            t_pvalue=float(t.pvalue), wilcoxon_statistic=float(w.statistic),
                            wilcoxon_pvalue=float(w.pvalue))


def one_sample_ttest(values: ArrayLike, popmean: float = 0.0) -> tuple[float, float]:
    """One-sample t-test of mean(values) = popmean → (t, p), two-sided.

    n < 2 → (nan, nan); every value equal to popmean → (0.0, 1.0); constant ≠ popmean → (±inf, 0.0).
    """
    from scipy import stats

    v = _flat(values)
    if v.size < 2:
        return math.nan, math.nan
    if np.all(v == popmean):
        return 0.0, 1.0
    with _quiet():
        r = stats.ttest_1samp(v, popmean)
    return float(r.statistic), float(r.pvalue)


def independent_ttest(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """Welch's t-test (unequal variances) for two independent samples → (t, p), two-sided.

    Welch because dialect/model cells have different spreads and sizes. Either sample with n < 2 →
    (nan, nan); both constant and equal → (0.0, 1.0).
    """
    from scipy import stats

    a, b = _flat(x), _flat(y)
    if a.size < 2 or b.size < 2:
        return math.nan, math.nan
    if np.ptp(a) == 0 and np.ptp(b) == 0 and a[0] == b[0]:
        return 0.0, 1.0
    with _quiet():
        r = stats.ttest_ind(a, b, equal_var=False)
    return float(r.statistic), float(r.pvalue)


def cohens_d(x: ArrayLike, y: ArrayLike | None = None) -> float:
    """Cohen's d effect size (Cohen 1988, ch. 2).

    One sample: mean(x) / sd(x) with ddof = 1 (use on paired differences). Two independent samples:
    (mean(x) − mean(y)) / pooled sd, pooled = sqrt(((n_x−1)s_x² + (n_y−1)s_y²) / (n_x + n_y − 2)).
    nan when any sample has n < 2 or the (pooled) sd is 0.
    """
    a = _flat(x)
    if y is None:
        if a.size < 2:
            return math.nan
        sd = float(a.std(ddof=1))
        return float(a.mean()) / sd if sd > 0 else math.nan
    b = _flat(y)
    if a.size < 2 or b.size < 2:
        return math.nan
    pooled = math.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2))
    return float(a.mean() - b.mean()) / pooled if pooled > 0 else math.nan
