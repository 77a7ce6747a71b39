"""Bias over time: the headline claims of several snapshots of one model family against release date, on the prompts
every snapshot has, with the `mirage compare` verdict of each step from one snapshot to the next (docs/compare.md)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mirage.compare.paired import CLAIM_KEY, claim_units, compare_runs, seeded, shared_prompts
from mirage.config.compare import CompareParams, Series
from mirage.config.metrics import MetricsParams
from mirage.metric_names import CAI, METRICS
from mirage.metrics import claims
from mirage.metrics.stats import ClusterBootstrap, Clusters, interval

COLUMNS = ["side", "date", "claim", *CLAIM_KEY, "n", "estimate", "ci_low", "ci_high", "step_verdict", "step_p_adj"]


def _pooled(key: tuple) -> bool:
    """Pooled claims only (over templates and harnesses): what the figure shows one panel per."""
    row = dict(zip(CLAIM_KEY, key))
    return row["template"] in ("", "T5") and row["harness"] == ""


def over_time(sides: list[pd.DataFrame], series: Series, p: MetricsParams, cp: CompareParams) -> tuple[pd.DataFrame, dict]:
    """One row per snapshot x pooled claim: its estimate and (1 - alpha) frame-bootstrap interval on the prompts every
    snapshot has, and the verdict of the step from the previous snapshot (`compare_runs`, Holm over that step's claims)."""
    common = sides[0]
    for other in sides[1:]:
        common, _, _ = shared_prompts(common, other)
    cut = [shared_prompts(s, common)[0] for s in sides]
    rows: list[dict] = []
    steps: list[pd.DataFrame | None] = [None]
    for a, b in zip(cut, cut[1:]):
        steps.append(compare_runs(b, a, p, cp)[0])  # A = the newer snapshot: "A more biased" = bias grew
    for snap, labels, step in zip(series.snapshots, cut, steps):
        units = claim_units(labels, p)
        for key, (row, u) in sorted(units.items()):
            if not _pooled(key):
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                est = float(u.stat(u.x.mean(axis=0)))
            lo = hi = math.nan
            if len(u.x) >= 2 and math.isfinite(est):
                cl = Clusters.of(u.strata, u.frames if p.resampling == "clustered" else None)
                reps, jack, df = ClusterBootstrap(cl, p.n_boot, seeded(p, *key, snap.side, "series")).means(u.x)
                with np.errstate(invalid="ignore", divide="ignore"):
                    lo, hi, _ = interval(est, u.stat(reps), u.stat(jack), p.alpha, p.skew_threshold, df)
            verdict, p_adj = "", math.nan
            if step is not None:
                match = step[np.logical_and.reduce([step[c].astype(str) == v for c, v in zip(CLAIM_KEY, key)])]
                if len(match):
                    verdict, p_adj = str(match.iloc[0]["verdict"]), float(match.iloc[0]["p_adj"])
            rows.append({"side": snap.side, "date": snap.date.isoformat(), "claim": claims.describe(row),
                         **dict(zip(CLAIM_KEY, key)), "n": len(u.x), "estimate": est, "ci_low": lo, "ci_high": hi,
                         "step_verdict": verdict, "step_p_adj": p_adj})
    counts = {"prompts_shared": int(len(common[list(("condition", "rag_pool", "mitigation", "language", "prompt_id"))]
                                        .drop_duplicates()))}
    return pd.DataFrame(rows, columns=COLUMNS), counts


def figure_png(table: pd.DataFrame, title: str, alpha: float, dpi: int = 150) -> bytes:
    """One panel per pooled claim: estimate against release date with its interval; a step whose verdict says the
    newer snapshot is more (less) biased is drawn red (blue)."""
    from mirage.plotting import figure_bytes, plt

    claims_ = list(dict.fromkeys(table["claim"]))
    cols = min(3, max(len(claims_), 1))
    nrows = max(1, math.ceil(len(claims_) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.0 * nrows), squeeze=False)
    for ax, name in zip(axes.ravel(), claims_):
        t = table[table["claim"] == name]
        metric = t["metric"].iloc[0]
        k = METRICS[metric].scale
        x = pd.to_datetime(t["date"])
        y = t["estimate"].to_numpy(float) * k
        err = np.vstack([y - t["ci_low"].to_numpy(float) * k, t["ci_high"].to_numpy(float) * k - y])
        ax.errorbar(x, y, yerr=np.where(np.isfinite(err), err, 0), fmt="o", color="#333333", capsize=3)
        for i in range(1, len(t)):
            colour = {"A more biased": "#b2182b", "B more biased": "#2166ac"}.get(t["step_verdict"].iloc[i], "#999999")
            ax.plot(x.iloc[i - 1:i + 1], y[i - 1:i + 1], color=colour, lw=2)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("ratio" if metric == CAI else "pp", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(claims_):]:
        ax.axis("off")
    fig.suptitle(f"{title}: {100 * (1 - alpha):g} % intervals; red step = bias grew, blue = shrank (compare, Holm)",
                 fontsize=9)
    fig.tight_layout()
    data = figure_bytes(fig, "png", dpi)
    plt.close(fig)
    return data
