"""Paired, template-stratified bootstrap, BCa, permutation test and Holm correction (paper App. G).

The bootstrap resamples *units* (base prompts; for per-identity rates, prompts) within each template
stratum, so every replicate keeps the template mix: flat (units with replacement) or clustered (sentence
frames with replacement, then units within each drawn frame). For statistics that are functions of
column means (rates, differences, ratios) a replicate is a count vector, so all B replicate means are
one matrix product; the jackknife for the BCa acceleration uses the closed-form leave-one-out means.
p-values of paired differences come from relabelling tests (sign flips, permutation of identity
labels within a unit), which are exact under their null at any sample size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special, stats
from statsmodels.stats.multitest import multipletests

NAN = float("nan")


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its (1 - alpha) CI, p-value, CI method, number of units and flag; bias
    metrics also carry their placebo floor and the excess over it (with CI and p)."""

    estimate: float
    ci_low: float = NAN
    ci_high: float = NAN
    p: float = NAN
    n: int = 0
    method: str = ""
    flag: str = ""
    placebo: float = NAN
    excess: float = NAN
    excess_ci_low: float = NAN
    excess_ci_high: float = NAN
    excess_p: float = NAN
    placebo_kind: str = ""
    n_degenerate: float = NAN


def stratified_indices(strata: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(B, N) resampled unit indices, drawn with replacement within each stratum (one uniform draw per cell)."""
    strata = np.asarray(strata)
    order = np.argsort(strata, kind="stable")
    _, start, size = np.unique(strata[order], return_index=True, return_counts=True)
    starts, sizes = np.repeat(start, size), np.repeat(size, size)
    pos = starts + (rng.random((n_boot, len(strata)), dtype=np.float32) * sizes).astype(np.intp).clip(max=starts + sizes - 1)
    out = np.empty((n_boot, len(strata)), dtype=np.intp)
    out[:, order] = order[pos]
    return out


def resample_counts(strata: np.ndarray, clusters: np.ndarray | None, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(B, N) resampling counts (times each unit is drawn in each replicate).

    `clusters=None`: flat, units drawn with replacement within each stratum. Otherwise two-stage:
    within each stratum its clusters (frames) are drawn with replacement, then each drawn cluster's
    units with replacement. Replicate sizes then vary, so means are counts @ x / counts.sum(1).
    Vectorised: one uniform per drawn cluster slot and per unit slot (padded to the largest cluster)."""
    strata = np.asarray(strata).astype(str)
    n = len(strata)
    clusters = np.arange(n).astype(str) if clusters is None else np.asarray(clusters).astype(str)
    order = np.lexsort((clusters, strata))  # units sorted by (stratum, cluster)
    s_sorted, c_sorted = strata[order], clusters[order]
    new = np.r_[True, (s_sorted[1:] != s_sorted[:-1]) | (c_sorted[1:] != c_sorted[:-1])]
    c_start = np.flatnonzero(new)  # cluster table (sorted positions)
    c_size = np.diff(np.r_[c_start, n])
    c_stratum = s_sorted[c_start]
    first = np.r_[True, c_stratum[1:] != c_stratum[:-1]]
    s_first = np.maximum.accumulate(np.where(first, np.arange(len(c_start)), 0))  # a cluster's stratum's first cluster
    s_count = np.diff(np.r_[np.flatnonzero(first), len(c_start)])[np.cumsum(first) - 1]  # clusters in its stratum
    # stage 1: each stratum draws as many clusters as it has (one slot per cluster)
    u = rng.random((n_boot, len(c_start)), dtype=np.float32)
    chosen = s_first + np.minimum((u * s_count).astype(np.intp), s_count - 1)
    rows = np.arange(n_boot)[:, None]
    if c_size.max() == 1:
        pos, weight = c_start[chosen], None
    else:  # stage 2: each drawn cluster draws its size in units
        size = c_size[chosen][..., None]
        u2 = rng.random((n_boot, len(c_start), int(c_size.max())), dtype=np.float32)
        pos = c_start[chosen][..., None] + np.minimum((u2 * size).astype(np.intp), size - 1)
        weight = (np.arange(c_size.max()) < size).ravel()
        rows = rows[..., None]
    flat = (rows * n + order[pos]).ravel()
    return np.bincount(flat, weights=weight, minlength=n_boot * n).reshape(n_boot, n).astype(float)


def stratified_counts(strata: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Flat stratified resampling counts (resample_counts without clusters)."""
    return resample_counts(strata, None, n_boot, rng)


def interval(theta: float, boot: np.ndarray, jack: np.ndarray | None, alpha: float, skew_threshold: float) -> tuple[float, float, str]:
    """Percentile CI, or BCa when |skewness(boot)| > skew_threshold and the BCa terms are finite.
    No interval (NaN, method "") when fewer than 2 finite replicates or all replicates are equal."""
    boot = boot[np.isfinite(boot)]
    if boot.size < 2 or not math.isfinite(theta) or np.ptp(boot) <= 1e-12 * max(1.0, abs(theta)):
        return NAN, NAN, ""
    probs = np.array([alpha / 2, 1 - alpha / 2])
    dev = boot - boot.mean()
    sq = dev * dev
    skew = np.mean(sq * dev) / np.mean(sq) ** 1.5
    if abs(skew) > skew_threshold and jack is not None and np.all(np.isfinite(jack)):
        z0 = special.ndtri(np.mean(boot < theta))
        d = jack.mean() - jack
        denom = 6.0 * np.sum(d**2) ** 1.5
        a = np.sum(d**3) / denom if denom > 0 else 0.0
        z = special.ndtri(probs)
        adj = special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
        if np.all(np.isfinite(adj)):
            lo, hi = np.percentile(boot, adj * 100)
            return float(lo), float(hi), "bca"
    lo, hi = np.percentile(boot, probs * 100)
    return float(lo), float(hi), "percentile"


def bootstrap_p(theta: float, boot: np.ndarray, null: float) -> float:
    """Two-sided p for H0: statistic == null, from the null-centred bootstrap distribution:
    (1 + #{|theta*_b - theta| >= |theta - null|}) / (B + 1)."""
    boot = boot[np.isfinite(boot)]
    if boot.size == 0 or not math.isfinite(theta):
        return NAN
    return float((1 + np.sum(np.abs(boot - theta) >= abs(theta - null) - 1e-12)) / (boot.size + 1))


def replicate_means(counts: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(B, K) replicate column means of x (N, K) under resampling counts (B, N)."""
    return (counts @ x) / counts.sum(axis=1, keepdims=True)


def jackknife_means(x: np.ndarray) -> np.ndarray:
    """(N, K) leave-one-out column means."""
    n = len(x)
    return (x.sum(axis=0) - x) / (n - 1)


MeanStat = Callable[[np.ndarray], np.ndarray]


def column_means(x: np.ndarray, counts: np.ndarray | None, alpha: float = 0.05, skew_threshold: float = 0.5
                 ) -> list[Estimate]:
    """Bootstrap CI of each column mean of x (N, K) from one product with the shared counts (B, N)."""
    n = len(x)
    theta = x.mean(axis=0) if n else np.full(x.shape[1], NAN)
    if n < 2 or counts is None:
        return [Estimate(float(t), n=n, flag="n_too_small") for t in theta]
    reps, jack = replicate_means(counts, x), jackknife_means(x)
    out = []
    for k in range(x.shape[1]):
        lo, hi, method = interval(float(theta[k]), reps[:, k], jack[:, k], alpha, skew_threshold)
        out.append(Estimate(float(theta[k]), lo, hi, NAN, n, method) if method else
                   Estimate(float(theta[k]), n=n, flag="degenerate_bootstrap"))
    return out


def bootstrap_means(x: np.ndarray, strata: np.ndarray, stat: MeanStat, n_boot: int, rng: np.random.Generator,
                    alpha: float = 0.05, skew_threshold: float = 0.5, null: float | None = None,
                    counts: np.ndarray | None = None) -> Estimate:
    """Bootstrap a statistic of the column means of `x` (units x K; `stat` maps (..., K) -> (...)).

    `counts` (B x N, from resample_counts) lets several statistics of the same units share one set of
    replicates (and carries the clustering); otherwise flat stratified replicates are drawn from `rng`.
    n < 2 gives flag n_too_small, all-equal replicates flag degenerate_bootstrap (NaN CI and p both)."""
    n = len(x)
    if n == 0:
        return Estimate(NAN, flag="n_too_small")
    x = np.asarray(x, dtype=float).reshape(n, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = float(stat(x.mean(axis=0)))
        if n < 2:
            return Estimate(theta, n=n, flag="n_too_small")
        counts = stratified_counts(strata, n_boot, rng) if counts is None else counts
        boot = stat(replicate_means(counts, x))
        jack = stat(jackknife_means(x))
    lo, hi, method = interval(theta, boot, jack, alpha, skew_threshold)
    if not method:
        return Estimate(theta, n=n, flag="degenerate_bootstrap")
    p = bootstrap_p(theta, boot, null) if null is not None else NAN
    return Estimate(theta, lo, hi, p, n, method)


class Relabel:
    """Uniform relabellings of N units, shared by every test on those units: unit i takes assignment
    J_bi = floor(u_bi * A) of its A possible ones (identity assignments, or the two labels of a swap)."""

    def __init__(self, n_units: int, n_draws: int, rng: np.random.Generator):
        self.u = rng.random((n_draws, n_units), dtype=np.float32)
        self._index: dict[int, np.ndarray] = {}

    def values(self, e: np.ndarray) -> np.ndarray:
        """(B, N) values e[i, J_bi] of per-unit values e (N, A) under the drawn assignments."""
        n, a = e.shape
        if a not in self._index:
            self._index[a] = np.minimum((self.u * a).astype(np.intp), a - 1) + np.arange(n) * a
        return np.take(e.ravel(), self._index[a])


def _tied_p(greater: int, ties: int, total: int, rng: np.random.Generator | None) -> float:
    """(greater + U * ties) / total, U ~ Uniform(0, 1] (ties include the observed labelling itself): the randomised
    relabelling p, uniform under the null, so the test has exact size instead of being conservative where k/n rates
    make many relabellings tie. rng=None: U = 1 (the conservative, non-randomised p)."""
    u = 1.0 if rng is None else 1.0 - rng.random()
    return float((greater + u * ties) / total)


def two_sided_p(observed: float, null: np.ndarray, centre: float | None = None,
                rng: np.random.Generator | None = None) -> float:
    """Monte-Carlo two-sided relabelling p: the observed labelling counts as one of the B + 1 draws; a draw is
    at least as extreme when |null - c| >= |obs - c|, c = centre of the null distribution (its mean unless
    given; use a relabelling-invariant centre to keep the test exact). Ties randomised when `rng` is given."""
    null = null[np.isfinite(null)]
    if not math.isfinite(observed) or null.size == 0:
        return NAN
    c = float(null.mean()) if centre is None else centre
    dist, obs = np.abs(null - c), abs(observed - c)
    tol = 1e-9 * max(1.0, obs)
    greater, ties = int(np.sum(dist > obs + tol)), int(np.sum(np.abs(dist - obs) <= tol)) + 1
    return _tied_p(greater, ties, null.size + 1, rng)


def sign_flip_p(d: np.ndarray, n_perm: int, rng: np.random.Generator, alternative: str = "two-sided",
                randomise_ties: bool = True) -> float:
    """Paired sign-flip (label-swap) test of mean(d) = 0: each unit's difference keeps or flips its sign.
    Exact enumeration when the 2^N sign patterns number at most n_perm, else Monte-Carlo (observed counted
    as one draw); ties randomised (exact size) unless randomise_ties is False."""
    d = np.asarray(d, float)
    n = len(d)
    if n < 2 or np.all(d == 0):
        return NAN
    if 2**n <= n_perm:
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        null, extra = signs[1:] @ d / n, 1  # pattern 0 (no flips) is the observed labelling
    else:
        null, extra = (1 - 2 * (rng.random((n_perm, n)) < 0.5)) @ d / n, 1
    obs = d.mean()
    tol = 1e-9 * max(1.0, abs(obs))
    stat, ref = (null, obs) if alternative == "greater" else (np.abs(null), abs(obs))
    greater, ties = int(np.sum(stat > ref + tol)), int(np.sum(np.abs(stat - ref) <= tol)) + extra
    return _tied_p(greater, ties, null.size + extra, rng if randomise_ties else None)


def _row_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    rx, ry = stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1)
    rx -= rx.mean(axis=-1, keepdims=True)
    ry -= ry.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(-1) / np.sqrt((rx**2).sum(-1) * (ry**2).sum(-1))


def bootstrap_spearman(x: np.ndarray, y: np.ndarray, strata: np.ndarray, n_boot: int, rng: np.random.Generator,
                       alpha: float = 0.05, skew_threshold: float = 0.5) -> Estimate:
    """Spearman rho of paired per-unit scores: bootstrap CI over units, p from scipy.stats.spearmanr."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < 3:
        return Estimate(NAN, n=n, flag="n_too_small")
    if np.ptp(x) == 0 or np.ptp(y) == 0:  # a constant side: rho undefined
        return Estimate(NAN, n=n, flag="degenerate_bootstrap")
    res = stats.spearmanr(x, y)
    theta = float(res.statistic)
    if not math.isfinite(theta):
        return Estimate(NAN, n=n)
    idx = stratified_indices(strata, n_boot, rng)
    boot = _row_spearman(x[idx], y[idx])
    loo = np.array([np.delete(np.arange(n), i) for i in range(n)])
    jack = _row_spearman(x[loo], y[loo])
    lo, hi, method = interval(theta, boot, jack, alpha, skew_threshold)
    return Estimate(theta, lo, hi, float(res.pvalue), n, method)


def holm(p: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (statsmodels); NaN entries stay NaN and are not counted."""
    p = np.asarray(p, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], alpha=alpha, method="holm")[1]
    return out
