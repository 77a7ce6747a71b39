"""Paired, template-stratified bootstrap, BCa, permutation test and Holm correction (paper App. G).

The bootstrap resamples *units* (base prompts; for per-identity rates, prompts) with replacement
within each template stratum, so every replicate keeps the template mix. For statistics that are
functions of column means (rates, differences, ratios) a replicate is a multinomial count vector
per stratum, so all B replicate means are one matrix product; the jackknife for the BCa
acceleration uses the closed-form leave-one-out means.
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
    """A point estimate with its (1 - alpha) CI, p-value, the CI method and the number of units."""

    estimate: float
    ci_low: float = NAN
    ci_high: float = NAN
    p: float = NAN
    n: int = 0
    method: str = ""


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


def stratified_counts(strata: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(B, N) resampling counts (times each unit is drawn), from stratified_indices."""
    n = len(strata)
    flat = (np.arange(n_boot)[:, None] * n + stratified_indices(strata, n_boot, rng)).ravel()
    return np.bincount(flat, minlength=n_boot * n).reshape(n_boot, n).astype(float)


def interval(theta: float, boot: np.ndarray, jack: np.ndarray | None, alpha: float, skew_threshold: float) -> tuple[float, float, str]:
    """Percentile CI, or BCa when |skewness(boot)| > skew_threshold and the BCa terms are finite."""
    boot = boot[np.isfinite(boot)]
    if boot.size < 2 or not math.isfinite(theta):
        return NAN, NAN, ""
    probs = np.array([alpha / 2, 1 - alpha / 2])
    skew = stats.skew(boot) if np.ptp(boot) > 0 else 0.0
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


MeanStat = Callable[[np.ndarray], np.ndarray]


def bootstrap_means(x: np.ndarray, strata: np.ndarray, stat: MeanStat, n_boot: int, rng: np.random.Generator,
                    alpha: float = 0.05, skew_threshold: float = 0.5, null: float | None = None,
                    counts: np.ndarray | None = None) -> Estimate:
    """Bootstrap a statistic of the column means of `x` (units x K; `stat` maps (..., K) -> (...)).

    `counts` (B x N, from stratified_counts) lets several statistics of the same units share
    one set of replicates; otherwise they are drawn from `rng`."""
    n = len(x)
    if n == 0:
        return Estimate(NAN)
    x = np.asarray(x, dtype=float).reshape(n, -1)
    theta = float(stat(x.mean(axis=0)))
    if n < 2:
        return Estimate(theta, n=n)
    counts = stratified_counts(strata, n_boot, rng) if counts is None else counts
    boot = stat(counts @ x / n)
    jack = stat((x.sum(axis=0) - x) / (n - 1))
    lo, hi, method = interval(theta, boot, jack, alpha, skew_threshold)
    p = bootstrap_p(theta, boot, null) if null is not None else NAN
    return Estimate(theta, lo, hi, p, n, method)


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
        return Estimate(NAN, n=n)
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


def paired_permutation_greater(x: np.ndarray, y: np.ndarray, n_perm: int, rng: np.random.Generator) -> float:
    """One-sided p for mean(x - y) > 0, swapping the two labels within each unit (scipy.stats.permutation_test)."""
    if len(x) < 2:
        return NAN
    res = stats.permutation_test(
        (np.asarray(x, float), np.asarray(y, float)),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples", n_resamples=n_perm, alternative="greater", vectorized=True, random_state=rng,
    )
    return float(res.pvalue)


def holm(p: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (statsmodels); NaN entries stay NaN and are not counted."""
    p = np.asarray(p, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], alpha=alpha, method="holm")[1]
    return out
