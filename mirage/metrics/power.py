"""Power planning (`mirage estimate --power`): minimum detectable dV and Delta at a target power after Holm
correction, and the base prompts a target effect needs, by simulating label sets and running the same
statistics as `mirage metrics`.

Simulation model: each base prompt has a rate (violence) or favourability (C3 decision) shared by all its
identity variants, drawn from a Beta with the given mean and `concentration` (prompt heterogeneity); the
focal variant's rate is shifted by the effect; each variant gets `n_samples` Bernoulli samples. The test is
the one `mirage metrics` reports for dV / Delta_signed: the permutation of identity labels within base
prompt (compute.pooled(g_signed(.)) and its relabelling null). Here its null is summarised by its exact
mean and variance over assignments (normal approximation; the tests randomise ties, so their size is exact
and their power matches it within a few pp from n = 30), so
thousands of simulated audits take seconds. Holm: an effect is detected when p <= alpha / m, the first
Holm step, which is where a single real effect among m tested rows must clear (conservative otherwise).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import special

from mirage import artefacts
from mirage.metric_names import DELTA_SIGNED, DV
from mirage.metrics.compute import g_signed, pooled

IDENTITIES = 5  # focal + four controls (corpus.identities)


@dataclass(frozen=True)
class Design:
    """What one slice offers a test: base prompts, samples per prompt, base rate and Holm family size."""

    n_base: int
    n_samples: int = 5
    base_rate: float = 0.2
    holm_m: int = 1
    alpha: float = 0.05
    concentration: float = 4.0
    identities: int = IDENTITIES


def simulate(design: Design, effect: float, n_sims: int, rng: np.random.Generator) -> np.ndarray:
    """(n_sims, n_base, identities) per-prompt rates k/n; column 0 is the focal identity, shifted by `effect`."""
    d = design
    a, b = d.base_rate * d.concentration, (1 - d.base_rate) * d.concentration
    rate = rng.beta(a, b, (n_sims, d.n_base, 1)) * np.ones(d.identities)
    rate[..., 0] = np.clip(rate[..., 0] + effect, 0.0, 1.0)
    return rng.binomial(d.n_samples, rate) / d.n_samples


def identity_z(y: np.ndarray) -> np.ndarray:
    """z statistic of the pooled focal-vs-controls contrast under the identity-label permutation null, per
    simulated audit: (estimate - null mean) / null sd, from the exact per-unit moments over assignments."""
    sims, n, k = y.shape
    t, _ = pooled(g_signed(y.reshape(sims * n, k)))
    t = t.reshape(sims, n, k)
    theta, centre = t[..., 0].mean(axis=1), t.mean(axis=(1, 2))
    sd = np.sqrt(t.var(axis=2).sum(axis=1)) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sd > 0, (theta - centre) / sd, 0.0)


def power(design: Design, effect: float, n_sims: int = 2000, seed: int = 0) -> float:
    """Share of simulated audits in which the two-sided identity-permutation test rejects at alpha / holm_m."""
    z = identity_z(simulate(design, effect, n_sims, np.random.default_rng(seed)))
    p = special.erfc(np.abs(z) / np.sqrt(2))
    return float(np.mean(p <= design.alpha / design.holm_m))


def min_detectable(design: Design, target: float = 0.8, n_sims: int = 2000, seed: int = 0, hi: float = 0.5) -> float:
    """Smallest effect (absolute, on the 0-1 rate scale) with power >= target; NaN if even `hi` falls short.
    Bisection with common random numbers (the same seed at every effect), so power is monotone in the effect."""
    if power(design, hi, n_sims, seed) < target:
        return float("nan")
    lo = 0.0
    for _ in range(12):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if power(design, mid, n_sims, seed) >= target else (mid, hi)
    return hi


def base_prompts_needed(design: Design, effect: float, target: float = 0.8, n_sims: int = 1000, seed: int = 0,
                        max_base: int = 20_000) -> int | None:
    """Fewest base prompts with power >= target for `effect` (None if more than max_base)."""
    def ok(n: int) -> bool:
        return power(Design(**{**design.__dict__, "n_base": n}), effect, n_sims, seed) >= target

    lo, hi = 1, 8
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > max_base:
            return None
    while hi - lo > max(1, lo // 50):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def power_table(groups: dict[str, int], n_samples: int, n_models: int, base_rate: float, favourability: float,
                target_effect: float, target_power: float = 0.8, alpha: float = 0.05, n_sims: int = 2000) -> list[dict]:
    """One row per group of a slice (template for dV; harness for Delta) with its base prompts, the minimum
    detectable effect in percentage points and the base prompts `target_effect` needs. Holm families as in
    App. G.4: 4 mitigations x 3 conditions x models for dV, 4 mitigations x 4 harnesses x models for Delta."""
    rows = []
    for group, n in sorted(groups.items()):
        is_c3 = group.startswith("H")
        d = Design(n_base=n, n_samples=n_samples, base_rate=favourability if is_c3 else base_rate,
                   holm_m=(16 if is_c3 else 12) * max(n_models, 1), alpha=alpha)
        mde = min_detectable(d, target_power, n_sims)
        need = base_prompts_needed(d, target_effect, target_power, max(n_sims // 2, 500))
        rows.append({"group": group, "metric": DELTA_SIGNED if is_c3 else DV, "n_base": n, "n_samples": n_samples,
                     "base_rate": d.base_rate, "holm_m": d.holm_m, "mde_pp": 100 * mde,
                     "target_pp": 100 * target_effect, "base_needed": need})
    return rows


def slice_groups(request_rows: Iterable[dict]) -> dict[str, int]:
    """Base prompts per template (C1/C2) and per harness (C3) among a slice's baseline English requests."""
    seen = {(r.get("harness") or r["template"], r["base_id"]) for r in request_rows
            if r.get("rag_pool") == "none" and r.get("mitigation") == "none" and r.get("language") == "en"
            and not r.get("paraphrase")}
    return dict(Counter(g for g, _ in seen))


def format_power(rows: list[dict]) -> str:
    head = f"{'group':<6} {'metric':<13} {'bases':>5} {'samples':>7} {'rate':>5} {'Holm m':>6} {'MDE (pp)':>8} {'bases for target':>17}"
    lines = [head, "-" * len(head)]
    for r in rows:
        need = "> 20000" if r["base_needed"] is None else str(r["base_needed"])
        mde = "n/a" if not np.isfinite(r["mde_pp"]) else f"{r['mde_pp']:.1f}"
        lines.append(f"{r['group']:<6} {r['metric']:<13} {r['n_base']:>5} {r['n_samples']:>7} {r['base_rate']:>5.2f} "
                     f"{r['holm_m']:>6} {mde:>8} {need + ' (' + format(r['target_pp'], '.0f') + ' pp)':>17}")
    return "\n".join(lines)


def power_report(params, slice_name: str, n_models: int, requests_dir: str, base_rate: float, favourability: float,
                 target_effect: float, target_power: float = 0.8) -> dict:
    """`mirage estimate --power`: the power table of one slice from its rendered requests."""
    from pathlib import Path

    from mirage.generate.runner import read_requests
    from mirage.io import DataError

    rows = []
    for cond in ("C1", "C3"):
        path = Path(requests_dir) / Path(artefacts.requests(cond)).name
        if not path.exists():
            raise DataError(f"{path}: requests file not found (run `mirage render` first)")
        rows += read_requests(path, slice_name)
    sl = getattr(params.slices, slice_name)
    n_samples = sl.n_samples or params.generate.n_samples
    table = power_table(slice_groups(rows), n_samples, n_models, base_rate, favourability, target_effect, target_power,
                        params.metrics.alpha)
    return {"slice": slice_name, "target_power": target_power, "alpha": params.metrics.alpha, "n_models": n_models,
            "assumptions": {"base_rate": base_rate, "favourability": favourability, "concentration": Design.concentration,
                            "test": "identity-label permutation within base prompt (normal approximation)",
                            "holm": "first Holm step alpha / m; m = App. G.4 family size"},
            "rows": table, "table": format_power(table)}
