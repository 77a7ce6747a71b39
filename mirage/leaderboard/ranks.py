"""Rank intervals and groups of indistinguishable entries for the board's claim columns (issue 33).

`mirage leaderboard verify` keeps, in each entry, the per-unit values (base prompts) of the claims the board ranks,
exactly as `mirage metrics` computes them from the recomputed labels. `mirage leaderboard build` then ranks the
entries of one split on the prompts all of them have: one Rao-Wu frame bootstrap whose replicate weights every entry
shares (so the shared prompts cancel), the rank of each entry in every replicate, and the 95 % interval of those ranks;
and paired comparisons of every two entries (`mirage compare`'s test, Holm over the pairs), from which entries in
descending order of bias join a group while no member of it is distinguishable from them. Rank 1 = most biased
(largest ΔV or CAI excess: the direction adverse to the focal identity).
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable
from itertools import combinations

import numpy as np

from mirage.compare.paired import compare_claim
from mirage.config.metrics import MetricsParams
from mirage.metric_names import CAI, DV
from mirage.metrics import claims
from mirage.metrics.stats import ClusterBootstrap, Clusters, UnitValues, holm

#: board column -> (metric, condition) of the pooled headline claim it ranks
RANKED: dict[str, tuple[str, str]] = {"dV/C1": (DV, "C1"), "dV/C2": (DV, "C2"), CAI: (CAI, "C2/C1")}
STATS: dict[int, Callable[[np.ndarray], np.ndarray]] = {
    1: lambda m: m[..., 0],  # a mean (every excess but CAI's)
    4: lambda m: m[..., 0] / m[..., 1] - m[..., 2] / m[..., 3],  # CAI's excess: a difference of ratios
}
RANK_PARAMS = MetricsParams(n_boot=2000, n_perm=2000)


def collector(out: dict[str, dict]) -> Callable[[dict, UnitValues], None]:
    """A unit hook for compute_metrics that keeps, per ranked column, the per-unit values of its claim (JSON-ready)."""

    def keep(row: dict, units: UnitValues) -> None:
        if claims.claim_of(row) is None or row.get("template") or row.get("harness"):
            return
        for key, (metric, cond) in RANKED.items():
            if (row["metric"], row["condition"]) == (metric, cond) and units.x.shape[1] in STATS:
                out[key] = {"strata": units.strata.tolist(), "frames": units.frames.tolist(), "ids": units.ids.tolist(),
                            "x": np.round(units.x, 12).tolist()}

    return keep


def units_of(doc: object) -> UnitValues | None:
    """An entry's stored units, or None when they are absent or malformed (an older entry: no rank)."""
    try:
        x = np.asarray(doc["x"], float)  # type: ignore[index]
        strata, frames, ids = (np.asarray(doc[k]).astype(str) for k in ("strata", "frames", "ids"))  # type: ignore[index]
        if x.ndim != 2 or x.shape[1] not in STATS or not (len(x) == len(strata) == len(frames) == len(ids)) or len(x) < 2:
            return None
    except (KeyError, TypeError, ValueError):
        return None
    return UnitValues(strata, frames, ids, x, STATS[x.shape[1]])


def rank_claim(column: str, units: dict[str, UnitValues], p: MetricsParams = RANK_PARAMS) -> dict[str, dict]:
    """Per entry id: estimate on the shared units, 95 % rank interval, group letter and n shared; {} with < 2 entries
    or < 2 shared units."""
    if len(units) < 2:
        return {}
    keys = {e: np.char.add(np.char.add(u.strata, "\x1f"), u.ids) for e, u in units.items()}
    common = sorted(set.intersection(*(set(k.tolist()) for k in keys.values())))
    if len(common) < 2:
        return {}
    first = next(iter(units.values()))
    pos = {e: {k: i for i, k in enumerate(keys[e].tolist())} for e in units}
    idx = {e: np.array([pos[e][k] for k in common]) for e in units}
    i0 = idx[next(iter(units))]
    cl = Clusters.of(first.strata[i0], first.frames[i0] if p.resampling == "clustered" else None)
    boot = ClusterBootstrap(cl, p.n_boot, np.random.default_rng([p.seed, len(common), sum(map(ord, column))]))
    ids = sorted(units)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.array([float(units[e].stat(units[e].x[idx[e]].mean(axis=0))) for e in ids])
        reps = np.array([units[e].stat(boot.means(units[e].x[idx[e]])[0]) for e in ids])  # (E, B)
    reps = np.where(np.isfinite(reps), reps, -np.inf)
    ranks = (-reps).argsort(axis=0, kind="stable").argsort(axis=0) + 1  # 1 = most biased in that replicate
    shared = {e: UnitValues(units[e].strata[idx[e]], units[e].frames[idx[e]], units[e].ids[idx[e]], units[e].x[idx[e]],
                            units[e].stat) for e in ids}
    pairs = list(combinations(range(len(ids)), 2))
    pv = np.array([compare_claim((column, ids[i], ids[j]), shared[ids[i]], shared[ids[j]], p)["p"] for i, j in pairs])
    differ = {pair for pair, a in zip(pairs, holm(pv)) if math.isfinite(a) and a <= p.alpha}
    order = sorted(range(len(ids)), key=lambda i: -est[i] if math.isfinite(est[i]) else math.inf)
    groups: list[list[int]] = []
    for i in order:
        if groups and not any(tuple(sorted((i, j))) in differ for j in groups[-1]):
            groups[-1].append(i)
        else:
            groups.append([i])
    letter = {i: string.ascii_uppercase[g % 26] * (1 + g // 26) for g, members in enumerate(groups) for i in members}
    return {ids[i]: {"estimate": est[i] if math.isfinite(est[i]) else None, "n": len(common),
                     "rank": order.index(i) + 1, "rank_low": int(np.quantile(ranks[i], 0.025, method="lower")),
                     "rank_high": int(np.quantile(ranks[i], 0.975, method="higher")), "group": letter[i],
                     "of": len(ids)} for i in range(len(ids))}


def board_ranks(entries: list[dict]) -> dict[str, dict[str, dict[str, dict]]]:
    """split -> column -> entry id -> rank_claim row, over the entries of each split that carry units."""
    out: dict[str, dict[str, dict[str, dict]]] = {}
    splits = sorted({e["manifest"]["split"] for e in entries})
    for split in splits:
        for column in RANKED:
            units = {e["id"]: u for e in entries if e["manifest"]["split"] == split
                     and (u := units_of((e.get("units") or {}).get(column))) is not None}
            if ranked := rank_claim(column, units):
                out.setdefault(split, {})[column] = ranked
    return out
