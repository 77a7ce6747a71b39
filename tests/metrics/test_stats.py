"""The statistics engine against textbook formulas and independent implementations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from mirage.metrics.stats import (
    ClusterBootstrap,
    ClusterRelabel,
    Clusters,
    bootstrap_stat,
    cluster_cov,
    fieller,
    holm,
    holm_level,
    interval,
)


def mean0(m):
    return m[..., 0]


def test_rao_wu_variance_is_the_unbiased_between_cluster_variance():
    """For a stratified mean of equal-size clusters, Var* = sum_h w_h^2 s_h^2 / F_h exactly (the plain cluster bootstrap
    is short by (F_h - 1) / F_h)."""
    rng = np.random.default_rng(0)
    strata = np.repeat(["T1", "T2"], [5 * 12, 5 * 8])
    frames = np.concatenate([np.repeat(np.arange(12), 5), 100 + np.repeat(np.arange(8), 5)]).astype(str)
    x = rng.normal(0, 0.1, len(strata)) + np.repeat(rng.normal(0, 0.3, 20), 5)
    cl = Clusters.of(strata, frames)
    reps, jack, df = ClusterBootstrap(cl, 40_000, np.random.default_rng(1)).means(x)
    expect = 0.0
    for s, f in (("T1", 12), ("T2", 8)):
        cm = x[strata == s].reshape(f, 5).mean(axis=1)
        expect += (f * 5 / len(x)) ** 2 * cm.var(ddof=1) / f
    assert reps.var() == pytest.approx(expect, rel=0.03)
    assert df == 20 - 2 and jack.shape == (20, 1)
    assert reps.mean() == pytest.approx(x.mean(), abs=0.01)


def test_single_frame_strata_fall_back_to_base_prompts():
    strata = np.repeat(["T1", "T2"], 6)
    frames = np.array(["a"] * 6 + list("bcdefg"))
    cl = Clusters.of(strata, frames)
    assert cl.n == 12  # T1's one frame cannot show between-frame variation: its 6 bases become the clusters


def test_t_calibrated_percentile_interval():
    """A normal bootstrap distribution with sd s gives theta -+ t_df s."""
    boot = np.random.default_rng(2).normal(1.0, 0.2, 200_000)
    lo, hi, method = interval(1.0, boot, None, 0.05, 0.5, 9)
    t = stats.t.ppf(0.975, 9)
    assert method == "percentile"
    np.testing.assert_allclose([lo, hi], [1 - t * 0.2, 1 + t * 0.2], atol=0.01)
    assert interval(1.0, boot, None, 0.05, 0.5, 0)[2] == ""  # df < 1: no interval


def test_bca_matches_scipy_with_mid_rank_z0():
    """With ordinary bootstrap replicates and a large df, the BCa interval is scipy's (mid-rank z0, jackknife a),
    also on discrete data where many replicates tie the estimate."""
    rng = np.random.default_rng(3)
    for x in (rng.exponential(1.0, 25) ** 2, rng.binomial(5, 0.1, 30) / 5.0):
        idx = rng.integers(0, len(x), (40_000, len(x)))
        boot = x[idx].mean(axis=1)
        jack = (x.sum() - x) / (len(x) - 1)
        lo, hi, method = interval(float(x.mean()), boot, jack, 0.05, 0.0, 10**9)
        ref = stats.bootstrap((x,), np.mean, n_resamples=40_000, method="BCa", random_state=4).confidence_interval
        assert method == "bca"
        np.testing.assert_allclose([lo, hi], [ref.low, ref.high], rtol=0.03, atol=0.003)


def test_bootstrap_stat_flags_and_frame_jackknife():
    x = np.random.default_rng(5).normal(0.5, 0.2, 50)
    cl = Clusters.of(np.zeros(50), np.repeat(np.arange(10), 5))
    est = bootstrap_stat(x, mean0, ClusterBootstrap(cl, 2000, np.random.default_rng(0)))
    assert est.n == 50 and est.ci_low < x.mean() < est.ci_high
    _, jack, _ = ClusterBootstrap(cl, 10, np.random.default_rng(0)).means(x)
    assert jack.shape == (10, 1)  # leave one frame out, not one base prompt
    np.testing.assert_allclose(jack[0, 0], x[5:].mean())
    one = bootstrap_stat(np.array([0.3]), mean0, None)
    assert one.estimate == 0.3 and one.n == 1 and np.isnan(one.ci_low) and one.flag == "n_too_small"
    flat = bootstrap_stat(np.full(10, 0.2), mean0, ClusterBootstrap(Clusters.of(np.zeros(10)), 100, np.random.default_rng(0)))
    assert flat.flag == "degenerate_bootstrap" and np.isnan(flat.ci_low)


def exact_frame_p(e: np.ndarray, frames: np.ndarray) -> float:
    """Two-sided p of the studentised statistic over every assignment of the focal role per frame (conservative: ties
    count fully), computed by brute force."""
    ids = np.unique(frames)
    f_of = np.searchsorted(ids, frames)
    a = e.shape[1]

    def z(assign):
        t = e[np.arange(len(e)), np.asarray(assign)[f_of]]
        tot = np.bincount(f_of, t)
        size = np.bincount(f_of)
        theta = tot.sum() / len(t)
        r = tot - size * theta
        se = np.sqrt(len(ids) / (len(ids) - 1) * ((r - r.mean()) ** 2).sum()) / len(t)
        return (theta - e.mean()) / se

    obs = abs(z([0] * len(ids)))
    null = np.array([abs(z(p)) for p in itertools.product(range(a), repeat=len(ids))])
    return float(np.mean(null >= obs - 1e-12))


def test_frame_relabelling_matches_exhaustive_enumeration():
    rng = np.random.default_rng(6)
    frames = np.repeat(np.arange(6), 3)
    e = rng.normal(0, 1, (18, 3)) + np.array([0.6, 0, 0])
    cl = Clusters.of(np.zeros(18), frames)
    r = ClusterRelabel(cl, 40_000, np.random.default_rng(7)).test(e, 0, None, np.random.default_rng(8))
    assert r.p == pytest.approx(exact_frame_p(e, frames), abs=0.006)
    # every base prompt of a frame takes the same assignment: duplicating a frame's bases changes nothing
    dup = np.repeat(e[::3], 3, axis=0)
    single = ClusterRelabel(Clusters.of(np.zeros(6), np.arange(6)), 5000, np.random.default_rng(9))
    triple = ClusterRelabel(cl, 5000, np.random.default_rng(9))
    assert single.test(e[::3], 0, None, np.random.default_rng(1)).p == pytest.approx(
        triple.test(dup, 0, None, np.random.default_rng(1)).p)


def test_inverted_interval_agrees_with_the_test():
    """The interval of a relabelling test excludes 0 exactly when p <= alpha, at any alpha (the headline's rule)."""
    rng = np.random.default_rng(10)
    for i in range(60):
        frames = np.repeat(np.arange(12), 2)
        e = rng.normal(0, 1, (24, 5)) + np.array([rng.normal(0, 0.5), 0, 0, 0, 0])
        e -= e.mean(axis=1, keepdims=True)  # a pooled contrast: centre 0
        r = ClusterRelabel(Clusters.of(np.zeros(24), frames), 999, np.random.default_rng(i)).test(e, 0, None, rng)
        for alpha in (0.05, 0.01, 0.2):
            lo, hi = r.interval(alpha)
            assert (r.p <= alpha) == (lo > 0 or hi < 0), (i, alpha, r.p, lo, hi)


def test_fieller_interval_for_a_ratio():
    rng = np.random.default_rng(11)
    x = np.column_stack([rng.binomial(5, 0.3, 60) / 5, rng.binomial(5, 0.2, 60) / 5])
    cl = Clusters.of(np.zeros(60), np.repeat(np.arange(20), 3))
    m, cov = cluster_cov(cl, x)
    lo, hi = fieller(m, cov, 1.96)
    assert lo < m[0] / m[1] < hi
    d = x[:, 0] - x[:, 1]  # at rho = 1 the Fieller statistic is the studentised test of V2 = V1
    r = ClusterRelabel(cl, 2000, np.random.default_rng(0)).test(np.column_stack([d, -d]), 0, None, rng)
    assert (r.theta / r.se) ** 2 == pytest.approx((m[0] - m[1]) ** 2 / (cov[0, 0] - 2 * cov[0, 1] + cov[1, 1]))
    assert np.isnan(fieller(np.array([0.3, 0.01]), np.array([[1e-3, 0], [0, 1e-3]]), 1.96)[0])  # denominator ~ 0: unbounded


def test_holm_and_the_level_holm_tests_each_hypothesis_at():
    p = np.array([0.01, np.nan, 0.04, 0.03, 0.2])
    adj = holm(p)
    np.testing.assert_allclose(adj, [0.04, np.nan, 0.09, 0.09, 0.2])
    for q in np.random.default_rng(12).random((20, 9)) ** 3:  # statsmodels' Holm
        np.testing.assert_allclose(holm(q), multipletests(q, method="holm")[1])
    for pi, ai in zip(p, adj):
        if np.isfinite(pi):
            assert (pi <= holm_level(pi, ai, 0.05)) == (ai <= 0.05)
