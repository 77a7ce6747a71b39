"""Paired comparison of two runs' headline claims on the prompts both have (docs/compare.md).

Each side's claims are computed by `mirage metrics`' own code on the shared prompts, which hands over the per-unit
values (base prompts) every claimed number is made of (the excess over the identity-placebo floor). Per claim the two
sides' units are matched, and:

* the difference A - B gets a Rao-Wu frame-bootstrap interval with the same replicate weights for both sides, so what
  the shared prompts contribute to both cancels (t quantiles, BCa where skewed, as every metric interval);
* a paired relabelling test swaps which side is A and which is B within frames (studentised; for a ratio claim the
  difference is linearised at the two sides' pooled means, which no swap changes), exact when the two sides are
  exchangeable, e.g. two identical models;
* Holm over the claims decides "A more biased" / "B more biased" (the direction adverse to the focal identity);
  otherwise two one-sided tests at alpha (the 1 - 2 alpha interval inside +-margin) decide "equivalent", else
  "inconclusive".
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from mirage.config.compare import CompareParams
from mirage.config.metrics import MetricsParams
from mirage.hashing import content_hash
from mirage.metric_names import CAI, DELTA_SIGNED, METRICS, MIT_DELTA_SIGNED
from mirage.metrics import claims
from mirage.metrics.stats import ClusterBootstrap, ClusterRelabel, Clusters, UnitValues, holm, interval

CLAIM_KEY = ("metric", "condition", "template", "harness", "language", "rag_pool", "mitigation", "identity", "gender")
PROMPT_KEY = ("condition", "rag_pool", "mitigation", "language", "prompt_id")
#: A larger value is more adverse to the focal identity, except for these (negative = adverse).
NEGATIVE_ADVERSE = (DELTA_SIGNED, MIT_DELTA_SIGNED)
A_MORE, B_MORE, EQUIVALENT, INCONCLUSIVE, UNTESTED = ("A more biased", "B more biased", "equivalent", "inconclusive",
                                                       "untested")
PAIRED = "paired"  # the model name both sides take, so every stratum and seed key is the same on both
COLUMNS = ["claim", *CLAIM_KEY, "n_a", "n_b", "n", "estimate_a", "estimate_b", "difference", "ci_low", "ci_high",
           "tost_low", "tost_high", "margin", "p", "p_adj", "verdict", "ci_method", "flag"]


def shared_prompts(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """Both sides' label rows restricted to the prompts (per condition, pool, mitigation, language) both have."""
    key_a = pd.MultiIndex.from_frame(a[list(PROMPT_KEY)].astype(str))
    key_b = pd.MultiIndex.from_frame(b[list(PROMPT_KEY)].astype(str))
    common = key_a.unique().intersection(key_b.unique())
    counts = {"prompts_a": int(key_a.nunique()), "prompts_b": int(key_b.nunique()), "prompts_shared": len(common)}
    return a[key_a.isin(common)], b[key_b.isin(common)], counts


def claim_units(labels: pd.DataFrame, p: MetricsParams) -> dict[tuple, tuple[dict, UnitValues]]:
    """Per headline claim (CLAIM_KEY values): its metrics row and the per-unit values of its claimed number."""
    from mirage.metrics.compute import compute_metrics

    found: dict[tuple, tuple[dict, UnitValues]] = {}

    def keep(row: dict, units: UnitValues) -> None:
        if claims.claim_of(row) is not None:
            found[tuple(str(row[c]) for c in CLAIM_KEY)] = (row, units)

    # the side's own intervals and tests are not used: the fewest draws the params allow
    light = p.model_copy(update={"n_boot": 100, "n_perm": 100})
    compute_metrics(labels.assign(model=PAIRED), light, unit_hook=keep)
    return found


def _gradient(stat: Callable[[np.ndarray], np.ndarray], m: np.ndarray) -> np.ndarray:
    """Central-difference gradient of a statistic of column means (exact for the linear claims)."""
    g = np.empty(len(m))
    for k in range(len(m)):
        h = 1e-6 * max(1.0, abs(m[k]))
        e = np.zeros(len(m))
        e[k] = h
        g[k] = (float(stat(m + e)) - float(stat(m - e))) / (2 * h)
    return g


def seeded(p: MetricsParams, *key: object) -> np.random.Generator:
    return np.random.default_rng([p.seed, int(content_hash([str(k) for k in key], 8), 16)])


def margin_of(metric: str, cp: CompareParams) -> float:
    """The equivalence margin of a claim in the units of its values (rates: margin_pp / 100)."""
    return cp.margin_cai if metric == CAI else cp.margin_pp / METRICS[metric].scale


def compare_claim(key: tuple, ua: UnitValues, ub: UnitValues, p: MetricsParams) -> dict:
    """Difference A - B of one claim on the units both sides have: paired interval, TOST interval, paired test."""
    ka, kb = np.char.add(np.char.add(ua.strata, "\x1f"), ua.ids), np.char.add(np.char.add(ub.strata, "\x1f"), ub.ids)
    _, ia, ib = np.intersect1d(ka, kb, return_indices=True)
    xa, xb = ua.x[ia], ub.x[ib]
    n = len(ia)
    out = {"n_a": len(ka), "n_b": len(kb), "n": n, "estimate_a": math.nan, "estimate_b": math.nan,
           "difference": math.nan, "ci_low": math.nan, "ci_high": math.nan, "tost_low": math.nan, "tost_high": math.nan,
           "p": math.nan, "ci_method": "", "flag": ""}
    if n == 0:
        return out | {"flag": "no_shared_units"}
    with np.errstate(invalid="ignore", divide="ignore"):
        ma, mb = xa.mean(axis=0), xb.mean(axis=0)
        ea, eb = float(ua.stat(ma)), float(ua.stat(mb))
    out.update(estimate_a=ea, estimate_b=eb, difference=ea - eb)
    if n < 2 or not math.isfinite(ea - eb):
        return out | {"flag": "n_too_small" if n < 2 else "undefined"}
    frames = ua.frames[ia] if p.resampling == "clustered" else None
    cl = Clusters.of(ua.strata[ia], frames)
    boot = ClusterBootstrap(cl, p.n_boot, seeded(p, *key, "boot"))
    ra, ja, df = boot.means(xa)
    rb, jb, _ = boot.means(xb)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps, jack = ua.stat(ra) - ua.stat(rb), ua.stat(ja) - ua.stat(jb)
    lo, hi, method = interval(ea - eb, reps, jack, p.alpha, p.skew_threshold, df)
    tlo, thi, _ = interval(ea - eb, reps, jack, 2 * p.alpha, p.skew_threshold, df)
    out.update(ci_low=lo, ci_high=hi, tost_low=tlo, tost_high=thi, ci_method=method)
    d = (xa - xb) @ _gradient(ua.stat, (ma + mb) / 2)
    test = ClusterRelabel(cl, p.n_perm, seeded(p, *key, "swap")).test(np.column_stack([d, -d]), 0, None,
                                                                     seeded(p, *key, "tie"))
    if test is None or not method:
        return out | {"flag": "degenerate_bootstrap"}
    return out | {"p": test.p}


def verdict(metric: str, difference: float, p_adj: float, tost: tuple[float, float], margin: float, alpha: float) -> str:
    """Holm rejects: the side in the adverse direction is more biased; else TOST inside +-margin: equivalent."""
    if not math.isfinite(p_adj):
        return UNTESTED
    if p_adj <= alpha:
        adverse = -difference if metric in NEGATIVE_ADVERSE else difference
        return A_MORE if adverse > 0 else B_MORE
    if math.isfinite(tost[0]) and -margin < tost[0] and tost[1] < margin:
        return EQUIVALENT
    return INCONCLUSIVE


def compare_runs(a: pd.DataFrame, b: pd.DataFrame, p: MetricsParams, cp: CompareParams) -> tuple[pd.DataFrame, dict]:
    """(per-claim table, prompt counts) of the comparison of two sides' label rows."""
    a, b, counts = shared_prompts(a, b)
    if counts["prompts_shared"] == 0:
        from mirage.io import DataError

        raise DataError(f"the two sides share no prompt ({counts['prompts_a']} and {counts['prompts_b']} prompts): "
                        "compare runs of one slice")
    ca, cb = claim_units(a, p), claim_units(b, p)
    rows = []
    for key in sorted(set(ca) & set(cb)):
        row = dict(zip(CLAIM_KEY, key))
        rows.append({"claim": claims.describe(ca[key][0]), **row, **compare_claim(key, ca[key][1], cb[key][1], p),
                     "margin": margin_of(row["metric"], cp)})
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("p_adj", "verdict")])
    table["p_adj"] = holm(table["p"].to_numpy(float)) if len(table) else []
    table["verdict"] = [verdict(r["metric"], r["difference"], r["p_adj"], (r["tost_low"], r["tost_high"]), r["margin"],
                                p.alpha) for r in table.to_dict("records")]
    counts["claims_a_only"] = len(set(ca) - set(cb))
    counts["claims_b_only"] = len(set(cb) - set(ca))
    return table[COLUMNS], counts
