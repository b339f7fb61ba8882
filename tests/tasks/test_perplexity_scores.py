"""Perplexity arithmetic (German paper App. C.2), by hand on tiny inputs: the per-text formula, the first token
left out, the two summaries (mean of per-text perplexities vs pooled tokens), the paired ratio and its CI, and the
report's tables from a store filled by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialectbias.providers import PromptLogprobs, parse_prompt_logprobs
from dialectbias.tasks.perplexity._scores import perplexity, ratio_ci, summarize, text_perplexity


def test_text_perplexity_is_exp_of_minus_the_mean_logprob() -> None:
    # logprobs ln(1/2), ln(1/4), ln(1/8): mean = −2 ln 2 → perplexity 4 exactly
    assert perplexity([math.log(0.5), math.log(0.25), math.log(0.125)]) == pytest.approx(4.0, rel=1e-12)
    assert perplexity([-1.0, -3.0]) == pytest.approx(math.exp(2.0), rel=1e-12)
    assert text_perplexity(-6.0, 3) == pytest.approx(math.exp(2.0), rel=1e-12)
    assert math.isnan(text_perplexity(0.0, 0))


def test_the_first_token_is_not_scored() -> None:
    result = PromptLogprobs(tokens=["<s>", "Servus", "!"], logprobs=[None, -2.0, -4.0])
    assert result.scored() == [-2.0, -4.0]
    assert perplexity(result.scored()) == pytest.approx(math.exp(3.0))
    again = parse_prompt_logprobs(result.model_dump_json())
    assert again == result
    with pytest.raises(ValueError, match=r"position\(s\) \[2\]"):
        PromptLogprobs(tokens=["a", "b", "c"], logprobs=[None, -1.0, None]).scored()
    with pytest.raises(ValueError, match="not a prompt-logprob result"):
        parse_prompt_logprobs("answer: hello")


def test_per_text_mean_and_pooled_differ_as_defined() -> None:
    # text 1: 1 token, logprob −1 → e^1; text 2: 3 tokens, sum −9 → e^3
    sums, counts = [-1.0, -9.0], [1, 3]
    assert summarize(sums, counts, "per_text") == pytest.approx((math.e + math.exp(3)) / 2, rel=1e-12)
    assert summarize(sums, counts, "pooled") == pytest.approx(math.exp(10 / 4), rel=1e-12)
    assert math.isnan(summarize([], [], "per_text"))


def test_ratio_and_its_bootstrap_ci() -> None:
    # numerator perplexities e^2, e^2; denominator e^1, e^1 → ratio e exactly, and every resample gives e
    ratio, lo, hi = ratio_ci([-4.0, -2.0], [2, 1], [-2.0, -1.0], [2, 1], "per_text", n_resamples=200)
    assert ratio == pytest.approx(math.e, rel=1e-12)
    assert lo == pytest.approx(math.e) and hi == pytest.approx(math.e)
    # varying pairs: the CI brackets the ratio and follows the seed
    rng = np.random.default_rng(1)
    n = rng.integers(5, 30, size=40)
    num, den = -n * rng.uniform(2, 4, 40), -n * rng.uniform(1, 2, 40)
    r1 = ratio_ci(num, n, den, n, "pooled", n_resamples=1000, seed=5)
    assert r1[1] < r1[0] < r1[2]
    assert r1 == ratio_ci(num, n, den, n, "pooled", n_resamples=1000, seed=5)
    assert r1[0] == pytest.approx(math.exp(-num.sum() / n.sum()) / math.exp(-den.sum() / n.sum()), rel=1e-12)
    one = ratio_ci([-2.0], [1], [-1.0], [1], "per_text")
    assert one[0] == pytest.approx(math.e) and math.isnan(one[1]) and math.isnan(one[2])
    with pytest.raises(ValueError, match="pair up"):
        ratio_ci([-1.0], [1], [], [], "per_text")
