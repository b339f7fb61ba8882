"""Agreement metrics (CCC, CBS, kappa, alpha, correlations), statistics (bootstrap CIs, tests), BERTScore and
probe formulas."""

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
from dialectbias.metrics._marked_words import Z_SIGNIFICANT, MarkedWord, marked_words
from dialectbias.metrics._probe_stats import (
    ALPHA_BIAS,
    ALPHA_COMPARE,
    BiasTest,
    GroupComparison,
    bias_vs_zero,
    compare_groups,
    two_sample_bootstrap_ci,
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
    GroupCI,
    PairedTestResult,
    bootstrap_ci,
    cluster_bootstrap_cis,
    cohens_d,
    independent_ttest,
    one_sample_ttest,
    paired_bootstrap_ci,
    paired_test,
)
from dialectbias.metrics._translation import TextNormalization, bootstrap_corpus_score, sentence_scores

__all__ = [
    "ALPHA_BIAS",
    "ALPHA_COMPARE",
    "MIN_PAIRS",
    "Z_SIGNIFICANT",
    "BiasTest",
    "DecisionChoice",
    "GroupCI",
    "GroupComparison",
    "MarkedWord",
    "PairedTestResult",
    "TextNormalization",
    "association_bias",
    "bertscore_f1",
    "bias_vs_zero",
    "bootstrap_ci",
    "bootstrap_corpus_score",
    "cluster_bootstrap_cis",
    "cohen_kappa",
    "cohens_d",
    "compare_groups",
    "corpus_bertscore_f1",
    "critical_bias_sensitivity",
    "decision_score",
    "fallback_bias",
    "independent_ttest",
    "krippendorff_alpha",
    "lin_ccc",
    "log_odds_dirichlet",
    "marked_words",
    "mean_abs_difference",
    "one_sample_ttest",
    "paired_bootstrap_ci",
    "paired_test",
    "pearson",
    "sentence_scores",
    "spearman",
    "stereotypical_share",
    "two_sample_bootstrap_ci",
]
