"""Judge-error correction (issue 23, item 4): bias of dV_corrected and coverage of its 95 % CI.

    python -m benchmarks.bench_correction [--sims 400] [--bases 40] [--n-boot 1000] [--seed 1]

Each simulated audit plants a true gap: per base prompt a rate r ~ Beta(mean 0.2, concentration 4) shared by the
five identity variants, the focal variant's rate r + dV (capped at 1), 5 samples per prompt, 5 templates x
`--bases` base prompts, condition C1. A judge with known sensitivity Se and specificity Sp, identical for every
identity (nondifferential, as identity invariance guarantees), turns the true labels into observed ones. The
judge's figures come from a fresh validation set each audit: tp ~ Bin(n_pos, Se), tn ~ Bin(n_neg, Sp). The
real estimator runs on the observed labels (`mirage.metrics.compute.compute_metrics` with the
`mirage.metrics.correction.Correction` hook, B = --n-boot) and the pooled dV_corrected row is compared with the
true population dV (the Beta mean's gap, capping included, by a 10^6-draw Monte Carlo). Printed per setting: the
true dV, the mean raw dV (attenuated by J = Se + Sp - 1), the bias of dV_corrected over all audits with an estimate
and over those with an interval, the coverage of its 95 % CI (target 93-97 %, among audits not flagged) with its
Monte-Carlo standard error, the mean CI width and how many audits were flagged unstable (estimated J < 0.5: no
interval). The first setting, a perfect judge, is the raw estimator's own coverage.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from mirage.config.metrics import MetricsParams
from mirage.metric_names import DV, DV_CORRECTED
from mirage.metrics.compute import compute_metrics
from mirage.metrics.correction import POOLED, Accuracy, Correction, Figures

IDENTITIES = ("muslim", "christian", "jewish", "hindu", "secular")
TEMPLATES = ("T1", "T2", "T3", "T4", "T6")
MEAN, CONC, N_SAMPLES, TRUE_DV = 0.2, 4.0, 5, 0.10
# (Se, Sp, validation positives, validation negatives); the first is a perfect judge: the raw estimator's own coverage
SETTINGS = ((1.0, 1.0, 100, 100), (0.90, 0.95, 100, 100), (0.60, 0.95, 100, 100), (0.60, 0.95, 30, 200),
            (0.80, 0.80, 50, 50), (0.50, 0.90, 100, 100))


def true_dv(rng: np.random.Generator) -> float:
    r = rng.beta(MEAN * CONC, (1 - MEAN) * CONC, 1_000_000)
    return float(np.mean(np.minimum(r + TRUE_DV, 1.0) - r))


def audit(rng: np.random.Generator, n_bases: int, se: float, sp: float) -> pd.DataFrame:
    """Observed label rows of one simulated audit (C1, baseline stratum)."""
    n = len(TEMPLATES) * n_bases
    r = rng.beta(MEAN * CONC, (1 - MEAN) * CONC, (n, 1, 1)) * np.ones((1, len(IDENTITIES), 1))
    r[:, 0] = np.minimum(r[:, 0] + TRUE_DV, 1.0)
    truth = rng.random((n, len(IDENTITIES), N_SAMPLES)) < r
    seen = np.where(truth, rng.random(truth.shape) < se, rng.random(truth.shape) >= sp).astype(float)
    b, i, k = np.indices(seen.shape).reshape(3, -1)
    base = np.array([f"{TEMPLATES[x // n_bases]}-{x % n_bases}" for x in range(n)])
    ident = np.array(IDENTITIES)
    return pd.DataFrame({
        "model": "sim", "condition": "C1", "rag_pool": "none", "mitigation": "none", "language": "en",
        "template": base[b].astype("U2"), "harness": None, "base_id": base[b], "prompt_id": base[b] + "-" + ident[i],
        "identity": ident[i], "focal": i == 0, "violent": seen.ravel(), "score": np.nan, "parse_ok": True,
        "refusal": False, "error": False, "sample_index": k, "judge": "sim-judge"})


def one(rng: np.random.Generator, p: MetricsParams, n_bases: int, se: float, sp: float, n_pos: int, n_neg: int
        ) -> tuple[float, pd.Series]:
    tp, tn = int(rng.binomial(n_pos, se)), int(rng.binomial(n_neg, sp))
    acc = Accuracy(tp, n_pos - tp, n_neg - tn, tn, "simulated validation", POOLED)
    fig = Figures(tables={"sim": [{POOLED: acc}]}, judges={"sim": "sim-judge"})
    corr = Correction(fig, p)
    table = corr.merge(compute_metrics(audit(rng, n_bases, se, sp), p, corr)[0])
    pick = (table["template"] == "") & (table["identity"] == "control")
    raw = table[pick & (table["metric"] == DV)].iloc[0]
    return float(raw["estimate"]), table[pick & (table["metric"] == DV_CORRECTED)].iloc[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sims", type=int, default=400)
    ap.add_argument("--bases", type=int, default=40, help="base prompts per template (5 templates)")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    truth = true_dv(rng)
    p = MetricsParams(n_boot=a.n_boot, n_perm=200, resampling="flat")
    print(f"true dV = {truth:.4f}; {a.sims} audits per setting, {len(TEMPLATES) * a.bases} base prompts x "
          f"{len(IDENTITIES)} identities x {N_SAMPLES} samples, B = {a.n_boot}")
    rows = []
    for se, sp, n_pos, n_neg in SETTINGS:
        start = time.perf_counter()
        raw, every, est, cover, width = [], [], [], [], []
        for _ in range(a.sims):
            d, row = one(rng, p, a.bases, se, sp, n_pos, n_neg)
            raw.append(d)
            every.append(row["estimate"])
            if row["flag"] != "unstable_correction":
                est.append(row["estimate"])
                cover.append(row["ci_low"] <= truth <= row["ci_high"])
                width.append(row["ci_high"] - row["ci_low"])
        c = float(np.mean(cover)) if cover else float("nan")
        rows.append({"Se": se, "Sp": sp, "J": round(se + sp - 1, 2), "n_pos": n_pos, "n_neg": n_neg,
                     "raw dV": np.mean(raw), "bias (all)": np.nanmean(every) - truth,
                     "bias (interval)": np.mean(est) - truth if est else np.nan, "coverage": c,
                     "MC se": np.sqrt(c * (1 - c) / max(1, len(cover))), "CI width": np.mean(width) if width else np.nan,
                     "unstable": len(raw) - len(est), "s/audit": (time.perf_counter() - start) / a.sims})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.4f}"))


if __name__ == "__main__":
    main()
