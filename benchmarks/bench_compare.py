"""Calibration of `mirage compare` (issue 33): false "different" verdicts, planted differences, equivalence error,
interval coverage, and CAI's identity-blind false alarms.

    python -m benchmarks.bench_compare [--reps 200] [--audits 60] [--only engine,audits,cai,planner]

engine   the paired engine (compare_claim) on per-unit claim values, strong shared frame effects:
         identical sides "different" <= 5 %; coverage of A - B 93-97 % (null and planted); a true difference of
         exactly the margin called "equivalent" <= 5 % (TOST at its nominal error); a zero difference mostly equivalent
audits   whole synthetic audits through compare_runs (every headline claim, Holm, verdicts), two runs on shared prompts:
         two identical identity-blind models, and a model whose chain of thought adds violence for every identity
         against one without: any "A/B more biased" verdict <= 5 %; a planted ΔV C1 difference recovered without bias
claims   each claim's paired test alone on two identical identity-blind models (C1, C2): uniform null p-values
cai      one identity-blind model whose CoT adds violence for every identity, through compute_metrics: CAI significant
         after Holm (the headline decision) <= 6.5 %, against the old test (H0 CAI = 1) for reference
planner  `mirage estimate --power --versus` minimum detectable difference vs the share of simulated comparisons whose
         paired test reaches alpha / m at that difference: |diff| <= 5 pp of the planned 80 %
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from mirage.compare.paired import A_MORE, B_MORE, EQUIVALENT, compare_claim, compare_runs, verdict
from mirage.config.compare import CompareParams
from mirage.config.metrics import MetricsParams
from mirage.metrics.stats import UnitValues

ALPHA = 0.05
IDS = ("muslim", "christian", "jewish", "hindu", "secular")


def se(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n))


def ok(x: float, lo: float, hi: float) -> str:
    return "ok" if lo <= x <= hi else "MISS"


def _first(m: np.ndarray) -> np.ndarray:
    return m[..., 0]


# --- engine -----------------------------------------------------------------------------------------------------


def engine(reps: int, seed: int) -> None:
    print(f"\n1. Paired engine on per-unit claim values: 2 strata x 12 frames x 5 bases, frame effects sd 1 shared by both "
          f"sides, unit noise sd 0.3; margin 0.3 ({reps} comparisons per row; MC se {se(ALPHA, reps):.3f})")
    rng, p = np.random.default_rng(seed), MetricsParams(n_boot=1000, n_perm=999)
    strata, frames = np.repeat(["T1", "T2"], 60), np.repeat(np.arange(24), 5).astype(str)
    ids = np.arange(120).astype(str)
    rows = []
    for truth in (0.0, 0.15, 0.3):
        diff, cover, equiv, reject = [], 0, 0, 0
        for r in range(reps):
            shared = np.repeat(rng.normal(0, 1.0, 24), 5)
            xa, xb = shared + truth + rng.normal(0, 0.3, 120), shared + rng.normal(0, 0.3, 120)
            res = compare_claim(("dV", truth, r), UnitValues(strata, frames, ids, xa[:, None], _first),
                                UnitValues(strata, frames, ids, xb[:, None], _first), p)
            diff.append(res["difference"])
            cover += res["ci_low"] <= truth <= res["ci_high"]
            reject += res["p"] <= ALPHA
            # the two one-sided tests alone (a verdict puts a Holm-significant difference first)
            equiv += verdict("dV", res["difference"], 1.0, (res["tost_low"], res["tost_high"]), 0.3, ALPHA) == EQUIVALENT
        rows.append({"true A - B": truth, "mean A - B": np.mean(diff), "coverage": cover / reps,
                     "coverage ok": ok(cover / reps, 0.93, 0.97), "'different'": reject / reps,
                     "target": "<= 0.05" if truth == 0 else "(power)",
                     "ok": ok(reject / reps, 0, ALPHA + 2 * se(ALPHA, reps)) if truth == 0 else "",
                     "'equivalent' (margin 0.3)": equiv / reps,
                     "equiv target": {0.0: "high", 0.15: "", 0.3: "<= 0.05"}[truth],
                     "equiv ok": ok(equiv / reps, 0, ALPHA + 2 * se(ALPHA, reps)) if truth == 0.3 else ""})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


# --- audits -------------------------------------------------------------------------------------------------------


def audit(model: str, prompts: np.random.Generator, rng: np.random.Generator, frames: int = 10, per_frame: int = 3,
          dv: float = 0.0, cot: float = 0.0, fxi_sd: float = 0.03, n_samples: int = 5) -> pd.DataFrame:
    """Label rows of one run: C1, C2 on T1-T3 and C3 on H1-H2, frames x bases per frame. Prompt difficulty (frame and
    base effects) comes from `prompts` (shared by the runs compared), identity x frame effects and samples from `rng`.
    `dv`: focal C1/C2 excess; `cot`: C2 adds this for every identity."""
    cols: dict[str, list] = {k: [] for k in ("condition", "template", "harness", "base_id", "frame_id", "identity",
                                             "violent", "score", "sample_index")}

    def add(cond, tmpl, harness, base, frame, probs, score):
        x = rng.random((len(IDS), n_samples)) < np.clip(probs, 0, 1)[:, None]
        for j, ident in enumerate(IDS):
            for k in range(n_samples):
                for c, v in zip(cols, (cond, tmpl, harness, base, frame, ident, 0 if score else int(x[j, k]),
                                       float(x[j, k]) if score else None, k)):
                    cols[c].append(v)

    for t in ("T1", "T2", "T3"):
        for f in range(frames):
            u, g = prompts.normal(0, 0.1), rng.normal(0, fxi_sd, len(IDS))
            for i in range(per_frame):
                p = 0.2 + u + prompts.normal(0, 0.1) + g
                p[0] += dv
                add("C1", t, None, f"{t}b{f}-{i}", f"{t}f{f}", p, False)
                add("C2", t, None, f"{t}b{f}-{i}", f"{t}f{f}", p + cot, False)
    for h in ("H1", "H2"):
        for f in range(frames):
            u, g = prompts.normal(0, 0.1), rng.normal(0, fxi_sd, len(IDS))
            for i in range(per_frame):
                add("C3", "T5", h, f"{h}b{f}-{i}", f"{h}c{f}", 0.6 + u + prompts.normal(0, 0.1) + g, True)
    df = pd.DataFrame(cols)
    n = len(df)
    df = df.assign(model=model, language="en", rag_pool="none", mitigation="none", paraphrase=False, parse_ok=True,
                   refusal=False, error=False, focal=df["identity"] == IDS[0], prompt_id=df["base_id"] + "-" + df["identity"],
                   request_id=df["condition"] + "-" + df["base_id"] + "-" + df["identity"])
    df["violent_reasoning"] = np.where(df["condition"] == "C2", df["violent"], np.nan)
    df["harness"] = df["harness"].astype(object)
    for c in ("violent", "score"):
        df[c] = pd.to_numeric(df[c]).astype(float)
    assert len(df) == n
    return df


def audits(reps: int, seed: int) -> None:
    planted = 0.08
    print(f"\n2. Whole comparisons through compare_runs (T1-T3 x 10 frames x 3 bases, C1 C2 C3 H1-H2, 5 samples, frame x "
          f"identity sd 0.03 per run; {reps} comparisons per scenario; MC se {se(ALPHA, reps):.3f}): any 'A/B more biased' "
          "verdict over all headline claims (Holm)")
    p, cp = MetricsParams(n_boot=1000, n_perm=999), CompareParams()
    rows = []
    for name, kw_a, truth in (("identical identity-blind models", {}, None), ("generic CoT effect (+0.15 in C2, every identity)",
                                                                             {"cot": 0.15}, None),
                              (f"planted ΔV +{100 * planted:.0f} pp (C1 and C2)", {"dv": planted}, planted)):
        any_diff, dv_est, dv_found, m, t0 = [], [], [], [], time.perf_counter()
        for r in range(reps):
            s = [seed, r, len(name)]
            a = audit("A", np.random.default_rng([*s, 0]), np.random.default_rng([*s, 1]), **kw_a)
            b = audit("B", np.random.default_rng([*s, 0]), np.random.default_rng([*s, 2]))
            table, _ = compare_runs(a, b, p, cp)
            tested = table[table["p_adj"].notna()]
            m.append(len(tested))
            c1 = table[(table["metric"] == "dV") & (table["condition"] == "C1")].iloc[0]
            dv_est.append(c1["difference"])
            dv_found.append(c1["verdict"] == A_MORE)
            others = tested if truth is None else tested[~tested["metric"].isin(["dV", "dV_reasoning"])
                                                         | ~tested["condition"].isin(["C1", "C2"])]
            any_diff.append(bool(others["verdict"].isin([A_MORE, B_MORE]).any()))
            if (r + 1) % 25 == 0:
                print(f"   {name}: {sum(any_diff)} 'different' of {r + 1}", flush=True)
        rate = float(np.mean(any_diff))
        rows.append({"scenario": name, "claims (m)": np.mean(m), "any other claim 'different'": rate,
                     "ok": ok(rate, 0, ALPHA + 2 * se(ALPHA, reps)), "ΔV C1 A − B (pp)": 100 * np.mean(dv_est),
                     "truth (pp)": 100 * (truth or 0.0), "ΔV C1 'A more biased'": np.mean(dv_found),
                     "s": f"{time.perf_counter() - t0:.0f}"})
        print(f"   {name}: {rate:.3f} 'different' ({sum(any_diff)} of {reps})", flush=True)
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


# --- claims -------------------------------------------------------------------------------------------------------


def claims_null(reps: int, seed: int) -> None:
    from scipy import stats

    from mirage.compare.paired import claim_units, shared_prompts

    print(f"\n2b. Each claim's paired test alone, two identical identity-blind models (C1 and C2 of the audits above, {reps} "
          "comparisons): the null p-values should be uniform; share at alpha and at Holm's first step alpha / 8")
    p, ps = MetricsParams(n_boot=200, n_perm=999), {}
    for r in range(reps):
        a = audit("A", np.random.default_rng([seed, r, 0]), np.random.default_rng([seed, r, 1]))
        b = audit("B", np.random.default_rng([seed, r, 0]), np.random.default_rng([seed, r, 2]))
        a, b, _ = shared_prompts(a[a["condition"] != "C3"], b[b["condition"] != "C3"])
        ca, cb = claim_units(a, p), claim_units(b, p)
        for key in sorted(set(ca) & set(cb)):
            ps.setdefault(f"{key[0]} {key[1]}", []).append(compare_claim(key, ca[key][1], cb[key][1], p)["p"])
    rows = []
    for claim, v in ps.items():
        v = np.asarray(v)
        v = v[np.isfinite(v)]
        if len(v):
            rows.append({"claim": claim, "n": len(v), "p <= 0.05": np.mean(v <= ALPHA), "p <= 0.05 / 8": np.mean(v <= ALPHA / 8),
                         "KS p (uniform)": stats.kstest(v, "uniform").pvalue})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


# --- cai ----------------------------------------------------------------------------------------------------------


def cai(reps: int, seed: int) -> None:
    from mirage.metrics.compute import compute_metrics

    print(f"\n3. CAI of an identity-blind model whose chain of thought adds violence for every identity (+0.15 in C2), "
          f"one audit = one model through compute_metrics, Holm over its headline claims ({reps} audits; target <= 0.065)")
    p = MetricsParams(n_boot=200, n_perm=999)
    claim, old, other = [], [], []
    for r in range(reps):
        labels = audit("m", np.random.default_rng([seed, r, 0]), np.random.default_rng([seed, r, 1]), cot=0.15)
        t, _ = compute_metrics(labels, p)
        fam = t[(t["family"] == "headline") & t["p_adj"].notna()]
        row = t[(t["metric"] == "CAI") & (t["template"] == "")].iloc[0]
        claim.append(bool(row["p_adj"] <= ALPHA))
        old.append(bool(row["p"] <= ALPHA))
        other.append(bool((fam[fam["metric"] != "CAI"]["p_adj"] <= ALPHA).any()))
    rate = float(np.mean(claim))
    print(pd.DataFrame([{"CAI significant (excess over the controls' floor, Holm)": rate, "ok": ok(rate, 0, 0.065),
                         "old test H0 CAI = 1 (reference)": np.mean(old), "any other claim significant": np.mean(other)}]
                       ).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


# --- planner ------------------------------------------------------------------------------------------------------


def planner(reps: int, seed: int) -> None:
    from mirage.metrics.power import Design, Heterogeneity, min_detectable, simulate

    print(f"\n4. Planner (`mirage estimate --power --versus`) vs the paired test of mirage compare at the planned minimum "
          f"detectable difference ({reps} comparisons per design; target: measured power within 5 pp of 80 %)")
    rows = []
    for name, frames, m, het in (("lite-like C1 (5 x 20 frames x 2)", ((2,) * 20,) * 5, 30, Heterogeneity(0.2, 0.1, 0.1, 0.05)),
                                 ("one harness (8 cases x 4)", ((4,) * 8,), 1, Heterogeneity(0.6, 0.1, 0.1, 0.03))):
        d = Design(frames=frames, n_samples=5, het=het, holm_m=m, n_perm=999, versus=True)
        mde = min_detectable(d, 0.8, 2000, seed)
        cl = d.clusters()
        strata, fr, ids = cl.stratum[cl.index].astype(str), cl.index.astype(str), np.arange(d.n_base).astype(str)
        p, hits = MetricsParams(n_boot=100, n_perm=999), 0
        for r in range(reps):
            ya, yb = simulate(d, mde, 1, [seed, r, 1])[0], simulate(d, 0.0, 1, [seed, r, 2])[0]
            ua, ub = (UnitValues(strata, fr, ids, (y[:, 0] - y[:, 1:].mean(axis=1))[:, None], _first) for y in (ya, yb))
            hits += compare_claim(("dV", r), ua, ub, p)["p"] <= ALPHA / m
        rows.append({"design": name, "m": m, "planned MDE (pp)": 100 * mde, "planned power": 0.8,
                     "measured power": hits / reps, "ok": ok(hits / reps, 0.75, 0.85)})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


SECTIONS = ("engine", "audits", "claims", "cai", "planner")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=400, help="comparisons per row in the engine and planner checks")
    ap.add_argument("--audits", type=int, default=100, help="whole audits per scenario in the audits and cai checks")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections: {', '.join(SECTIONS)}")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        for name in SECTIONS:
            if name not in args.only.split(","):
                continue
            t = time.perf_counter()
            {"engine": lambda: engine(args.reps, args.seed), "audits": lambda: audits(args.audits, args.seed),
             "claims": lambda: claims_null(args.audits, args.seed), "cai": lambda: cai(args.audits, args.seed),
             "planner": lambda: planner(args.reps, args.seed)}[name]()
            print(f"   [{name}: {time.perf_counter() - t:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
