"""Bootstrap CIs, paired/independent tests and effect sizes for report tables (SPEC §4 P3 Reports).

Short or empty input never raises: the documented result is nan. scipy warnings are silenced here
because degenerate cases are handled explicitly.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

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
    sums: ArrayLike, counts: ArrayLike, groups: Sequence[ArrayLike], *, n_resamples: int = 10_000,
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


def independent_ttest(x: ArrayLike, y: ArrayLike, *, student: bool = False) -> tuple[float, float]:
    """Welch's t-test (unequal variances) for two independent samples → (t, p), two-sided.

    Welch because dialect/model cells have different spreads and sizes. `student`: Student's t-test (pooled
    variance), the German paper's "independent samples t-test" (§5.1; scipy's default). Either sample with
    n < 2 → (nan, nan); both constant and equal → (0.0, 1.0).
    """
    from scipy import stats

    a, b = _flat(x), _flat(y)
    if a.size < 2 or b.size < 2:
        return math.nan, math.nan
    if np.ptp(a) == 0 and np.ptp(b) == 0 and a[0] == b[0]:
        return 0.0, 1.0
    with _quiet():
        r = stats.ttest_ind(a, b, equal_var=student)
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


_WILCOXON_EXACT_MAX = 50  # scipy's wilcoxon (method='auto') is exact up to this many pairs, asymptotic above


@dataclass(frozen=True)
class PairedTests:
    """`paired_test` of every column of x against y: one entry per column (arrays of length k)."""

    n: np.ndarray
    mean_diff: np.ndarray
    t_statistic: np.ndarray
    t_pvalue: np.ndarray
    wilcoxon_statistic: np.ndarray
    wilcoxon_pvalue: np.ndarray


def paired_tests(x: ArrayLike, y: ArrayLike) -> PairedTests:
    """Paired t-test and Wilcoxon signed-rank test of every column of x (n × k) against y's, dropping the rows
    where either is NaN (pairwise deletion per column).

    The numbers of `paired_test` (scipy's ttest_rel and wilcoxon, zeros dropped, no continuity correction), for
    all columns at once (a study's every model or dialect pair): the t-test in closed form, t = mean(d) /
    sqrt(var(d) / n) with n − 1 degrees of freedom; Wilcoxon by the normal approximation scipy uses above 50
    pairs (`_wilcoxon_normal`). Columns with ≤ 50 pairs or no non-zero difference are computed by
    `paired_test` itself (scipy's exact distribution).
    """
    from scipy import special
    x, y = np.asarray(x, float), np.asarray(y, float)
    d = x - y
    valid = ~np.isnan(d)
    n = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        dz = np.where(valid, d, 0.0)
        mean = dz.sum(axis=0) / n
        var = np.where(valid, (d - mean) ** 2, 0.0).sum(axis=0) / (n - 1)
        t = mean / np.sqrt(var / n)
        t_p = 2.0 * special.stdtr(n - 1, -np.abs(t))
        nonzero = valid & (d != 0)
        w_stat, w_p = _wilcoxon_normal(d, nonzero)
    slow = (n <= _WILCOXON_EXACT_MAX) | ~nonzero.any(axis=0)
    for j in np.flatnonzero(slow):
        r = paired_test(x[valid[:, j], j], y[valid[:, j], j])
        mean[j], t[j], t_p[j] = r.mean_diff, r.t_statistic, r.t_pvalue
        w_stat[j], w_p[j] = r.wilcoxon_statistic, r.wilcoxon_pvalue
    return PairedTests(n=n.astype(int), mean_diff=mean, t_statistic=t, t_pvalue=t_p, wilcoxon_statistic=w_stat,
                       wilcoxon_pvalue=w_p)


def _wilcoxon_normal(d: np.ndarray, nonzero: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilcoxon signed-rank test of each column of d by the normal approximation (Wilcoxon 1945; scipy's
    method='approx' without continuity correction): the statistic min(R+, R−) and the two-sided p of
    z = (R+ − n(n+1)/4) / sqrt(n(n+1)(2n+1)/24 − Σ(t³ − t)/48), with n the non-zero differences (`nonzero`:
    zeros and NaN dropped), average ranks of |d| within the column and t the size of each group of tied |d|."""
    from scipy import special
    k = d.shape[1]
    rows, cols = np.nonzero(nonzero)
    a = np.abs(d[rows, cols])
    order = np.lexsort((a, cols))
    a, cols, sign = a[order], cols[order], np.sign(d[rows, cols][order])
    if a.size == 0:
        return np.full(k, np.nan), np.full(k, np.nan)
    new_run = np.r_[True, (a[1:] != a[:-1]) | (cols[1:] != cols[:-1])]
    run_start = np.flatnonzero(new_run)
    run_len = np.diff(np.r_[run_start, a.size])
    run_id = np.cumsum(new_run) - 1
    col_start = np.searchsorted(cols, np.arange(k))  # first position of each column
    pos = np.arange(a.size) - col_start[cols]  # 0-based position within the column
    start_in_col = pos[run_start]
    avg_rank = start_in_col + (run_len + 1) / 2.0  # average of ranks start+1 … start+len
    rank = avg_rank[run_id]
    count = np.bincount(cols, minlength=k).astype(float)
    r_plus = np.bincount(cols, weights=rank * (sign > 0), minlength=k)
    r_minus = np.bincount(cols, weights=rank * (sign < 0), minlength=k)
    ties = np.bincount(cols[run_start], weights=run_len.astype(float) ** 3 - run_len, minlength=k)
    mn = count * (count + 1.0) * 0.25
    se = np.sqrt((count * (count + 1.0) * (2.0 * count + 1.0) - ties / 2.0) / 24.0)
    z = (r_plus - mn) / se
    p = 2.0 * special.ndtr(-np.abs(z))
    return np.minimum(r_plus, r_minus), p


def holm_adjust(p: ArrayLike) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (Holm 1979, "A simple sequentially rejective multiple test procedure"):
    with the m p-values sorted ascending, p_(i) becomes max_{j ≤ i} (m − j + 1)·p_(j), capped at 1. NaN entries
    stay NaN and are not counted in m."""
    p = np.asarray(p, float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = ok.size
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out


#: the normal quantile of a two-sided 95% interval, as the BanglaVerse paper writes it
Z95 = 1.96


def wald_ci(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wald interval of a proportion `p` (0–1) over `n` trials: p ± z·sqrt(p(1−p)/n) (BanglaVerse App. G.2; not
    clipped to [0, 1], as written); (nan, nan) for n = 0."""
    if n <= 0 or math.isnan(p):
        return math.nan, math.nan
    half = z * math.sqrt(p * (1 - p) / n)
    return p - half, p + half
