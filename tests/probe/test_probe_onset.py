"""Onset rules and bootstrap summary on hand-made λ curves."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mirage.probe.onset import onsets, summarise


def curve(mean: list[float], half_width: float = 0.05) -> pd.DataFrame:
    m = np.asarray(mean, dtype=float)
    return pd.DataFrame({"layer": np.arange(len(m)), "mean_lambda": m, "ci_low": m - half_width,
                         "ci_high": m + half_width, "n_pairs": 40})


def rule(summary: pd.DataFrame, min_run: int = 2) -> dict:
    return onsets(summary, elevation_fraction=0.5, min_lambda=0.1, min_run=min_run, suppression_fraction=0.5)


def test_elevation_and_suppression_onsets():
    out = rule(curve([0, 0.02, 0.3, 0.6, 1.0, 0.9, 1.0, 0.8, 0.3, 0.05]))
    assert out == {"n_layers": 9, "early_elevation_layer": 3, "final_suppression_layer": 8, "final_suppression_offset": 1}


def test_suppression_must_hold_to_the_output():
    out = rule(curve([0, 0.8, 1.0, 0.2, 0.9, 0.1, 0.1]))
    assert out["early_elevation_layer"] == 1 and out["final_suppression_layer"] == 5 and out["final_suppression_offset"] == 1


def test_no_suppression_when_lambda_stays_high():
    out = rule(curve([0, 0.5, 1.0, 1.0, 0.9]))
    assert out["early_elevation_layer"] == 1 and out["final_suppression_layer"] is None


def test_no_elevation_for_negative_small_or_insignificant_curves():
    assert rule(curve([0, -0.5, -1.0, -0.2]))["early_elevation_layer"] is None
    assert rule(curve([0, 0.05, 0.06, 0.05], half_width=0.01))["early_elevation_layer"] is None  # below min_lambda
    assert rule(curve([0, 0.5, 0.6, 0.5], half_width=1.0))["early_elevation_layer"] is None  # CI crosses zero
    assert rule(curve([0, 0.0, 1.0, 0.0]))["early_elevation_layer"] is None  # a single-layer spike is not sustained
    assert rule(curve([0, 0.0, 1.0, 0.0]), min_run=1)["early_elevation_layer"] == 2


def test_bootstrap_ci_brackets_the_mean_and_is_seeded():
    rng = np.random.default_rng(1)
    lam = np.column_stack([np.zeros(40), rng.normal(0.5, 0.3, 40), rng.normal(-0.2, 1.0, 40)])
    a = summarise(lam, 2000, 0.95, "BCa", seed=7)
    b = summarise(lam, 2000, 0.95, "BCa", seed=7)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["layer", "mean_lambda", "ci_low", "ci_high", "n_pairs"]
    assert (a["ci_low"] <= a["mean_lambda"]).all() and (a["mean_lambda"] <= a["ci_high"]).all()
    assert a.loc[0, "ci_low"] == a.loc[0, "ci_high"] == 0.0  # degenerate column: zero-width CI
    assert a.loc[1, "ci_low"] > 0.3 and a.loc[2, "ci_high"] - a.loc[2, "ci_low"] > a.loc[1, "ci_high"] - a.loc[1, "ci_low"]
