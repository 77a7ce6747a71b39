"""The vectorised statistics against independent straightforward implementations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from mirage.metrics.stats import bootstrap_means, holm, sign_flip_p, stratified_indices


def loop_stratified_percentile(x, strata, n_boot, seed, alpha=0.05):
    """Textbook loop: resample each stratum with replacement, take the mean, percentile CI."""
    rng = np.random.default_rng(seed)
    groups = [x[strata == s] for s in np.unique(strata)]
    means = []
    for _ in range(n_boot):
        means.append(np.concatenate([rng.choice(g, size=len(g), replace=True) for g in groups]).mean())
    return np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])


def test_stratified_percentile_matches_loop():
    rng = np.random.default_rng(0)
    strata = np.repeat(["T1", "T2", "T3"], [30, 20, 10])
    x = np.concatenate([rng.normal(0.1, 0.2, 30), rng.normal(0.4, 0.2, 20), rng.normal(-0.2, 0.3, 10)])
    est = bootstrap_means(x, strata, lambda m: m[..., 0], 20_000, np.random.default_rng(1), skew_threshold=99)
    ref = loop_stratified_percentile(x, strata, 20_000, 2)
    assert est.method == "percentile" and est.n == 60
    assert abs(est.estimate - x.mean()) < 1e-12
    np.testing.assert_allclose([est.ci_low, est.ci_high], ref, atol=0.006)


def test_stratified_indices_stay_within_strata():
    strata = np.array(["a", "b", "a", "c", "b", "a"])
    idx = stratified_indices(strata, 500, np.random.default_rng(0))
    assert (strata[idx] == strata[None, :]).all()
    assert set(np.unique(idx[:, 0])) == {0, 2, 5}


def test_bca_matches_scipy_on_skewed_data():
    x = np.random.default_rng(3).exponential(1.0, 25) ** 2
    est = bootstrap_means(x, np.zeros(25), lambda m: m[..., 0], 20_000, np.random.default_rng(4))
    ref = stats.bootstrap((x,), np.mean, n_resamples=20_000, method="BCa", random_state=5).confidence_interval
    assert est.method == "bca"
    np.testing.assert_allclose([est.ci_low, est.ci_high], [ref.low, ref.high], rtol=0.04)


def test_bootstrap_p_and_too_little_data():
    x = np.random.default_rng(5).normal(0.5, 0.2, 50)
    assert bootstrap_means(x, np.zeros(50), lambda m: m[..., 0], 5000, np.random.default_rng(0), null=0.0).p < 0.001
    one = bootstrap_means(np.array([0.3]), np.zeros(1), lambda m: m[..., 0], 100, np.random.default_rng(0), null=0.0)
    assert one.estimate == 0.3 and one.n == 1 and np.isnan(one.ci_low) and np.isnan(one.p) and one.flag == "n_too_small"
    flat = bootstrap_means(np.full(10, 0.2), np.zeros(10), lambda m: m[..., 0], 100, np.random.default_rng(0), null=0.0)
    assert flat.flag == "degenerate_bootstrap" and np.isnan(flat.ci_low) and np.isnan(flat.p)


def test_permutation_test_matches_exact_sign_flips():
    x = np.array([0.6, 0.4, 0.8, 0.2, 0.6, 0.4, 1.0, 0.2])
    y = np.array([0.2, 0.4, 0.4, 0.4, 0.2, 0.0, 0.6, 0.4])
    d = x - y
    flips = np.array(list(itertools.product([1, -1], repeat=len(d))))
    exact = np.mean((flips * d).mean(axis=1) >= d.mean() - 1e-12)
    greater = lambda **kw: sign_flip_p(d, 10_000, np.random.default_rng(0), "greater", **kw)  # noqa: E731
    assert abs(greater(randomise_ties=False) - exact) < 1e-12
    strict = np.mean((flips * d).mean(axis=1) > d.mean() + 1e-12)
    assert strict < greater() <= exact  # randomised at ties: between the strict and the inclusive p
    two = np.mean(np.abs((flips * d).mean(axis=1)) >= abs(d.mean()) - 1e-12)
    assert abs(sign_flip_p(d, 10_000, np.random.default_rng(0), randomise_ties=False) - two) < 1e-12
    # Monte-Carlo branch (2^N > n_perm) agrees with scipy's randomised paired permutation test
    z = np.random.default_rng(2).normal(0.2, 1, 40)
    ref = stats.permutation_test((z,), np.mean, permutation_type="samples", n_resamples=20_000, random_state=3,
                                 alternative="greater").pvalue
    assert abs(sign_flip_p(z, 20_000, np.random.default_rng(4), "greater") - ref) < 0.01  # continuous: no ties


@pytest.mark.slow
def test_holm_null_family_rejects_at_most_nominal_rate():
    """72 null tests per family (4 x 3 x 6) over 60 simulated audits: FWER must be <= ~alpha."""
    rng = np.random.default_rng(11)
    strata = np.repeat(["T1", "T2", "T3", "T4", "T6"], 8)
    any_reject = 0
    for _ in range(60):
        p = [bootstrap_means(rng.binomial(5, 0.3, (40, 2)) / 5, strata, lambda m: m[..., 0] - m[..., 1], 400, rng, null=0.0).p
             for _ in range(72)]
        any_reject += bool((holm(np.array(p)) < 0.05).any())
    assert any_reject / 60 <= 0.10
    np.testing.assert_allclose(holm(np.array([0.01, np.nan, 0.04, 0.03])), [0.03, np.nan, 0.06, 0.06])
