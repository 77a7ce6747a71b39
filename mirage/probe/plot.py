"""The λ(l) figure: mean log-odds per layer with its bootstrap band and the Table 7 onsets."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from mirage.io import atomic_write  # noqa: E402
from mirage.plotting import figure_bytes  # noqa: E402

# Okabe-Ito palette (colour-blind safe).
BLUE, VERMILLION, GREEN = "#0072B2", "#D55E00", "#009E73"


def render(summary: pd.DataFrame, onset: dict, model: str, confidence_level: float) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=150)
    ax.fill_between(summary["layer"], summary["ci_low"], summary["ci_high"], color=BLUE, alpha=0.25,
                    label=f"{confidence_level:.0%} bootstrap CI over pairs")
    ax.plot(summary["layer"], summary["mean_lambda"], color=BLUE, marker="o", markersize=3, lw=1.8, label="mean λ(l)")
    ax.axhline(0, color="0.3", lw=0.8)
    if onset["early_elevation_layer"] is not None:
        ax.axvline(onset["early_elevation_layer"], color=GREEN, ls="--", lw=1.2,
                   label=f"early elevation: layer {onset['early_elevation_layer']}")
    if onset["final_suppression_layer"] is not None:
        ax.axvline(onset["final_suppression_layer"], color=VERMILLION, ls=":", lw=1.5,
                   label=f"final suppression: L−{onset['final_suppression_offset']} (layer {onset['final_suppression_layer']})")
    ax.set_xlabel("layer l (0 = embeddings, L = output)", fontsize=11)
    ax.set_ylabel(r"$\lambda(l) = \log \frac{\sum_{v \in V} P_l(v \mid \mathrm{focal})}{\sum_{v \in V} P_l(v \mid \mathrm{control})}$",
                  fontsize=11)
    if onset["early_elevation_layer"] is None:
        ax.text(0.01, 0.02, "no sustained early elevation (onset rules: docs/probe.md)", transform=ax.transAxes,
                fontsize=9, color="0.3")
    ax.set_title(f"Logit-lens violence-token log-odds: {model} (L = {onset['n_layers']}, n = {int(summary['n_pairs'].iloc[0])} pairs)",
                 fontsize=11)
    ax.tick_params(labelsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, frameon=False, loc="best")
    fig.tight_layout()
    return fig


def save(fig: plt.Figure, stem: Path) -> list[Path]:
    """Write `<stem>.png` and `<stem>.svg` atomically, byte-reproducibly; returns the paths."""
    paths = []
    for fmt in ("png", "svg"):
        path = stem.with_suffix(f".{fmt}")
        with atomic_write(path, "wb") as fh:
            fh.write(figure_bytes(fig, fmt))
        paths.append(path)
    plt.close(fig)
    return paths
