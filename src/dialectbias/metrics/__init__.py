"""Agreement metrics (CCC, CBS, kappa, alpha, correlations), statistics (bootstrap CIs, tests) and probe formulas."""

from dialectbias.metrics._agreement import (
    MIN_PAIRS,
    cohen_kappa,
    critical_bias_sensitivity,
    krippendorff_alpha,
    lin_ccc,
    mean_abs_difference,
    pearson,
    spearman,
)
from dialectbias.metrics._probes import (
    DecisionChoice,
    association_bias,
    decision_score,
    fallback_bias,
    log_odds_dirichlet,
    stereotypical_share,
)
from dialectbias.metrics._stats import (
    PairedTestResult,
    bootstrap_ci,
    cohens_d,
    independent_ttest,
    one_sample_ttest,
    paired_bootstrap_ci,
    paired_test,
)

__all__ = [
    "MIN_PAIRS",
    "DecisionChoice",
    "PairedTestResult",
    "association_bias",
    "bootstrap_ci",
    "cohen_kappa",
    "cohens_d",
    "critical_bias_sensitivity",
    "decision_score",
    "fallback_bias",
    "independent_ttest",
    "krippendorff_alpha",
    "lin_ccc",
    "log_odds_dirichlet",
    "mean_abs_difference",
    "one_sample_ttest",
    "paired_bootstrap_ci",
    "paired_test",
    "pearson",
    "spearman",
    "stereotypical_share",
]
