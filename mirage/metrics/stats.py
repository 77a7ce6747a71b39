"""Cluster bootstrap, cluster relabelling tests, test-inverted intervals and Holm (paper App. G, revised).

Units (base prompts) sit in clusters (sentence frames; T5: case files) nested in strata (templates;
T5: harnesses). Base prompts of one frame share most of their words, so they are not independent: every
interval and test here treats the frame as the independent unit.

* `ClusterBootstrap`: the Rao-Wu rescaled bootstrap (Rao & Wu 1988) within each stratum: each stratum
  draws F_h - 1 of its F_h clusters with replacement and the drawn clusters weigh F_h / (F_h - 1) times
  their multiplicity. For any linear statistic its variance equals the unbiased between-cluster variance
  (the plain cluster bootstrap is short by (F_h - 1) / F_h, 5 % at 20 frames). Intervals use t quantiles
  with df = clusters - strata (the t-calibrated percentile / BCa interval), BCa takes its acceleration
  from the delete-one-cluster jackknife and its bias correction z0 from the mid-rank share of replicates
  below the estimate (as scipy.stats.bootstrap). Replicates are weights over clusters, so B replicate
  means of any column are one (B, F) @ (F, K) product; `unit_weights` gives them per unit for modules that
  resample other data jointly with the prompts.
* `ClusterRelabel`: relabelling tests whose draws are shared by every unit of a cluster (which identity
  plays the focal role, or which of two conditions is which): exact when the cluster's labels are
  exchangeable under the null, also when identity effects vary from frame to frame. The statistic is
  studentised by the cluster-robust standard error, so the test stays asymptotically valid where labels
  are not exchangeable (Chung & Romano 2013). `TestResult.interval` inverts the same test: its interval
  excludes the null value exactly when p <= alpha.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

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
    inverse: Callable[[float], tuple[float, float]] | None = field(default=None, compare=False, repr=False)
    """alpha -> the (1 - alpha) interval of the test the row is claimed on (the excess test)."""
    units: UnitValues | None = field(default=None, compare=False, repr=False)
    """The per-unit values the claimed number is computed from (what a paired comparison of two runs resamples)."""


@dataclass(frozen=True)
class UnitValues:
    """The units of one claimed number: stratum, cluster (frame) and id of each unit, per-unit columns x (N, K) and
    `stat`, which maps (..., K) column means to the number (a linear claim: K = 1, the mean itself)."""

    strata: np.ndarray
    frames: np.ndarray
    ids: np.ndarray
    x: np.ndarray
    stat: Callable[[np.ndarray], np.ndarray]


# --- cluster structure ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clusters:
    """Units grouped in clusters nested in strata: `index[i]` is unit i's cluster, `stratum[f]` cluster f's stratum."""

    index: np.ndarray
    stratum: np.ndarray

    @classmethod
    def of(cls, strata: np.ndarray, clusters: np.ndarray | None = None) -> Clusters:
        """Clusters from per-unit stratum and cluster labels (None: every unit its own cluster). A stratum whose
        units all share one cluster has no between-cluster variation to measure: its units become the clusters."""
        strata = np.asarray(strata).astype(str)
        n = len(strata)
        labels = np.arange(n).astype(str) if clusters is None else np.asarray(clusters).astype(str)
        _, s_code = np.unique(strata, return_inverse=True)
        _, c_code = np.unique(np.char.add(np.char.add(strata, "\x1f"), labels), return_inverse=True)
        single = np.zeros(n, bool)
        for s in np.unique(s_code):
            m = s_code == s
            single[m] = len(np.unique(c_code[m])) == 1 and m.sum() > 1
        if single.any():
            c_code = np.where(single, c_code.max() + 1 + np.arange(n), c_code)
            _, c_code = np.unique(c_code, return_inverse=True)
        stratum = np.zeros(c_code.max() + 1 if n else 0, dtype=np.intp)
        stratum[c_code] = s_code
        return cls(c_code.astype(np.intp), stratum)

    @property
    def n(self) -> int:
        return len(self.stratum)

    def sums(self, x: np.ndarray, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(F, K) cluster sums of x (N, K) over the units in `mask` and (F, K) counts of their finite values."""
        x = np.asarray(x, float).reshape(len(self.index), -1)
        ok = np.isfinite(x)
        if mask is not None:
            ok &= np.asarray(mask, bool)[:, None]
        k = x.shape[1]
        flat = (self.index[:, None] * k + np.arange(k)).ravel()
        s = np.bincount(flat, weights=np.where(ok, x, 0.0).ravel(), minlength=self.n * k).reshape(self.n, k)
        c = np.bincount(flat, weights=ok.ravel().astype(float), minlength=self.n * k).reshape(self.n, k)
        return s, c

    def df(self, present: np.ndarray) -> int:
        """Degrees of freedom of a between-cluster variance over the `present` clusters: clusters - strata."""
        strata = self.stratum[np.asarray(present, bool)]
        return int(len(strata) - len(np.unique(strata)))


def rao_wu_weights(clusters: Clusters, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(B, F) Rao-Wu replicate weights: each stratum draws F_h - 1 clusters with replacement, weight F_h / (F_h - 1)
    x times drawn (strata with one cluster keep weight 1: no variance to resample). One uniform per draw slot."""
    f = clusters.n
    codes, size = np.unique(clusters.stratum, return_counts=True)
    order = np.argsort(clusters.stratum, kind="stable")  # the clusters of a stratum are contiguous in `order`
    start = np.cumsum(np.r_[0, size[:-1]])
    draws = np.maximum(size - 1, 0)
    slot_start, slot_size = np.repeat(start, draws), np.repeat(size, draws)
    u = rng.random((n_boot, int(draws.sum())), dtype=np.float32)
    chosen = order[slot_start + np.minimum((u * slot_size).astype(np.intp), slot_size - 1)]
    w = np.bincount((np.arange(n_boot)[:, None] * f + chosen).ravel(), minlength=n_boot * f).reshape(n_boot, f).astype(float)
    per = size[np.searchsorted(codes, clusters.stratum)]
    w *= np.where(per > 1, per / np.maximum(per - 1, 1), 1.0)
    w[:, per == 1] = 1.0
    return w


class ClusterBootstrap:
    """Rao-Wu replicate weights over clusters, shared by every statistic of one set of units."""

    def __init__(self, clusters: Clusters, n_boot: int, rng: np.random.Generator):
        self.clusters = clusters
        self.weights = rao_wu_weights(clusters, n_boot, rng)

    def unit_weights(self) -> np.ndarray:
        """(B, N) replicate weight of every unit (its cluster's weight)."""
        return self.weights[:, self.clusters.index]

    def means(self, x: np.ndarray, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """(B, K) replicate column means of x over `mask` (NaN = missing), (J, K) delete-one-cluster jackknife means
        over the clusters holding data, and the df of that level."""
        s, c = self.clusters.sums(x, mask)
        present = c.sum(axis=1) > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = (self.weights @ s) / (self.weights @ c)
            jack = (s.sum(0) - s[present]) / (c.sum(0) - c[present])
        return reps, jack, self.clusters.df(present)

    def level_means(self, x: np.ndarray, levels: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
        """`means` of one column x (N,) over each level mask at once: (B, L) replicate means, per level the jackknife
        means over its clusters and its df."""
        cols = np.column_stack([np.where(m, x, np.nan) for m in levels])
        s, c = self.clusters.sums(cols)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = (self.weights @ s) / (self.weights @ c)
            jack, dfs = [], []
            for j in range(len(levels)):
                present = c[:, j] > 0
                jack.append((s[:, j].sum() - s[present, j]) / (c[:, j].sum() - c[present, j]))
                dfs.append(self.clusters.df(present))
        return reps, jack, dfs


@functools.lru_cache(maxsize=4096)
def t_quantile(alpha: float, df: int) -> float:
    """Two-sided (1 - alpha) t quantile: the small-cluster correction of every interval."""
    return float(stats.t.ppf(1 - alpha / 2, df)) if df >= 1 else math.inf


def interval(theta: float, boot: np.ndarray, jack: np.ndarray | None, alpha: float, skew_threshold: float, df: int
             ) -> tuple[float, float, str]:
    """t-calibrated percentile CI (percentiles at Phi(-+t_df)), or BCa when |skewness(boot)| > skew_threshold (z0
    from the mid-rank share below theta, acceleration from the cluster jackknife). No interval (NaN, method "")
    when fewer than 2 finite replicates, all replicates equal or df < 1."""
    boot = boot[np.isfinite(boot)]
    if boot.size < 2 or not math.isfinite(theta) or df < 1 or np.ptp(boot) <= 1e-12 * max(1.0, abs(theta)):
        return NAN, NAN, ""
    q = t_quantile(alpha, df)
    z = np.array([-q, q])
    dev = boot - boot.mean()
    sq = dev * dev
    skew = np.mean(sq * dev) / np.mean(sq) ** 1.5
    if abs(skew) > skew_threshold and jack is not None and jack.size > 2 and np.all(np.isfinite(jack)):
        share = (np.sum(boot < theta) + 0.5 * np.sum(boot == theta)) / boot.size
        z0 = special.ndtri(share)
        d = jack.mean() - jack
        denom = 6.0 * np.sum(d**2) ** 1.5
        a = np.sum(d**3) / denom if denom > 0 else 0.0
        adj = special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
        if np.all(np.isfinite(adj)):
            lo, hi = np.quantile(boot, adj)
            return float(lo), float(hi), "bca"
    lo, hi = np.quantile(boot, special.ndtr(z))
    return float(lo), float(hi), "percentile"


MeanStat = Callable[[np.ndarray], np.ndarray]


def bootstrap_stat(x: np.ndarray, stat: MeanStat, boot: ClusterBootstrap | None, alpha: float = 0.05,
                   skew_threshold: float = 0.5, mask: np.ndarray | None = None) -> Estimate:
    """Estimate and cluster-bootstrap CI of a statistic of the column means of x (units x K) over `mask`;
    `stat` maps (..., K) means to (...). n < 2 units: flag n_too_small; no interval: flag degenerate_bootstrap."""
    x = np.asarray(x, float)
    x = x.reshape(len(x), -1) if x.ndim < 2 else x
    sel = x if mask is None else x[np.asarray(mask, bool)]
    n = int(np.isfinite(sel).any(axis=1).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = float(stat(np.nanmean(sel, axis=0))) if n else NAN
    if n < 2 or boot is None:
        return Estimate(theta, n=n, flag="n_too_small")
    reps, jack, df = boot.means(x, mask)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo, hi, method = interval(theta, stat(reps), stat(jack), alpha, skew_threshold, df)
    if not method:
        return Estimate(theta, n=n, flag="degenerate_bootstrap")
    return Estimate(theta, lo, hi, NAN, n, method)


# --- relabelling tests ------------------------------------------------------------------------------------


class TestResult:
    """A studentised cluster relabelling test: estimate, cluster-robust se, p and what inverting it needs (the
    relabellings' |z| and the tie weight)."""

    def __init__(self, theta: float, se: float, p: float, null: np.ndarray, tie: float, df: int):
        self.theta, self.se, self.p, self.tie, self.df = theta, se, p, tie, df
        self.null = null  # |z| (one-sided: z) of the relabellings

    def critical(self, alpha: float) -> float:
        """The |z| above which the test rejects at level alpha (inf when no |z| would): the (k+1)-th largest relabelled
        |z|, k = floor(alpha (B + 1) - U) the relabellings allowed above it."""
        b = self.null.size
        k = math.floor(alpha * (b + 1) - self.tie)
        if k < 0:
            return math.inf
        return float(-np.partition(-self.null, k)[k]) if k < b else 0.0

    def interval(self, alpha: float) -> tuple[float, float]:
        """theta -+ c se, c = critical(alpha): the interval of the inverted test, which excludes 0 iff p <= alpha
        (two-sided tests of a parameter whose null value is 0)."""
        if not (math.isfinite(self.theta) and math.isfinite(self.se)) or self.se <= 0 or self.null.size == 0:
            return NAN, NAN
        c = self.critical(alpha)
        return self.theta - c * self.se, self.theta + c * self.se


def _tied_p(greater: int, ties: int, total: int, u: float) -> float:
    """(greater + U * ties) / total, U ~ Uniform(0, 1] (ties include the observed labelling itself): the randomised
    relabelling p, uniform under the null, so the test has exact size instead of being conservative where k/n rates
    make many relabellings tie."""
    return float((greater + u * ties) / total)


class ClusterRelabel:
    """Uniform relabellings drawn per cluster and shared by every test on those units: all units of cluster f take
    assignment floor(u_bf * A) of their A possible ones (identity roles, or the two labels of a swap)."""

    def __init__(self, clusters: Clusters, n_draws: int, rng: np.random.Generator):
        self.clusters = clusters
        self.u = rng.random((n_draws, clusters.n), dtype=np.float32)
        self._assign: dict[int, np.ndarray] = {}

    def assignments(self, a: int) -> np.ndarray:
        """(B, F) drawn assignment of every cluster among a possible ones."""
        if a not in self._assign:
            self._assign[a] = np.minimum((self.u * a).astype(np.intp), a - 1)
        return self._assign[a]

    def test(self, e: np.ndarray, obs: int, mask: np.ndarray | None, rng: np.random.Generator,
             alternative: str = "two-sided") -> TestResult | None:
        """`tests` of the units in `mask` only."""
        if mask is not None:
            e = np.where(np.asarray(mask, bool)[:, None], np.asarray(e, float).reshape(len(mask), -1), np.nan)
        return self.tests(e, obs, [np.ones(len(e), bool)], [rng], alternative)[0]

    def tests(self, e: np.ndarray, obs: int, levels: list[np.ndarray], rngs: list[np.random.Generator],
              alternative: str = "two-sided") -> list[TestResult | None]:
        """For each level (a unit mask covering whole strata), test that the mean of e[:, obs] (NaN = missing) is no
        different from what a relabelling gives: z = (mean - centre) / se_CR, centre = the mean over all units and
        assignments of the level (invariant under relabelling, so the test stays exact), se_CR the stratified
        cluster-robust standard error (F_h / (F_h - 1) factor). One gather of the relabelled cluster sums serves
        every level (per-stratum moments). None for a level where no stratum has two clusters holding data."""
        cl = self.clusters
        s, c = cl.sums(e)
        keep = c.sum(axis=1) > 0
        a = s.shape[1]
        j = self.assignments(a)[:, keep]
        s, c, strat = s[keep], c[keep], cl.stratum[keep]
        f = len(s)
        codes, strat = np.unique(strat, return_inverse=True)
        h = np.zeros((f, len(codes)))
        h[np.arange(f), strat] = 1.0
        size = h.sum(axis=0)
        factor = np.where(size > 1, size / np.maximum(size - 1, 1), 0.0)
        idx = j + np.arange(f) * a
        sv = np.take(s.ravel(), idx)
        cv = c[:, 0] if np.all(c == c[:, :1]) else np.take(c.ravel(), idx)  # no missing values: counts do not vary

        def moments(x: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, ...]:
            """Per-stratum sums of x, n, x^2, x n, n^2 (n per cluster (F,) when it does not vary by assignment)."""
            if n.ndim == 1:
                c1, c2 = n @ h, (n * n) @ h
                return x @ h, np.broadcast_to(c1, x.shape[:-1] + c1.shape), (x * x) @ h, x @ (h * n[:, None]), \
                    np.broadcast_to(c2, x.shape[:-1] + c2.shape)
            return x @ h, n @ h, (x * x) @ h, (x * n) @ h, (n * n) @ h

        null_m, obs_m = moments(sv, cv), moments(s[:, obs], c[:, obs])
        all_s, all_c = s @ np.ones(a) @ h, c @ np.ones(a) @ h  # per-stratum sums over all assignments (centre)
        kept_stratum = np.full(cl.n, -1)
        kept_stratum[keep] = strat
        unit_stratum = kept_stratum[cl.index]
        out: list[TestResult | None] = []
        for mask, rng in zip(levels, rngs):
            hs = np.unique(unit_stratum[np.asarray(mask, bool) & (unit_stratum >= 0)])
            df = int(size[hs].sum() - len(hs))
            if df < 1:  # no stratum with two clusters: no between-cluster variance, no test
                out.append(None)
                continue
            centre = all_s[hs].sum() / all_c[hs].sum()

            def z_of(m: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                s1, c1, s2, sc, c2 = (x[..., hs] for x in m)
                with np.errstate(invalid="ignore", divide="ignore"):
                    tot = c1.sum(axis=-1)
                    theta = s1.sum(axis=-1) / tot
                    t = theta[..., None]
                    r1, r2 = s1 - t * c1, s2 - 2 * t * sc + t * t * c2
                    ss = np.maximum(r2 - r1 * r1 / size[hs], 0)
                    se = np.sqrt(ss @ factor[hs]) / tot
                    z = np.where(se > 1e-12 * np.maximum(1.0, np.abs(theta)), (theta - centre) / se,
                                 np.where(np.abs(theta - centre) <= 1e-12, 0.0, np.sign(theta - centre) * np.inf))
                return theta, se, z

            theta, se, z0 = (float(v) for v in z_of(obs_m))
            _, _, zb = z_of(null_m)
            zb = zb[~np.isnan(zb)]
            if not math.isfinite(theta) or zb.size == 0 or math.isnan(z0):
                out.append(None)
                continue
            stat, ref = (zb, z0) if alternative == "greater" else (np.abs(zb), abs(z0))
            tol = 1e-9 * max(1.0, abs(ref)) if math.isfinite(ref) else 0.0
            with np.errstate(invalid="ignore"):
                greater, ties = int(np.sum(stat > ref + tol)), int(np.sum((stat == ref) | (np.abs(stat - ref) <= tol))) + 1
            tie = 1.0 - rng.random()
            out.append(TestResult(theta, se, _tied_p(greater, ties, zb.size + 1, tie), stat, tie, df))
        return out


def ratio_gap_test(relabel: ClusterRelabel, x: np.ndarray, rng: np.random.Generator) -> TestResult | None:
    """Studentised relabelling test of rho_focal - rho_controls = 0, rho = mean(x2) / mean(x1) of a ratio metric (CAI):
    x (N, A, 4) holds per unit, for each of the A identity assignments (which identity is focal), [x2 focal, x1 focal,
    x2 controls, x1 controls] (NaN rows are left out). The relabelling draws the assignment per cluster as for every
    identity test; z = theta / se with se the stratified cluster-robust (delta-method) standard error of the ratio
    difference, recomputed under each relabelling, so the test is exact where identities are exchangeable within frames
    and asymptotically valid otherwise. `TestResult.interval` inverts it around theta. None when no stratum has two
    clusters, or a denominator is 0."""
    cl = relabel.clusters
    n, a, _ = x.shape
    ok = np.isfinite(x).all(axis=(1, 2))
    s, c = cl.sums(x.reshape(n, a * 4), ok)
    keep = c[:, 0] > 0
    s = s[keep].reshape(-1, a, 4)
    strat = np.unique(cl.stratum[keep], return_inverse=True)[1]
    f = len(s)
    h = np.zeros((f, strat.max() + 1 if f else 0))
    h[np.arange(f), strat] = 1.0
    size = h.sum(axis=0)
    factor = np.where(size > 1, size / np.maximum(size - 1, 1), 0.0)
    df = int(size[size > 1].sum() - (size > 1).sum())
    if df < 1:
        return None

    def z_of(sv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """sv (..., F, 4) cluster sums under an assignment: theta, se, z."""
        tot = sv.sum(axis=-2)
        with np.errstate(invalid="ignore", divide="ignore"):
            rf, rc = tot[..., 0] / tot[..., 1], tot[..., 2] / tot[..., 3]
            r = (sv[..., 0] - rf[..., None] * sv[..., 1]) / tot[..., 1:2] - \
                (sv[..., 2] - rc[..., None] * sv[..., 3]) / tot[..., 3:4]
            var = ((r * r) @ h - (r @ h) ** 2 / np.maximum(size, 1)) @ factor
            se = np.sqrt(np.maximum(var, 0))
            theta = rf - rc
            z = np.where(se > 1e-12 * np.maximum(1.0, np.abs(theta)), theta / se,
                         np.where(np.abs(theta) <= 1e-12, 0.0, np.sign(theta) * np.inf))
        return theta, se, z

    theta, se, z0 = (float(v) for v in z_of(s[:, 0]))
    if not math.isfinite(theta) or math.isnan(z0):
        return None
    j = relabel.assignments(a)[:, keep]
    _, _, zb = z_of(s[np.arange(f), j])
    zb = np.abs(zb[~np.isnan(zb)])
    if zb.size == 0:
        return None
    ref = abs(z0)
    tol = 1e-9 * max(1.0, ref) if math.isfinite(ref) else 0.0
    greater, ties = int(np.sum(zb > ref + tol)), int(np.sum(np.abs(zb - ref) <= tol)) + 1
    tie = 1.0 - rng.random()
    return TestResult(theta, se, _tied_p(greater, ties, zb.size + 1, tie), zb, tie, df)


def cluster_cov(clusters: Clusters, x: np.ndarray, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Column means of x (N, K; complete rows) over `mask` and their stratified cluster-robust covariance (K, K),
    with the F_h / (F_h - 1) small-cluster factor: the variance ClusterRelabel.test studentises by."""
    s, c = clusters.sums(x, mask)
    present = c[:, 0] > 0
    s, c, strat = s[present], c[present], clusters.stratum[present]
    tot = c.sum(axis=0)
    m = s.sum(axis=0) / tot
    r = s - c * m
    cov = np.zeros((x.shape[1], x.shape[1]))
    for h in np.unique(strat):
        rh = r[strat == h]
        if len(rh) > 1:
            d = rh - rh.mean(axis=0)
            cov += len(rh) / (len(rh) - 1) * d.T @ d
    return m, cov / np.outer(tot, tot)


def fieller(m: np.ndarray, cov: np.ndarray, c: float) -> tuple[float, float]:
    """Fieller interval for m[0] / m[1]: the ratios rho whose |m0 - rho m1| / se(m0 - rho m1) < c. NaN bounds when the
    set is unbounded (m[1] not distinguishable from 0 at this level)."""
    if not math.isfinite(c):
        return NAN, NAN
    a = m[1] ** 2 - c * c * cov[1, 1]
    if a <= 0:
        return NAN, NAN
    b = -2 * (m[0] * m[1] - c * c * cov[0, 1])
    k = m[0] ** 2 - c * c * cov[0, 0]
    r = math.sqrt(max(b * b - 4 * a * k, 0.0))
    return (-b - r) / (2 * a), (-b + r) / (2 * a)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values, min(1, max_{j <= i} (m - j + 1) p_(j)) (statsmodels' multipletests "holm",
    which the tests check against, without its per-call gc.collect); NaN entries stay NaN and are not counted."""
    p = np.asarray(p, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    out[order] = np.minimum(np.maximum.accumulate(p[order] * np.arange(m, 0, -1)), 1.0)
    return out


def holm_level(p: float, p_adj: float, alpha: float) -> float:
    """The level at which Holm tested this hypothesis: alpha * p / p_adj, so p <= level iff p_adj <= alpha. The
    (1 - level) interval of the same test therefore excludes the null value exactly when Holm rejects."""
    if not (math.isfinite(p) and math.isfinite(p_adj)) or p_adj <= 0:
        return alpha
    return alpha * p / p_adj


def _row_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    rx, ry = stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1)
    rx -= rx.mean(axis=-1, keepdims=True)
    ry -= ry.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(-1) / np.sqrt((rx**2).sum(-1) * (ry**2).sum(-1))


def bootstrap_spearman(x: np.ndarray, y: np.ndarray, n_boot: int, rng: np.random.Generator, alpha: float = 0.05,
                       skew_threshold: float = 0.5) -> Estimate:
    """Spearman rho of paired per-unit scores: bootstrap CI over units (flat), p from scipy.stats.spearmanr."""
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
    idx = rng.integers(0, n, (n_boot, n))
    boot = _row_spearman(x[idx], y[idx])
    loo = np.array([np.delete(np.arange(n), i) for i in range(n)])
    jack = _row_spearman(x[loo], y[loo])
    lo, hi, method = interval(theta, boot, jack, alpha, skew_threshold, n - 1)
    return Estimate(theta, lo, hi, float(res.pvalue), n, method)
