"""Agreement metrics (CCC, CBS, kappa, alpha, correlations), statistics (bootstrap CIs, tests), BERTScore."""

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
from dialectbias.metrics._bertscore import bertscore_f1, corpus_bertscore_f1
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
    "PairedTestResult",
    "bertscore_f1",
    "bootstrap_ci",
    "cohen_kappa",
    "cohens_d",
    "corpus_bertscore_f1",
    "critical_bias_sensitivity",
    "independent_ttest",
    "krippendorff_alpha",
    "lin_ccc",
    "mean_abs_difference",
    "one_sample_ttest",
    "paired_bootstrap_ci",
    "paired_test",
    "pearson",
    "spearman",
]
