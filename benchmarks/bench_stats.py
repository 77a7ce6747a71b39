"""Calibration, coverage, error budget, power planning and speed of the metrics statistics (issues 14 and 27).

    python -m benchmarks.bench_stats [--reps 400] [--only coverage,interaction,...] [--n-boot 2000]

Every check runs the code `mirage metrics` runs (MetricsBuilder, compute_metrics) on simulated audits whose truth
is known, and prints its result beside its target. Simulated prompts sit in sentence frames: per-prompt rate =
clip(rate + frame effect + base effect + frame x identity effect (+ planted focal effect), 0, 1), 5 samples each.

1. type1        type-I error of every test on identity-blind audits, n = 30 and 200 singleton frames   [3.5, 6.5] %
2. coverage     95 % interval coverage, null and planted, by frames per template (frame sd 0.15)       [93, 97] %
3. interaction  type-I error with a frame x identity effect (sd 0.05), frame-level vs within-base tests [3.5, 6.5] %
4. refusal      differential refusal: refusal gap detected, refusal-as-missing bound unbiased, bounds bracket
5. fwer         family-wise error over the headline claims of an identity-blind model (all conditions)  <= 5 %
6. planner      `mirage estimate --power` prediction vs simulated power of the headline decision         |diff| <= 3 pp
7. timing       seconds per model for all statistics of a synthetic lite label set (B = 10,000)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from mirage.config.metrics import MetricsParams
from mirage.metrics.compute import Contrast, MetricsBuilder, compute_metrics, g_abs, g_focal, g_signed, g_split, pooled
from mirage.metrics.power import Design, Heterogeneity, null_z, pilot_heterogeneity, power

ALPHA = 0.05
N_PERM = 1999  # relabellings per test in the planner check (the planner is told the same)
K = 5  # identities: focal + 4 controls
IDS = ("muslim", "christian", "jewish", "hindu", "secular")


def se(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n))


def verdict(x: float, lo: float, hi: float) -> str:
    return "ok" if lo <= x <= hi else "MISS"


@dataclass(frozen=True)
class Scenario:
    """Frames x bases per frame in each of `strata` strata; per-prompt rates with frame, base, frame x identity effects."""

    frames: int = 25
    per_frame: int = 8
    strata: int = 5
    rate: float = 0.2
    base_sd: float = 0.1
    frame_sd: float = 0.15
    fxi_sd: float = 0.0
    effect: float = 0.0
    samples: int = 5

    @property
    def n(self) -> int:
        return self.frames * self.per_frame * self.strata

    def design(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        strata = np.repeat([f"S{s}" for s in range(self.strata)], self.frames * self.per_frame)
        frames = np.repeat(np.arange(self.frames * self.strata), self.per_frame).astype(str)
        return strata, frames, np.arange(self.n).astype(str)

    def rates(self, rng: np.random.Generator, n_sets: int = 1) -> np.ndarray:
        """(n_sets, n, K) per-prompt probabilities."""
        f = self.frames * self.strata
        frame = np.repeat(rng.normal(0, self.frame_sd, (n_sets, f, 1)), self.per_frame, axis=1)
        fxi = np.repeat(rng.normal(0, self.fxi_sd, (n_sets, f, K)), self.per_frame, axis=1)
        p = self.rate + frame + rng.normal(0, self.base_sd, (n_sets, self.n, 1)) + fxi
        p[..., 0] += self.effect
        return np.clip(p, 0, 1)

    def draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(per-prompt means (n, K), the two halves' means (2, n, K)) of one simulated audit."""
        x = rng.random((self.n, K, self.samples)) < self.rates(rng)[0][..., None]
        return x.mean(axis=2), np.stack([x[..., ::2].mean(axis=2), x[..., 1::2].mean(axis=2)])

    def truth(self) -> dict[str, float]:
        """Population values (frames drawn anew): V focal, dV and Delta signed (x100) by Monte Carlo."""
        p = self.rates(np.random.default_rng(12345), 400)
        d = p[..., 0] - p[..., 1:].mean(axis=-1)
        return {"V_focal": float(p[..., 0].mean()), "dV": float(d.mean()), "Delta_signed": 100 * float(d.mean())}


def builder(sc: Scenario, n_boot: int, n_perm: int, resampling: str = "clustered") -> tuple[MetricsBuilder, tuple]:
    strata, frames, bases = sc.design()
    return MetricsBuilder(MetricsParams(n_boot=n_boot, n_perm=n_perm, resampling=resampling), dict(zip(bases, frames))), (strata, bases)


# --- 1. type-I error of every test ---------------------------------------------------------------------------


def one_audit(b: MetricsBuilder, rng: np.random.Generator, n: int, key: int) -> dict[str, float]:
    """p-values of each test `mirage metrics` reports on one identity-blind audit with n singleton-frame base prompts."""
    sc = Scenario(frames=n, per_frame=1, strata=1, frame_sd=0.0, base_sd=0.18)
    strata, frames, bases = sc.design()
    u = b.units(strata, bases, ("t1", key))
    one = [np.ones(n, bool)]
    v, _ = sc.draw(rng)
    s, (sa, sb) = replace(sc, rate=0.6).draw(rng)
    v_m, _ = sc.draw(rng)  # a mitigation that does nothing
    rec, neu = sc.draw(rng)[0], sc.draw(rng)[0]

    def c(g, scale=1.0, test="identity", swap=None):
        t, q = pooled(g)
        return b.contrast(Contrast(t, q, scale=scale), one, u, ("t1", key, len(swap) if swap is not None else 0), test, swap)[0]

    mit = c(g_focal(v - v_m), 1, "swap", (v - v_m)[:, 0])
    return {"dV (identity relabelling)": c(g_signed(v)).p,
            "Delta_signed": c(g_signed(s), 100).p,
            "Delta_abs excess_p": c(g_abs(s), 100).excess_p,
            "Delta_abs_unbiased": c(g_split(sa, sb), 100).p,
            "mitigation_effect_V p (condition swap)": mit.p,
            "mitigation_effect_V excess_p": mit.excess_p,
            "delta_t_did": c(g_signed(rec - neu)).p}


def type1(reps: int, seed: int) -> None:
    b = MetricsBuilder(MetricsParams(n_boot=200, n_perm=999, resampling="flat"))
    rng = np.random.default_rng(seed)
    print(f"\n1. Type-I error at alpha = {ALPHA}, identity-blind audits ({reps} per n; MC se {se(ALPHA, reps):.4f}; "
          "target [0.035, 0.065])")
    res = {n: pd.DataFrame([one_audit(b, rng, n, i) for i in range(reps)]) for n in (30, 200)}
    rate = pd.DataFrame({f"n={n}": (r <= ALPHA).mean() for n, r in res.items()})
    rate["ok"] = rate.apply(lambda r: "ok" if r.between(0.035, 0.065).all() else "MISS", axis=1)
    print(rate.to_string(float_format=lambda x: f"{x:.4f}"))


# --- 2. coverage ---------------------------------------------------------------------------------------------


def coverage_run(sc: Scenario, reps: int, seed: int, n_boot: int) -> dict[str, float]:
    b, (strata, bases) = builder(sc, n_boot, 999)
    truth, c3 = sc.truth(), replace(sc, rate=0.6, effect=-sc.effect)
    truth["Delta_signed"] = c3.truth()["Delta_signed"]
    rng = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {k: [] for k in ("V focal", "dV pooled", "dV one template", "dV excess (inverted test)",
                                                 "Delta signed pooled")}
    for r in range(reps):
        y, _ = sc.draw(rng)
        s, _ = c3.draw(rng)
        u = b.units(strata, bases, ("cov", r))
        levels = [np.ones(sc.n, bool), strata == "S0"]
        t, q = pooled(g_signed(y))
        dv = b.contrast(Contrast(t, q), levels, u, ("dv", r))
        v = b.means(y[:, :1], u, levels[0])[0]
        t, q = pooled(g_signed(s))
        ds = b.contrast(Contrast(t, q, scale=100.0), levels[:1], u, ("ds", r))[0]
        hits["V focal"].append(v.ci_low <= truth["V_focal"] <= v.ci_high)
        hits["dV pooled"].append(dv[0].ci_low <= truth["dV"] <= dv[0].ci_high)
        hits["dV one template"].append(dv[1].ci_low <= truth["dV"] <= dv[1].ci_high)
        hits["dV excess (inverted test)"].append(dv[0].excess_ci_low <= truth["dV"] <= dv[0].excess_ci_high)
        hits["Delta signed pooled"].append(ds.ci_low <= truth["Delta_signed"] <= ds.ci_high)
    return {k: float(np.mean(v)) for k, v in hits.items()}


def coverage(reps: int, seed: int, n_boot: int) -> None:
    print(f"\n2. Coverage of 95 % intervals by frames per template (5 templates x F frames x 8 base prompts; frame sd 0.15, "
          f"base sd 0.1; {reps} audits per row, MC se {se(0.95, reps):.3f}; target [0.93, 0.97]); B = {n_boot}")
    rows = []
    for frames in (20, 35, 50):
        for i, effect in enumerate((0.0, 0.05)):
            sc = Scenario(frames=frames, effect=effect, rate=0.25)
            t = time.perf_counter()
            res = coverage_run(sc, reps, seed + frames + 1000 * i, n_boot)
            rows.append({"frames": frames, "effect": effect, **res, "s": time.perf_counter() - t})
    df = pd.DataFrame(rows)
    cols = [c for c in df.columns if c not in ("frames", "effect", "s")]
    df["ok"] = df[cols].apply(lambda r: "ok" if r.between(0.93, 0.97).all() else "MISS", axis=1)
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))


# --- 3. frame x identity interaction ------------------------------------------------------------------------


def interaction(reps: int, seed: int) -> None:
    sc = Scenario(frames=25, per_frame=8, strata=5, fxi_sd=0.05)
    print(f"\n3. Type-I error with a frame x identity effect (sd 0.05; 5 templates x 25 frames x 8 bases; {reps} audits; "
          f"MC se {se(ALPHA, reps):.4f}; target [0.035, 0.065] for the frame-level tests)")
    rows = []
    for resampling, what in (("clustered", "frame-level relabelling (mirage metrics)"),
                             ("flat", "within-base relabelling (resampling: flat; the previous test)")):
        b, (strata, bases) = builder(sc, 200, 999, resampling)
        rng = np.random.default_rng(seed)
        rej = []
        for r in range(reps):
            y, (ya, yb) = sc.draw(rng)
            s, _ = replace(sc, rate=0.6).draw(rng)
            y2, _ = sc.draw(rng)  # a second stratum (mitigation / pool) of the same prompts
            u = b.units(strata, bases, ("ix", r))
            one = [np.ones(sc.n, bool)]

            def c(g, scale=1.0):
                t, q = pooled(g)
                return b.contrast(Contrast(t, q, scale=scale), one, u, ("ix", r, scale))[0]

            rej.append({"dV": c(g_signed(y)).p, "Delta_signed": c(g_signed(s), 100).p, "Delta_abs excess": c(g_abs(y), 100).excess_p,
                        "Delta_abs_unbiased": c(g_split(ya, yb), 100).p, "DiD / change in dV": c(g_signed(y - y2)).p})
        rate = (pd.DataFrame(rej) <= ALPHA).mean()
        rows.append({"test": what, **rate.to_dict(),
                     "ok": ("ok" if rate.between(0.035, 0.065).all() else "MISS") if resampling == "clustered" else "(reference)"})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.4f}"))


# --- label sets through compute_metrics (refusal, FWER, timing) ---------------------------------------------


def label_set(model: str, rng: np.random.Generator, frames: int = 10, per_frame: int = 3, c3_frames: int = 8,
              refusal: dict[str, float] | None = None, fxi_sd: float = 0.05, full: bool = True, n_samples: int = 5) -> pd.DataFrame:
    """An identity-blind audit (every identity variant has the same distribution) with frames: C1, C2 (+ M1-M4, 4 Arabic
    dialects and 4 RAG pools (C1) on the first base of every third frame), C3 H1-H4 (+ M1-M4, structural). `refusal` {identity: share}:
    refused samples (non-violent; C3: no decision), independent of the outcome."""
    rows = []
    refusal = refusal or {}

    def add(cond, tmpl, harness, base, frame, pool, mit, lang, probs, score=False, req=None):
        x = rng.random((K, n_samples)) < probs[:, None]
        ref = rng.random((K, n_samples)) < np.array([refusal.get(i, 0.0) for i in IDS])[:, None]
        for j, ident in enumerate(IDS):
            for k in range(n_samples):
                r = bool(ref[j, k])
                rows.append({"model": model, "condition": cond, "template": tmpl, "harness": harness, "base_id": base,
                             "frame_id": frame, "prompt_id": f"{base}-{ident}-{lang}", "identity": ident,
                             "focal": ident == "muslim", "language": lang, "rag_pool": pool, "mitigation": mit,
                             "request_id": req or f"{cond}-{base}-{ident}-{lang}-{pool}-{mit}", "paraphrase": False,
                             "sample_index": k, "violent": 0 if (score or r) else int(x[j, k]),
                             "score": None if (r or not score) else float(x[j, k]), "violent_reasoning": int(x[j, k]) if cond == "C2" else None,
                             "parse_ok": not r, "refusal": r, "error": False})

    for t in ("T1", "T2", "T3", "T4", "T6") if full else ("T1", "T2"):
        for f in range(frames):
            u, g = rng.normal(0, 0.1), rng.normal(0, fxi_sd, K)
            for i in range(per_frame):
                base, frame = f"{t}b{f}-{i}", f"{t}f{f}"
                p = np.clip(0.2 + u + rng.normal(0, 0.1) + g, 0, 1)
                for cond in ("C1", "C2") if full else ("C1",):
                    for mit in ("none", "M1", "M2", "M3", "M4") if full else ("none",):
                        add(cond, t, None, base, frame, "none", mit, "en", p)
                    if full and i == 0 and f % 3 == 0:
                        for lang in ("ar-msa", "ar-egy", "ar-lev", "ar-mag"):
                            add(cond, t, None, base, frame, "none", "none", lang, p)
                if full and i == 0 and f % 3 == 0:
                    for pool in ("empty", "neutral", "historical", "recent"):
                        add("C1", t, None, base, frame, pool, "none", "en", p)
    for h in ("H1", "H2", "H3", "H4"):
        for f in range(c3_frames):
            u, g = rng.normal(0, 0.1), rng.normal(0, fxi_sd, K)
            for i in range(per_frame):
                base, frame = f"{h}b{f}-{i}", f"{h}c{f}"
                q = np.clip(0.6 + u + rng.normal(0, 0.1) + g, 0, 1)
                for mit in ("none", "M1", "M2", "M3", "M4") if full else ("none",):
                    add("C3", "T5", h, base, frame, "none", mit, "en", q, score=True)
                if full:
                    add("C3", "T5", h, base, frame, "none", "structural", "en", np.full(K, q.mean()), score=True,
                        req=f"C3-{base}-structural")
    df = pd.DataFrame(rows)
    for col in ("violent", "score", "violent_reasoning"):
        df[col] = pd.to_numeric(df[col]).astype(float)
    return df


def refusal(reps: int, seed: int, n_boot: int) -> None:
    share = {"muslim": 0.15, "christian": 0.03, "jewish": 0.03, "hindu": 0.03, "secular": 0.03}
    print(f"\n4. Differential refusal: the focal variant refused 15 % of the time, controls 3 %, refusals independent of the "
          f"outcome, no identity effect otherwise (C1 T1-T2 x 10 frames x 3 bases, C3 H1-H4 x 8 frames x 3; {reps} audits)")
    p = MetricsParams(n_boot=n_boot, n_perm=999)
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(reps):
        t, _ = compute_metrics(label_set("m", rng, refusal=share, full=False), p)
        base = (t.rag_pool == "none") & (t.mitigation == "none") & (t.placebo_kind == "identity")

        def row(metric, **kw):
            m = t[(t.metric == metric) & base & (t.identity == "control")]
            for k, v in kw.items():
                m = m[m[k] == v]
            return m.iloc[0]

        out = {}
        for name, metric, kw in (("ΔV C1 (refusal = non-violent, primary)", "dV", dict(condition="C1", template="")),
                                 ("ΔV C1 refusal = missing", "dV_refusal_missing", dict(condition="C1", template="")),
                                 ("ΔV C1 refusal = violent", "dV_refusal_violent", dict(condition="C1", template="")),
                                 ("refusal gap C1", "refusal_gap", dict(condition="C1", template="")),
                                 ("Δ signed C3 (refusal = missing, primary)", "Delta_signed", dict(harness="")),
                                 ("refusal gap C3", "refusal_gap", dict(condition="C3", harness=""))):
            x = row(metric, **kw)
            out[name] = (x.estimate * (1 if metric == "Delta_signed" else 100), x.excess_p)
        rows.append(out)
    res = []
    for name in rows[0]:
        est = np.array([r[name][0] for r in rows])
        rej = float(np.mean([r[name][1] <= ALPHA for r in rows]))
        truth = 12.0 if "refusal gap" in name else 0.0
        if "refusal gap" in name:
            target, ok = "detected >= 0.80", verdict(rej, 0.8, 1.0)
        elif "= missing" in name or "C3 (refusal = missing" in name:
            target, ok = "unbiased, rejection [0.035, 0.065]", verdict(rej, 0.035, 0.065) if abs(est.mean()) < 0.5 else "MISS"
        else:
            target, ok = "bound (biased by design)", "(bound)"
        res.append({"row": name, "truth (pp)": truth, "mean estimate (pp)": est.mean(), "rejection rate": rej, "target": target,
                    "ok": ok})
    print(pd.DataFrame(res).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print("   the primary ΔV counts a refusal as non-violent, so refusing the focal more pulls ΔV down; the refusal gap and "
          "the refusal-as-missing bound are headlined beside it")


def fwer(reps: int, seed: int, n_boot: int) -> None:
    print(f"\n5. Family-wise error over the headline claims of an identity-blind model (frame x identity sd 0.05, "
          f"refusals 3 % for every identity, all conditions, M1-M4 + structural, Arabic, RAG pools; {reps} audits; "
          f"MC se {se(ALPHA, reps):.4f}; target <= 0.05)")
    p = MetricsParams(n_boot=n_boot, n_perm=999)
    rng = np.random.default_rng(seed)
    any_holm, any_raw, m, per_claim = [], [], [], []
    t0 = time.perf_counter()
    for r in range(reps):
        t, _ = compute_metrics(label_set("m", rng, refusal=dict.fromkeys(IDS, 0.03)), p)
        fam = t[(t.family == "headline") & t.p_adj.notna()]
        pc = fam.excess_p.to_numpy()  # every claim, CAI too, is tested on its excess over the floor
        any_holm.append(bool((fam.p_adj <= ALPHA).any()))
        any_raw.append(bool((pc <= ALPHA).any()))
        m.append(len(fam))
        per_claim.append(float(np.mean(pc <= ALPHA)))
    rate = float(np.mean(any_holm))
    print(pd.DataFrame([{"claims tested (mean m)": np.mean(m), "FWER Holm (headline decision)": rate,
                         "FWER uncorrected": np.mean(any_raw), "per-claim rejection": np.mean(per_claim),
                         "target": "<= 0.05", "ok": "ok" if rate <= ALPHA + 2 * se(ALPHA, reps) else "MISS"}]).to_string(
        index=False, float_format=lambda x: f"{x:.4f}"))
    print(f"   ({time.perf_counter() - t0:.0f} s)")


# --- 6. planner ---------------------------------------------------------------------------------------------


def measured_power(sc: Scenario, m: int, reps: int, seed: int) -> float:
    """Share of audits (the bench's own generator) in which the claim's test in MetricsBuilder reaches p <= alpha / m."""
    b, (strata, bases) = builder(sc, 100, N_PERM)
    rng = np.random.default_rng(seed)
    hits = 0
    for r in range(reps):
        y, _ = sc.draw(rng)
        t, q = pooled(g_signed(y))
        hits += b.contrast(Contrast(t, q), [np.ones(sc.n, bool)], b.units(strata, bases, ("pw", r)), ("pw", r))[0].excess_p <= ALPHA / m
    return hits / reps


def pilot_of(sc: Scenario, seed: int) -> pd.DataFrame:
    """A pilot's per_prompt rows (C1 baseline, no effect) from the bench's generator."""
    y, _ = replace(sc, effect=0.0).draw(np.random.default_rng(seed))
    strata, frames, bases = sc.design()
    return pd.DataFrame([{"condition": "C1", "rag_pool": "none", "mitigation": "none", "language": "en", "paraphrase": False,
                          "frame_id": frames[i], "base_id": bases[i], "identity": IDS[j], "focal": j == 0, "v": y[i, j],
                          "n_labelled": sc.samples} for i in range(sc.n) for j in range(K)])


def planner(reps: int, seed: int, pilots: int = 8) -> None:
    print(f"\n6. Planner vs simulation: power of the headline decision (p <= alpha/m of the claim's frame-level test) "
          f"predicted by mirage.metrics.power vs measured through MetricsBuilder on the bench's own audits ({reps} per "
          f"design; MC se <= {se(0.5, reps):.3f}; target |diff| <= 0.03). Heterogeneity given as on the command line, or "
          f"estimated from a pilot of the same design (mean and sd of the prediction over {pilots} pilots: the pilot's own "
          "sampling error adds to the planner's)")
    cases = [("reviewer design, m = 30", Scenario(frames=25, per_frame=8, strata=5, fxi_sd=0.05, effect=0.03), 30),
             ("lite-like (20 frames x 2 bases), m = 34", Scenario(frames=20, per_frame=2, strata=5, frame_sd=0.1, fxi_sd=0.05,
                                                                 effect=0.06), 34),
             ("one harness (8 cases x 4), m = 1", Scenario(frames=8, per_frame=4, strata=1, rate=0.6, fxi_sd=0.03, effect=0.15), 1),
             ("few frames (3 x 6 frames x 10), m = 12", Scenario(frames=6, per_frame=10, strata=3, fxi_sd=0.05, effect=0.06), 12)]
    rows = []
    for name, sc, m in cases:
        def predict(het: Heterogeneity) -> float:
            d = Design(frames=((sc.per_frame,) * sc.frames,) * sc.strata, n_samples=sc.samples, het=het, holm_m=m, alpha=ALPHA,
                       n_perm=N_PERM)
            return power(d, sc.effect, 4000, seed, null_z(d))

        meas = measured_power(sc, m, reps, seed)
        given = predict(Heterogeneity(sc.rate, base_sd=sc.base_sd, frame_sd=sc.frame_sd, frame_identity_sd=sc.fxi_sd))
        piloted = np.array([predict(pilot_heterogeneity(pilot_of(sc, seed + 7 + i), "C1", "v")) for i in range(pilots)])
        rows.append({"design": name, "effect (pp)": 100 * sc.effect, "measured": meas, "predicted (given)": given,
                     "diff (pp)": 100 * (given - meas), "ok": verdict(abs(given - meas), 0, 0.03),
                     "predicted (pilot) mean": piloted.mean(), "sd": piloted.std(), "diff of mean (pp)": 100 * (piloted.mean() - meas)})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


# --- 7. timing ------------------------------------------------------------------------------------------------


def timing(n_models: int, n_boot: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = MetricsParams(n_boot=n_boot, n_perm=n_boot)
    print(f"\n7. All statistics of a synthetic lite label set per model (T1-T4, T6 x 25 frames x 1-2 bases = 30 bases; C1, C2 "
          f"with M1-M4, Arabic, RAG pools; C3 H1-H4 x 8 cases; B = {n_boot} bootstrap and relabellings)")
    total_wall = total_cpu = 0.0
    for m in range(n_models):
        labels = label_set(f"model{m}", rng, frames=25, per_frame=1, c3_frames=8, refusal=dict.fromkeys(IDS, 0.02))
        extra = label_set(f"model{m}", rng, frames=5, per_frame=1, c3_frames=0, full=True)
        extra = extra[extra.condition != "C3"].assign(base_id=lambda d: d.base_id + "x")  # 30 bases, 25 frames
        labels = pd.concat([labels, extra], ignore_index=True)
        w, c = time.perf_counter(), time.process_time()
        table, _ = compute_metrics(labels, params)
        w, c = time.perf_counter() - w, time.process_time() - c
        total_wall, total_cpu = total_wall + w, total_cpu + c
        print(f"  model{m}: {len(labels)} labels, {len(table)} metric rows, {w:.1f} s wall, {c:.1f} s CPU")
    print(f"  total: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU for {n_models} model(s) ({total_cpu / n_models:.1f} s CPU per model)")


SECTIONS = ("type1", "coverage", "interaction", "refusal", "fwer", "planner", "timing")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=400, help="simulated audits per check")
    ap.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates in the simulation checks")
    ap.add_argument("--models", type=int, default=1, help="models in the timing check")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections: {', '.join(SECTIONS)}")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    run = set(args.only.split(","))
    with threadpool_limits(1):
        for name in SECTIONS:
            if name not in run:
                continue
            t = time.perf_counter()
            if name == "type1":
                type1(args.reps, args.seed)
            elif name == "coverage":
                coverage(args.reps, args.seed, args.n_boot)
            elif name == "interaction":
                interaction(args.reps, args.seed)
            elif name == "refusal":
                refusal(args.reps, args.seed, max(200, args.n_boot // 4))
            elif name == "fwer":
                fwer(args.reps, args.seed, max(200, args.n_boot // 4))
            elif name == "planner":
                planner(args.reps, args.seed)
            else:
                timing(args.models, 10_000, args.seed)
            print(f"   [{name}: {time.perf_counter() - t:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
