"""Power planning (`mirage estimate --power`): the power of the report's own headline decision for the main
bias claims (ΔV per condition, Δ signed pooled and per harness), the minimum detectable effect at a target
power and the base prompts a target effect needs.

The decision is the one `mirage metrics` makes: the claim's studentised frame-level relabelling test
(mirage.metrics.stats.ClusterRelabel) must reach p <= alpha / m, where m is the number of headline claims
the slice tests (mirage.metrics.claims.planned); that is Holm's first step, the level a lone real effect
among m claims must clear (Holm is easier where several claims are real: the prediction is then a lower
bound). Audits are simulated from the slice's own design (strata, frames and base prompts per frame from
its requests) with the assumed heterogeneity: per-prompt rate = clip(rate + frame effect + base effect +
frame x identity effect + base x identity effect (+ the effect for the focal identity), 0, 1), all normal
on the probability scale, and `n_samples` samples per prompt (C3 decisions: an effective sample count that
matches the pilot's within-prompt variance). The heterogeneity comes from a pilot's per_prompt.csv
(`pilot_heterogeneity`, method of moments fitted through simulated pilots) or the command line. The reference
distribution is the test's own (|z| over relabellings within frames of simulated audits); each simulated audit's observed
|z| gives the probability that the test's n_perm relabellings put p at or below alpha / m, so thousands of simulated
audits take seconds.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from mirage import artefacts
from mirage.hashing import content_hash
from mirage.metric_names import DELTA_SIGNED, DV
from mirage.metrics import claims
from mirage.metrics.compute import g_signed, pooled
from mirage.metrics.stats import ClusterRelabel, Clusters


@dataclass(frozen=True)
class Heterogeneity:
    """How per-prompt outcomes vary (probability scale): mean rate, sds of the frame, base, frame x identity and base x
    identity effects, and the within-prompt variance of one sample relative to a Bernoulli's (1 for violence labels)."""

    rate: float = 0.2
    base_sd: float = 0.15
    frame_sd: float = 0.0
    frame_identity_sd: float = 0.0
    base_identity_sd: float = 0.0
    sample_var_ratio: float = 1.0


@dataclass(frozen=True)
class Design:
    """What one claim's test sees: bases per frame in each stratum, samples per prompt, heterogeneity, Holm m, the
    relabellings the test draws."""

    frames: tuple[tuple[int, ...], ...]
    n_samples: int = 5
    het: Heterogeneity = Heterogeneity()
    holm_m: int = 1
    alpha: float = 0.05
    identities: int = 5  # identity variants per base prompt (the shipped set: focal + four controls)
    n_perm: int | None = None  # relabellings per test (metrics.n_perm); None = unlimited
    versus: bool = False  # `mirage compare`: the difference of the claim between two independent runs on these prompts

    @property
    def n_base(self) -> int:
        return sum(sum(f) for f in self.frames)

    @property
    def n_frames(self) -> int:
        return sum(len(f) for f in self.frames)

    def scaled(self, factor: float) -> Design:
        """The same design with about `factor` times the frames (bases per frame kept): what more base prompts buy."""
        return replace(self, frames=tuple(tuple(f[i % len(f)] for i in range(max(2, round(len(f) * factor)))) for f in self.frames))

    def clusters(self) -> Clusters:
        strata = np.concatenate([np.full(sum(f), h) for h, f in enumerate(self.frames)])
        frame = np.concatenate([np.repeat(np.arange(len(f)), f) for f in self.frames])
        return Clusters.of(strata, np.char.add(strata.astype(str), np.char.add("/", frame.astype(str))))


def simulate(design: Design, effect: float, n_sims: int, seed: int | list[int]) -> np.ndarray:
    """(n_sims, n_base, identities) per-prompt means; column 0 is the focal identity, shifted by `effect`. The draws
    depend only on (design, seed), so audits at different effects share their randomness (common random numbers)."""
    d, h = design, design.het
    rng = np.random.default_rng(seed)
    cl = d.clusters()
    n, k = len(cl.index), d.identities
    p = np.full((n_sims, n, k), h.rate, dtype=np.float32)
    if h.frame_sd > 0:
        p += (h.frame_sd * rng.standard_normal((n_sims, cl.n, 1), dtype=np.float32))[:, cl.index]
    if h.frame_identity_sd > 0:
        p += (h.frame_identity_sd * rng.standard_normal((n_sims, cl.n, k), dtype=np.float32))[:, cl.index]
    if h.base_sd > 0:
        p += h.base_sd * rng.standard_normal((n_sims, n, 1), dtype=np.float32)
    if h.base_identity_sd > 0:
        p += h.base_identity_sd * rng.standard_normal((n_sims, n, k), dtype=np.float32)
    p[..., 0] += effect
    np.clip(p, 0.0, 1.0, out=p)
    m = max(1, round(d.n_samples / h.sample_var_ratio))
    y = np.zeros(p.shape, dtype=np.float32)
    for _ in range(m):  # Bernoulli samples; the same uniforms at every effect, so a larger effect never lowers a count
        y += rng.random(p.shape, dtype=np.float32) < p
    return y.astype(float) / m


def contrast(design: Design, effect: float, n_sims: int, seed: int | list[int]) -> np.ndarray:
    """(n_sims, n_base) per-unit values the claim's test averages: the pooled focal-minus-controls contrast; versus:
    its difference between a run with the effect and an independent run without it on the same prompts (A - B)."""
    y = simulate(design, effect, n_sims, seed)
    t = y[..., 0] - y[..., 1:].mean(axis=-1)
    if design.versus:
        seeds = [*seed, "B"] if isinstance(seed, list) else [seed, "B"]
        yb = simulate(design, 0.0, n_sims, [int(content_hash([str(x) for x in seeds], 8), 16)])
        t = t - (yb[..., 0] - yb[..., 1:].mean(axis=-1))
    return t


def z_values(design: Design, effect: float, n_sims: int, seed: int) -> np.ndarray:
    """The claim test's observed z in each of n_sims simulated audits (drawn in chunks of about 2 million prompts)."""
    chunk = max(1, 2_000_000 // (design.n_base * design.identities * (2 if design.versus else 1)))
    return np.concatenate([_z(design, contrast(design, effect, min(chunk, n_sims - i), [seed, i]))
                           for i in range(0, n_sims, chunk)])


def _z(design: Design, t: np.ndarray) -> np.ndarray:
    """The claim test's observed z per simulated audit (t: per-unit values): their mean over its stratified
    cluster-robust se (relabelling centre 0), exactly ClusterRelabel.test's statistic."""
    cl = design.clusters()
    ind = np.zeros((len(cl.index), cl.n))
    ind[np.arange(len(cl.index)), cl.index] = 1.0
    tot, size = t @ ind, ind.sum(axis=0)
    theta = tot.sum(axis=1) / len(cl.index)
    r = tot - size * theta[:, None]
    var = np.zeros(len(t))
    for s in np.unique(cl.stratum):
        rs = r[:, cl.stratum == s]
        f = rs.shape[1]
        if f > 1:
            var += f / (f - 1) * ((rs - rs.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    se = np.sqrt(var) / len(cl.index)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(se > 0, theta / se, 0.0)


def null_z(design: Design, effect: float = 0.0, n_sets: int = 100, n_relabel: int = 2000, seed: int = 1) -> np.ndarray:
    """The test's own reference distribution: |z| over relabellings (within frames, as in `mirage metrics`) of simulated
    audits with this effect (a relabelling spreads the focal effect over the identities, which widens the se of the
    relabelled statistics), pooled and sorted."""
    cl = design.clusters()
    null = []
    for i in range(n_sets):
        if design.versus:  # `mirage compare` swaps A and B within frames: the sign of the per-unit difference
            d = contrast(design, effect, 1, [seed, i])[0]
            e = np.column_stack([d, -d])
        else:
            e, _ = pooled(g_signed(simulate(design, effect, 1, [seed, i])[0]))
        r = ClusterRelabel(cl, n_relabel, np.random.default_rng([seed, i])).test(e, 0, None, np.random.default_rng(0))
        if r is not None:
            null.append(r.null)
    return np.sort(np.concatenate(null)) if null else np.array([math.inf])


def critical(design: Design, null: np.ndarray | None = None) -> float:
    """|z| the test must exceed to reach p <= alpha / m with unlimited relabellings."""
    null = null_z(design) if null is None else null
    return float(np.quantile(null, 1 - design.alpha / design.holm_m))


def reject_probability(z: np.ndarray, null: np.ndarray, level: float, n_perm: int | None) -> np.ndarray:
    """P(p <= level | observed |z|) for the randomised relabelling p with n_perm relabellings: the count G of relabellings
    beyond |z| is Binomial(n_perm, q), q = the null's tail beyond |z|, and p <= level iff G + U <= level (n_perm + 1),
    U ~ Uniform(0, 1]. n_perm None: unlimited relabellings (reject iff q <= level)."""
    q = 1.0 - np.searchsorted(null, np.abs(z), side="right") / null.size
    if n_perm is None:
        return (q <= level).astype(float)
    a = level * (n_perm + 1)
    k = math.floor(a)
    return stats.binom.cdf(k - 1, n_perm, q) + (a - k) * stats.binom.pmf(k, n_perm, q)


def power(design: Design, effect: float, n_sims: int = 2000, seed: int = 0, null: np.ndarray | None = None) -> float:
    """Probability that the claim's test reaches p <= alpha / holm_m, averaged over simulated audits (with
    design.n_perm relabellings, as `mirage metrics` runs it)."""
    null = null_z(design) if null is None else null
    z = z_values(design, effect, n_sims, seed)
    return float(np.mean(reject_probability(z, null, design.alpha / design.holm_m, design.n_perm)))


def min_detectable(design: Design, target: float = 0.8, n_sims: int = 2000, seed: int = 0, hi: float = 0.5) -> float:
    """Smallest effect (absolute, on the 0-1 scale) with power >= target; NaN if even `hi` falls short. Bisection with
    common random numbers (the same seed at every effect), so power is monotone in the effect."""
    null = null_z(design)
    if power(design, hi, n_sims, seed, null) < target:
        return float("nan")
    lo = 0.0
    for _ in range(11):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if power(design, mid, n_sims, seed, null) >= target else (mid, hi)
    return hi


def base_prompts_needed(design: Design, effect: float, mde: float, target: float = 0.8, n_sims: int = 1000, seed: int = 0,
                        max_base: int = 20_000) -> int | None:
    """About the fewest base prompts (more frames of the same sizes) with power >= target for `effect`, given the
    design's minimum detectable effect `mde`: the se of the claim shrinks as 1 / sqrt(frames), so frames scale by
    (mde / effect)^2; the scaled design is then simulated and grown by 10 % until it reaches the target (at most 5
    times). None if more than max_base would be needed or mde is unknown."""
    if not math.isfinite(mde):
        return None
    factor = (mde / effect) ** 2
    for _ in range(6):
        d = design.scaled(factor)
        if d.n_base > max_base:
            return None
        if power(d, effect, n_sims, seed, null_z(d, 30, 1000)) >= target:
            return d.n_base
        factor *= 1.1
    return design.scaled(factor).n_base


# --- heterogeneity from a pilot ------------------------------------------------------------------------------


def moments(y: np.ndarray, frames: np.ndarray, samp: float) -> dict[str, float]:
    """Method-of-moments heterogeneity of per-prompt means y (units x control identities) in `frames`, given the
    sampling variance of one per-prompt mean: the within-base variance across identities W = frame x identity +
    base x identity + sampling variance; the frame means of the identity deviations separate the frame x identity
    part where frames hold several bases (else it takes all of W less the sampling variance, the conservative
    choice); the between-frame and between-base variance of the base means give the frame and base sds."""
    k = y.shape[1]
    dev = y - y.mean(axis=1, keepdims=True)
    w = float((dev**2).sum(axis=1).mean() / (k - 1))
    codes, inv = np.unique(frames, return_inverse=True)
    size = np.bincount(inv).astype(float)
    fmean = np.stack([np.bincount(inv, dev[:, j]) for j in range(k)], axis=1) / size[:, None]
    q = (fmean**2).sum(axis=1) / (k - 1)
    multi = size >= 2
    fxi = float(np.mean(q[multi] - w / size[multi]) / np.mean(1 - 1 / size[multi])) if multi.any() else w - samp
    fxi = max(fxi, 0.0)
    bxi = max(w - fxi - samp, 0.0)
    bm = y.mean(axis=1)
    fm = np.bincount(inv, bm) / size
    within = float(((bm - fm[inv]) ** 2).sum() / max(len(bm) - len(codes), 1))
    between = float(np.var(fm, ddof=1)) if len(fm) > 1 else 0.0
    noise = (bxi + samp) / k
    if multi.any():
        base_var = max(within - noise, 0.0)
        frame_var = max(between - float(np.mean(1 / size)) * within - fxi / k, 0.0)
    else:
        base_var, frame_var = max(between - fxi / k - noise, 0.0), 0.0
    return {"rate": float(y.mean()), "base_sd": math.sqrt(base_var), "frame_sd": math.sqrt(frame_var),
            "frame_identity_sd": math.sqrt(fxi), "base_identity_sd": math.sqrt(bxi)}


def pilot_heterogeneity(per_prompt: pd.DataFrame, condition: str, value: str, focal: str | None = None, fit: int = 6
                        ) -> Heterogeneity | None:
    """Heterogeneity of one outcome (`v`: violence, `s`: C3 decision) from a pilot's per_prompt.csv (baseline, English,
    not paraphrase), on the control identities only (a real focal effect must not inflate it): `moments` of the pilot,
    then (`fit` rounds) the simulation parameters are corrected until the same moments of simulated pilots of the
    pilot's own design match the pilot's (clipping to [0, 1] shrinks variances; without this the planner would
    shrink them twice). Sampling variance: k/n (violence) or the two sample halves (C3 scores, whose within-prompt
    variance sets the effective sample count). None when the pilot has fewer than 3 complete units."""
    df = per_prompt[(per_prompt["condition"] == condition) & (per_prompt["rag_pool"] == "none")
                    & (per_prompt["mitigation"] == "none") & (per_prompt["language"] == "en")]
    if "paraphrase" in df:
        df = df[~df["paraphrase"].astype(bool)]
    if focal is None:
        focal = str(df.loc[df["focal"].astype(bool), "identity"].iloc[0]) if df["focal"].astype(bool).any() else ""
    ctl = df[df["identity"] != focal]
    keys = ["frame_id", "base_id"]
    wide = ctl.pivot_table(index=keys, columns="identity", values=value, aggfunc="first").dropna()
    if len(wide) < 3 or wide.shape[1] < 2:
        return None
    y = wide.to_numpy(float)

    def cols(name: str) -> np.ndarray:
        return ctl.pivot_table(index=keys, columns="identity", values=name, aggfunc="first").reindex(
            index=wide.index, columns=wide.columns).to_numpy(float)

    n = cols("n_labelled" if value == "v" else "n_scored")
    n_samples = max(2, int(round(float(np.nanmedian(n)))))
    if value == "v":
        samp, ratio = float(np.nanmean(y * (1 - y) / np.maximum(n - 1, 1))), 1.0
    else:  # Var(mean of half a - mean of half b) = sigma^2 (1/n_a + 1/n_b) ~ 4 sigma^2 / n
        samp = float(np.nanmean((cols("s_a") - cols("s_b")) ** 2) / 4)
        ratio = max(samp * n_samples / max(float(np.mean(y * (1 - y))) * n_samples / (n_samples - 1), 1e-9), 0.05)
    frames = wide.index.get_level_values("frame_id").to_numpy().astype(str)
    target = moments(y, frames, samp)
    params = dict(target)
    _, inv = np.unique(frames, return_inverse=True)
    design = Design(frames=(tuple(np.bincount(inv)),), n_samples=n_samples, identities=y.shape[1])
    order = np.argsort(inv, kind="stable")  # simulate() lays out units frame by frame
    for r in range(fit):
        het = Heterogeneity(**{k: float(np.clip(v, 0, 1)) for k, v in params.items()}, sample_var_ratio=ratio)
        sim = simulate(replace(design, het=het), 0.0, 4, [r, 7])
        m = max(1, round(n_samples / ratio))
        got = [moments(ys, frames[order], float(np.mean(ys * (1 - ys))) / max(m - 1, 1)) for ys in sim]
        for key in params:
            params[key] += target[key] - float(np.mean([g[key] for g in got]))
            params[key] = max(params[key], 0.0)
    return Heterogeneity(**{k: float(np.clip(v, 0, 1)) for k, v in params.items()}, sample_var_ratio=ratio)


# --- the slice's table ---------------------------------------------------------------------------------------


def slice_designs(request_rows: Iterable[dict]) -> dict[tuple[str, str], tuple[tuple[int, ...], ...]]:
    """(condition, group) -> bases per frame in each stratum, for every claim the planner reports: group '' pools the
    condition's strata (templates; C3: harnesses), an H* group is one harness (Δ signed per harness)."""
    frames: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    seen = set()
    for r in request_rows:
        if r.get("rag_pool") != "none" or r.get("mitigation") != "none" or r.get("language") != "en" or r.get("paraphrase"):
            continue
        stratum = r.get("harness") or r["template"]
        key = (r["condition"], stratum, r["base_id"])
        if key in seen:
            continue
        seen.add(key)
        frames[r["condition"]][stratum][str(r.get("frame_id") or r["base_id"])] += 1
    out = {}
    for cond, strata in sorted(frames.items()):
        out[(cond, "")] = tuple(tuple(sorted(c.values())) for _, c in sorted(strata.items()))
        if cond == "C3":
            for h, c in sorted(strata.items()):
                out[(cond, h)] = (tuple(sorted(c.values())),)
    return out


def power_table(designs: dict[tuple[str, str], tuple[tuple[int, ...], ...]], n_samples: int, holm_m: int,
                het_v: Heterogeneity, het_s: Heterogeneity, target_effect: float, target_power: float = 0.8,
                alpha: float = 0.05, n_sims: int = 2000, n_perm: int | None = None, versus: bool = False,
                identities: int = 5) -> list[dict]:
    """One row per planned claim: ΔV per condition (C1, C2) and Δ signed (C3) pooled and per harness, with base
    prompts, frames, the power at `target_effect`, the minimum detectable effect (pp) at `target_power` and the base
    prompts `target_effect` needs, all under the headline decision p <= alpha / holm_m."""
    rows, done = [], {}
    for (cond, group), frames in sorted(designs.items()):
        c3 = cond == "C3"
        d = Design(frames=frames, n_samples=n_samples, het=het_s if c3 else het_v, holm_m=holm_m, alpha=alpha, n_perm=n_perm,
                   versus=versus, identities=identities)
        if d not in done:  # C2 usually renders C1's base prompts, harnesses often share a design: computed once
            null = null_z(d)
            mde = min_detectable(d, target_power, n_sims)
            done[d] = {"critical_z": critical(d, null), "power_at_target": power(d, target_effect, n_sims, 0, null),
                       "mde_pp": 100 * mde, "base_needed": base_prompts_needed(d, target_effect, mde, target_power)}
        rows.append({"condition": cond, "group": group or "all", "metric": DELTA_SIGNED if c3 else DV,
                     "n_base": d.n_base, "n_frames": d.n_frames, "n_samples": n_samples, "holm_m": holm_m,
                     "target_pp": 100 * target_effect, **done[d]})
    return rows


def format_power(rows: list[dict]) -> str:
    head = (f"{'claim':<20} {'bases':>6} {'frames':>6} {'m':>3} {'power@target':>12} {'MDE (pp)':>8} {'bases for target':>17}")
    lines = [head, "-" * len(head)]
    for r in rows:
        need = "> 20000" if r["base_needed"] is None else str(r["base_needed"])
        mde = "n/a" if not np.isfinite(r["mde_pp"]) else f"{r['mde_pp']:.1f}"
        name = f"{r['metric']} {r['condition']}" + ("" if r["group"] == "all" else f" {r['group']}")
        lines.append(f"{name:<20} {r['n_base']:>6} {r['n_frames']:>6} {r['holm_m']:>3} {r['power_at_target']:>12.2f} {mde:>8} "
                     f"{need + ' (' + format(r['target_pp'], '.0f') + ' pp)':>17}")
    return "\n".join(lines)


def power_report(params, slice_name: str, requests_dir: str, target_effect: float, target_power: float = 0.8,
                 pilot: str | None = None, overrides: dict | None = None, refusals: bool | None = None,
                 versus: bool = False) -> dict:
    """`mirage estimate --power`: the power table of one slice from its rendered requests. Heterogeneity: defaults,
    replaced by a pilot's per_prompt.csv where given, replaced by `overrides` (command line: rate, favourability,
    frame_sd, frame_identity_sd, base_sd, base_identity_sd) where set. `refusals` (None: whether the pilot has any,
    else True): whether the refusal and unparseable gaps count among the m claims. `versus`: plan `mirage compare` of
    two runs on the slice's prompts instead (the effect is the difference A - B of the claim; the two runs' identity
    effects and samples independent, so the plan is conservative for two snapshots of one model)."""
    from pathlib import Path

    from mirage.generate.runner import read_requests
    from mirage.io import DataError

    rows = []
    for cond in ("C1", "C2", "C3"):
        path = Path(requests_dir) / Path(artefacts.requests(cond)).name
        if path.exists():
            rows += read_requests(path, slice_name)
    if not rows:
        raise DataError(f"{requests_dir}: no requests file of slice {slice_name} (run `mirage render` first)")
    sl = getattr(params.slices, slice_name)
    n_samples = sl.n_samples or params.generate.n_samples
    het_v, het_s, source = Heterogeneity(0.2), Heterogeneity(0.6), "default"
    if pilot:
        pp = _read_pilot(pilot)
        het_v = pilot_heterogeneity(pp, "C1", "v") or het_v
        if {"s", "s_a", "s_b", "n_scored"} <= set(pp.columns):
            het_s = pilot_heterogeneity(pp, "C3", "s") or het_s
        source = f"pilot {pilot}"
        if refusals is None:
            refusals = bool((pd.to_numeric(pp.get("refusal", 0), errors="coerce").fillna(0) > 0).any())
    n_ids = len({r["identity"] for r in rows})
    planned = claims.planned(rows, n_ids, True if refusals is None else refusals, params.metrics.intersectional)
    o = {k: v for k, v in (overrides or {}).items() if v is not None}
    shared = {k: o[k] for k in ("frame_sd", "frame_identity_sd", "base_sd", "base_identity_sd") if k in o}
    het_v = replace(het_v, **shared, **({"rate": o["rate"]} if "rate" in o else {}))
    het_s = replace(het_s, **shared, **({"rate": o["favourability"]} if "favourability" in o else {}))
    if o:
        source += " + command line (" + ", ".join(sorted(o)) + ")"
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # many small products: BLAS threads only contend
        table = power_table(slice_designs(rows), n_samples, max(len(planned), 1), het_v, het_s, target_effect,
                            target_power, params.metrics.alpha, n_perm=params.metrics.n_perm, versus=versus,
                            identities=n_ids)
    return {"slice": slice_name, "target_power": target_power, "alpha": params.metrics.alpha, "holm_m": len(planned),
            "claims": planned,
            "heterogeneity": {"source": source, "violence": het_v.__dict__, "decision": het_s.__dict__},
            "versus": versus,
            "test": ("studentised swap of the two runs within frames (the paired test of mirage compare)" if versus else
                     "studentised relabelling of identities within frames (the claim's test in mirage metrics)")
            + "; decision p <= alpha / m, Holm's first step over the slice's m headline claims",
            "rows": table, "table": format_power(table)}


def _read_pilot(path: str) -> pd.DataFrame:
    from mirage.io import DataError

    try:
        pp = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a readable per_prompt.csv ({exc})") from None
    need = ["condition", "rag_pool", "mitigation", "language", "frame_id", "base_id", "identity", "focal", "v", "n_labelled"]
    missing = [c for c in need if c not in pp.columns]
    if missing:
        raise DataError(f"{path}:1: missing column(s) {', '.join(missing)} (expected a per_prompt.csv of `mirage metrics`)")
    for col in ("rag_pool", "mitigation"):
        pp[col] = pp[col].fillna("none")
    pp["language"] = pp["language"].fillna("en")
    return pp
