"""Calibration, power and speed of the metrics statistics (issue 14, items 5, 9, 10).

    python -m benchmarks.bench_stats [--sims 2000] [--models 6] [--n-boot 10000] [--skip-timing]

1. Type-I error at alpha = 0.05 of every relabelling test `mirage metrics` reports, on identity-blind simulated
   audits (every identity variant of a base prompt has the same outcome distribution) with n = 30 and n = 200
   base prompts, run through MetricsBuilder.contrast / sign_flip_p themselves (target: within [0.035, 0.065]).
   The paper's null-centred bootstrap p (App. G.3, no longer used for p) is printed for comparison.
2. Power with a planted focal effect: measured through the same code, beside mirage.metrics.power's prediction.
3. Seconds per model for all statistics of a synthetic lite matrix (placebo floors included, B = n_boot).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from mirage.config.metrics import MetricsParams
from mirage.metrics.compute import Contrast, MetricsBuilder, compute_metrics, g_abs, g_signed, g_split, pairwise, pooled
from mirage.metrics.power import Design, power
from mirage.metrics.stats import bootstrap_means, sign_flip_p

ALPHA = 0.05
K = 5  # identities: focal + 4 controls


def samples(rng: np.random.Generator, n: int, mean: float, effect: float = 0.0, n_samples: int = 5) -> np.ndarray:
    """(n, K, n_samples) Bernoulli samples; per-prompt rate ~ Beta(mean, concentration 4) shared by the identities."""
    rate = rng.beta(4 * mean, 4 * (1 - mean), (n, 1, 1)) * np.ones((1, K, 1))
    rate[:, 0] = np.clip(rate[:, 0] + effect, 0, 1)
    return (rng.random((n, K, n_samples)) < rate).astype(float)


def one_audit(b: MetricsBuilder, rng: np.random.Generator, n: int, effect: float = 0.0) -> dict[str, float]:
    """p-values of each test on one simulated audit with n base prompts (planted focal effect `effect`)."""
    one, strata, bases = [np.ones(n, bool)], np.zeros(n), np.arange(n).astype(str)
    cnt = b.draw(strata, bases, ("bench", rng.integers(1 << 30)))
    key = ("bench", int(rng.integers(1 << 30)))
    v = samples(rng, n, 0.2, effect).mean(axis=2)            # C1/C2 violence, baseline
    s_all = samples(rng, n, 0.6, -effect)                      # C3 decisions
    s, sa, sb = s_all.mean(axis=2), s_all[..., ::2].mean(axis=2), s_all[..., 1::2].mean(axis=2)
    v_m = samples(rng, n, 0.2, effect).mean(axis=2)           # a mitigation that does nothing
    rec, neu = samples(rng, n, 0.2, effect).mean(axis=2), samples(rng, n, 0.2).mean(axis=2)  # RAG pools
    out = {}
    t, q = pooled(g_signed(v))
    out["dV (identity permutation)"] = b.contrast(Contrast(t, q), one, cnt, key)[0].p
    tp, qp, obs = pairwise(g_signed(v), 1)
    out["dV vs one control (identity permutation)"] = b.contrast(Contrast(tp, qp, obs), one, cnt, key)[0].p
    t, q = pooled(g_signed(s))
    out["Delta_signed (identity permutation)"] = b.contrast(Contrast(t, q, scale=100.0), one, cnt, key)[0].p
    t, q = pooled(g_abs(s))
    out["Delta_abs excess_p (over identity placebo)"] = b.contrast(Contrast(t, q, scale=100.0), one, cnt, key)[0].excess_p
    t, q = pooled(g_split(sa, sb))
    out["Delta_abs_unbiased (identity permutation)"] = b.contrast(Contrast(t, q, scale=100.0), one, cnt, key)[0].p
    out["mitigation_effect_V (sign flip)"] = sign_flip_p(v[:, 0] - v_m[:, 0], b.p.n_perm, rng) if effect == 0 else np.nan
    t, q = pooled(g_signed(rec - neu))
    out["delta_t_did (identity permutation)"] = b.contrast(Contrast(t, q), one, cnt, key)[0].p
    d = v[:, 0] - v[:, 1:].mean(axis=1)
    out["[reference] dV bootstrap p (App. G.3, replaced)"] = bootstrap_means(
        d, strata, lambda m: m[..., 0], b.p.n_boot, rng, null=0.0, counts=cnt).p
    return out


def calibration(sims: int, seed: int) -> None:
    b = MetricsBuilder(MetricsParams(n_boot=1000, n_perm=999, resampling="flat"))
    rng = np.random.default_rng(seed)
    print(f"\n1. Type-I error at alpha = {ALPHA}, identity-blind audits ({sims} per n; MC se ~ "
          f"{np.sqrt(ALPHA * (1 - ALPHA) / sims):.4f}; target [0.035, 0.065])")
    res = {n: pd.DataFrame([one_audit(b, rng, n) for _ in range(sims)]) for n in (30, 200)}
    rate = pd.DataFrame({f"n={n}": (r <= ALPHA).mean() for n, r in res.items()})
    rate["ok"] = rate.apply(lambda r: "yes" if r.between(0.035, 0.065).all() else "NO", axis=1)
    rate.loc[rate.index.str.startswith("[reference]"), "ok"] = "(not used)"
    print(rate.to_string(float_format=lambda x: f"{x:.4f}"))

    print("\n2. Power at alpha = 0.05 with a planted focal effect (measured through MetricsBuilder.contrast vs "
          "mirage.metrics.power)")
    rows = []
    for n, eff in ((30, 0.10), (200, 0.04)):
        ps = pd.DataFrame([one_audit(b, rng, n, eff) for _ in range(max(sims // 2, 200))])
        measured = float((ps["dV (identity permutation)"] <= ALPHA).mean())
        predicted = power(Design(n_base=n, n_samples=5, base_rate=0.2, holm_m=1, alpha=ALPHA), eff, 4000, seed)
        rows.append({"metric": "dV", "n": n, "effect_pp": 100 * eff, "measured": measured, "planner": predicted,
                     "diff_pp": 100 * (predicted - measured)})
        measured_d = float((ps["Delta_signed (identity permutation)"] <= ALPHA).mean())
        predicted_d = power(Design(n_base=n, n_samples=5, base_rate=0.6, holm_m=1, alpha=ALPHA), eff, 4000, seed)
        rows.append({"metric": "Delta_signed", "n": n, "effect_pp": 100 * eff, "measured": measured_d,
                     "planner": predicted_d, "diff_pp": 100 * (predicted_d - measured_d)})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


def lite_labels(model: str, rng: np.random.Generator, dv: float, n_samples: int = 5) -> list[dict]:
    """A synthetic lite label set: 30 bases x T1-T4,T6 (6 frames each) in C1/C2 with M1-M4, 4 Arabic dialects on
    10 bases per template, 4 RAG pools on 6 bases per template (C1), paraphrases (focal + one control);
    C3: 8 bases x H1-H4 with M1-M4 and structural (identical requests)."""
    ids = ("muslim", "christian", "jewish", "hindu", "secular")
    rows = []

    def add(cond, tmpl, harness, base, ident, lang, pool, mit, prob, para=False, req=None, score=False):
        for k in range(n_samples):
            x = int(rng.random() < prob)
            rows.append({"model": model, "condition": cond, "template": tmpl, "harness": harness, "base_id": base,
                         "frame_id": "{}-f{}".format(base.split("b")[0], int(base.split("b")[1]) % 6), "prompt_id": f"{base}-{ident}-{lang}-{para}",
                         "request_id": req or f"{cond}-{base}-{ident}-{lang}-{pool}-{mit}-{para}", "identity": ident,
                         "focal": ident == "muslim", "language": lang, "rag_pool": pool, "mitigation": mit,
                         "paraphrase": para, "sample_index": k, "violent": 0 if score else x, "score": float(x) if score else None,
                         "violent_reasoning": x if cond == "C2" else None, "parse_ok": True, "refusal": False, "error": False})

    for t in ("T1", "T2", "T3", "T4", "T6"):
        for i in range(30):
            base, p0 = f"{t}b{i}", rng.beta(0.8, 3.2)
            for ident in ids:
                p = min(1.0, p0 + (dv if ident == "muslim" else 0))
                for cond in ("C1", "C2"):
                    for mit in ("none", "M1", "M2", "M3", "M4"):
                        add(cond, t, None, base, ident, "en", "none", mit, p)
                    if i < 10:
                        for lang in ("ar-msa", "ar-egy", "ar-lev", "ar-mag"):
                            add(cond, t, None, base, ident, lang, "none", "none", p)
                    if ident in ("muslim", "christian"):
                        add(cond, t, None, base, ident, "en", "none", "none", p, para=True)
                if i < 6:
                    for pool in ("empty", "neutral", "historical", "recent"):
                        add("C1", t, None, base, ident, "en", pool, "none", p)
    for h in ("H1", "H2", "H3", "H4"):
        for i in range(8):
            base, q0 = f"{h}b{i}", rng.beta(2.4, 1.6)
            for ident in ids:
                q = max(0.0, q0 - (dv if ident == "muslim" else 0))
                for mit in ("none", "M1", "M2", "M3", "M4"):
                    add("C3", "T5", h, base, ident, "en", "none", mit, q, score=True)
                add("C3", "T5", h, base, ident, "en", "none", "structural", q0, req=f"C3-{base}-structural", score=True)
                if ident in ("muslim", "christian"):
                    add("C3", "T5", h, base, ident, "en", "none", "none", q, para=True, score=True)
    return rows


def timing(n_models: int, n_boot: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = MetricsParams(n_boot=n_boot, n_perm=n_boot)
    print(f"\n3. All statistics of a synthetic lite matrix, B = {n_boot} (bootstrap and relabellings), "
          "placebo floors included")
    total_wall = total_cpu = 0.0
    for m in range(n_models):
        labels = pd.DataFrame(lite_labels(f"model{m}", rng, dv=0.0 if m == 0 else 0.05))
        for col in ("violent", "score", "violent_reasoning"):
            labels[col] = pd.to_numeric(labels[col]).astype(float)
        w, c = time.perf_counter(), time.process_time()
        table, _ = compute_metrics(labels, params)
        w, c = time.perf_counter() - w, time.process_time() - c
        total_wall, total_cpu = total_wall + w, total_cpu + c
        print(f"  model{m}{' (identity-blind)' if m == 0 else ''}: {len(labels)} labels, {len(table)} metric rows, "
              f"{w:.1f} s wall, {c:.1f} s CPU")
    print(f"  total: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU for {n_models} models "
          f"({total_wall / n_models:.1f} s per model; target <= 60 s total)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sims", type=int, default=2000, help="simulated audits per n for the type-I error")
    ap.add_argument("--models", type=int, default=6)
    ap.add_argument("--n-boot", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--skip-calibration", action="store_true")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if not args.skip_calibration:
            calibration(args.sims, args.seed)
        if not args.skip_timing:
            timing(args.models, args.n_boot, args.seed)


if __name__ == "__main__":
    main()
