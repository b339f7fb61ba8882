"""Statistics of the stereotype probes (German paper §4–6, App. B.2; SPEC §4 P4 "Statistics").

- `bias_vs_zero`: mean bias, seeded 95% percentile-bootstrap CI, one-sample t-test against the unbiased 0
  (two-sided; significant at p < 0.001 as the paper reports, §5.1) and Cohen's d = mean / sd (App. B.2).
- `compare_groups`: two independent sets of answers (naming vs usage, dialect vs noisy text, a larger vs a
  smaller model): difference of means with a seeded bootstrap CI that resamples each group on its own,
  **Welch's** t-test (unequal variances; the paper does not say which test it used: the two groups differ
  in size — the usage setting has one prompt per text, the naming setting a fixed number of samples — and
  in spread, so Student's equal-variance assumption is not safe), significant at p < 0.05, and Cohen's d
  with the pooled sd.

Undefined cases are nan, never an exception: fewer than 2 values gives no t, p, CI or d.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict

from dialectbias.metrics._stats import ArrayLike, bootstrap_ci, cohens_d, independent_ttest, one_sample_ttest

ALPHA_BIAS = 0.001  # German paper §5.1: "one-sample t-test … (p < 0.001)"
ALPHA_COMPARE = 0.05  # naming vs usage, dialect vs noise, model sizes
_CHUNK_ELEMENTS = 2_000_000


class BiasTest(BaseModel):
    """One group's bias against the unbiased baseline 0."""

    model_config = ConfigDict(frozen=True)

    n: int
    mean: float
    sd: float
    ci_low: float
    ci_high: float
    t: float
    p: float
    significant: bool
    cohens_d: float


class GroupComparison(BaseModel):
    """Group a against group b (independent samples)."""

    model_config = ConfigDict(frozen=True)

    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    t: float
    p: float
    significant: bool
    cohens_d: float


def _values(values: ArrayLike) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    return v[~np.isnan(v)]


def bias_vs_zero(values: ArrayLike, *, n_resamples: int = 10_000, seed: int = 0, alpha: float = ALPHA_BIAS) -> BiasTest:
    """Mean, sd (ddof 1), 95% bootstrap CI, one-sample t-test vs 0, significance at `alpha`, Cohen's d.

    NaN values (rejected answers) are dropped. All values 0 → t = 0, p = 1; constant non-zero values →
    t = ±inf, p = 0 (scipy's limit), d = nan (sd 0).
    """
    v = _values(values)
    lo, hi = bootstrap_ci(v, n_resamples=n_resamples, seed=seed)
    t, p = one_sample_ttest(v)
    return BiasTest(n=int(v.size), mean=float(v.mean()) if v.size else math.nan,
                    sd=float(v.std(ddof=1)) if v.size > 1 else math.nan, ci_low=lo, ci_high=hi, t=t, p=p,
                    significant=bool(p < alpha) if not math.isnan(p) else False, cohens_d=cohens_d(v))


def two_sample_bootstrap_ci(
    a: ArrayLike, b: ArrayLike, *, n_resamples: int = 10_000, confidence: float = 0.95, seed: int = 0,
) -> tuple[float, float]:
    """Percentile-bootstrap CI of mean(a) − mean(b), each group resampled on its own (independent samples;
    Efron & Tibshirani 1993, §8.3). Either group with fewer than 2 values → (nan, nan)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x, y = _values(a), _values(b)
    if x.size < 2 or y.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    block = max(1, _CHUNK_ELEMENTS // (x.size + y.size))
    out: list[np.ndarray] = []
    for start in range(0, n_resamples, block):
        k = min(block, n_resamples - start)
        out.append(x[rng.integers(0, x.size, size=(k, x.size))].mean(axis=1)
                   - y[rng.integers(0, y.size, size=(k, y.size))].mean(axis=1))
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(np.concatenate(out), [tail, 1.0 - tail])
    return float(lo), float(hi)


def compare_groups(
    a: ArrayLike, b: ArrayLike, *, n_resamples: int = 10_000, seed: int = 0, alpha: float = ALPHA_COMPARE,
    student: bool = False,
) -> GroupComparison:
    """Group a vs group b: difference of means, its bootstrap CI, Welch's t-test (`student`: Student's),
    significance at `alpha` (default 0.05) and Cohen's d (pooled sd). NaN values are dropped."""
    x, y = _values(a), _values(b)
    mean_a = float(x.mean()) if x.size else math.nan
    mean_b = float(y.mean()) if y.size else math.nan
    lo, hi = two_sample_bootstrap_ci(x, y, n_resamples=n_resamples, seed=seed)
    t, p = independent_ttest(x, y, student=student)
    return GroupComparison(n_a=int(x.size), n_b=int(y.size), mean_a=mean_a, mean_b=mean_b, diff=mean_a - mean_b,
                           ci_low=lo, ci_high=hi, t=t, p=p, significant=bool(p < alpha) if not math.isnan(p) else False,
                           cohens_d=cohens_d(x, y))


__all__ = ["ALPHA_BIAS", "ALPHA_COMPARE", "BiasTest", "GroupComparison", "bias_vs_zero", "compare_groups",
           "two_sample_bootstrap_ci"]
