"""Per-layer mean λ with bootstrap CIs over pairs, and the Table 7 onset rules (defined in docs/probe.md)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats


def summarise(lam: np.ndarray, n_resamples: int, confidence_level: float, method: str, seed: int) -> pd.DataFrame:
    """lambda.csv rows from λ of shape (n_pairs, n_layers + 1): mean over pairs and a bootstrap CI per layer.

    Layers where every pair has the same λ (e.g. identical prompts) get a zero-width CI at that value.
    """
    n_pairs = lam.shape[0]
    mean = lam.mean(axis=0)
    low, high = mean.copy(), mean.copy()
    varies = np.ptp(lam, axis=0) > 0
    if n_pairs > 1 and varies.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            res = stats.bootstrap(
                (lam[:, varies],), np.mean, axis=0, vectorized=True, n_resamples=n_resamples,
                confidence_level=confidence_level, method=method, rng=np.random.default_rng(seed),
            )
        low[varies], high[varies] = res.confidence_interval.low, res.confidence_interval.high
    return pd.DataFrame(
        {"layer": np.arange(lam.shape[1]), "mean_lambda": mean, "ci_low": low, "ci_high": high, "n_pairs": n_pairs}
    )


def onsets(
    summary: pd.DataFrame, elevation_fraction: float, min_lambda: float, min_run: int, suppression_fraction: float
) -> dict:
    """Early-elevation and final-suppression onsets of a λ curve (None where the curve has none).

    peak m* = max mean λ (first such layer l*). No elevation unless m* > 0 with ci_low(l*) > 0.
    elevated(l) := ci_low(l) > 0 and mean(l) >= max(min_lambda, elevation_fraction * m*).
    early_elevation_layer = first l with elevated(l), ..., elevated(l + min_run - 1).
    final_suppression_layer = first l > l* such that mean(l') <= suppression_fraction * m* for all l' >= l;
    final_suppression_offset = L - final_suppression_layer.
    """
    mean, low = summary["mean_lambda"].to_numpy(), summary["ci_low"].to_numpy()
    last = int(summary["layer"].iloc[-1])
    out: dict = {"n_layers": last, "early_elevation_layer": None, "final_suppression_layer": None, "final_suppression_offset": None}
    peak_at = int(np.argmax(mean))
    peak = float(mean[peak_at])
    if not (peak > 0 and low[peak_at] > 0):
        return out
    elevated = (low > 0) & (mean >= max(min_lambda, elevation_fraction * peak))
    runs = np.convolve(elevated.astype(int), np.ones(min_run, dtype=int), mode="valid") == min_run
    if not runs.any():
        return out
    out["early_elevation_layer"] = int(summary["layer"].iloc[int(np.argmax(runs))])
    above = np.nonzero(mean[peak_at + 1 :] > suppression_fraction * peak)[0]
    first_low = peak_at + 1 + (int(above[-1]) + 1 if above.size else 0)
    if first_low <= last:
        out["final_suppression_layer"] = int(summary["layer"].iloc[first_low])
        out["final_suppression_offset"] = last - out["final_suppression_layer"]
    return out
