"""Figures 2-6 of the paper (and the optional logit-lens curve) from metrics.csv, as matplotlib figures.

Each builder returns None when the run has no rows for it; the page then says "not computed in this run".
Colours are the Okabe-Ito colour-blind-safe palette; focal vs control also differ by hatching.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from mirage.io import atomic_write  # noqa: E402
from mirage.layout import CONDITIONS  # noqa: E402
from mirage.plotting import figure_bytes  # noqa: E402
from mirage.report.data import ANY, EITHER, Provenance, select  # noqa: E402

OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
FOCAL_STYLE = {"color": "#D55E00", "hatch": ""}
CONTROL_STYLE = {"color": "#0072B2", "hatch": "//"}
POOLS = ["none", "empty", "neutral", "historical", "recent"]
LANGUAGES = ["en", "ar-msa", "ar-egy", "ar-lev", "ar-mag"]
LANGUAGE_NAMES = {"en": "English", "ar-msa": "MSA", "ar-egy": "Egyptian", "ar-lev": "Levantine", "ar-mag": "Maghrebi"}
MITIGATIONS = ["M1", "M2", "M3", "M4", "structural"]
OPTIONAL = ["", *CONDITIONS]  # condition may be set or pooled ("")

plt.rcParams.update({"font.size": 10, "axes.spines.top": False, "axes.spines.right": False})


@dataclass
class FigureSpec:
    """One paper figure: file stem, title shown on the page, and its builder."""

    stem: str
    title: str
    description: str
    build: Callable[..., Figure | None]


def ordered(values, order: list[str]) -> list[str]:
    """Distinct `values` in `order` first, then any others sorted."""
    seen = set(values)
    return [v for v in dict.fromkeys(order) if v in seen] + sorted(seen - set(order))


def model_colors(models: list[str]) -> dict[str, dict]:
    return {m: {"color": OKABE_ITO[i % len(OKABE_ITO)], "hatch": ""} for i, m in enumerate(models)}


def _grouped_panels(
    rows: pd.DataFrame, *, panel: str, x: str, x_order: list[str], series: str, styles: dict[str, dict],
    ylabel: str, scale: float, labels: dict[str, str] | None = None, panel_title: Callable[[str], str] = str,
    series_label: Callable[[str], str] = str, zero_line: bool = False,
) -> Figure:
    """Grouped bars with 95% CI whiskers: one panel per `panel` value, `x` categories, one bar per `series`."""
    panels = ordered(rows[panel].unique(), CONDITIONS)
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    xs = ordered(rows[x].unique(), x_order)
    present = [s for s in styles if s in set(rows[series])]
    width = max(4.5, len(xs) * (0.55 + 0.3 * len(present)) + 1.2)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, 3.6 * nrows + 0.9), squeeze=False, sharey=True)
    bar_w = 0.8 / max(1, len(present))
    for ax, p in zip(axes.flat, panels):
        sub = rows[rows[panel] == p]
        for j, s in enumerate(present):
            cell = sub[sub[series] == s].drop_duplicates(x).set_index(x).reindex(xs)
            est = cell["estimate"].to_numpy(float) * scale
            lo = np.clip(est - cell["ci_low"].to_numpy(float) * scale, 0, None)
            hi = np.clip(cell["ci_high"].to_numpy(float) * scale - est, 0, None)
            pos = np.arange(len(xs)) - 0.4 + bar_w * (j + 0.5)
            ax.bar(pos, np.nan_to_num(est), bar_w, label=series_label(s), edgecolor="white", linewidth=0.5, **styles[s])
            ax.errorbar(pos, est, yerr=[lo, hi], fmt="none", ecolor="#333333", capsize=2.5, linewidth=1)
        ax.set_xticks(np.arange(len(xs)), [(labels or {}).get(v, v) for v in xs], rotation=20 if len(xs) > 4 else 0, ha="right" if len(xs) > 4 else "center")
        ax.set_title(panel_title(p), fontsize=10)
        ax.grid(axis="y", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        if zero_line:
            ax.axhline(0, color="#333333", linewidth=0.8)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    handles, names = axes.flat[0].get_legend_handles_labels()
    per_col = 0.09 * max(map(len, names), default=1) + 0.6  # inches one legend entry needs at 10 pt
    legend_cols = max(1, min(len(names), int(fig.get_figwidth() / per_col)))
    fig.legend(handles, names, loc="upper center", ncols=legend_cols, frameon=False, bbox_to_anchor=(0.5, 1.0))
    top = 1 - (0.28 * math.ceil(len(names) / legend_cols) + 0.15) / fig.get_figheight()
    fig.tight_layout(rect=(0, 0.06, 1, top))
    return fig


def _pooled(cond: str) -> str:
    return cond or "all conditions"


def fig2(df: pd.DataFrame, models: list[str], **_) -> Figure | None:
    """Figure 2: V by condition per model, focal vs control, with 95% CIs."""
    rows = pd.concat([select(df, "V_focal", condition=ANY).assign(series="focal"),
                      select(df, "V_control", condition=ANY).assign(series="control")])
    if rows.empty:
        return None
    return _grouped_panels(rows, panel="condition", x="model", x_order=models, series="series",
                           styles={"focal": FOCAL_STYLE, "control": CONTROL_STYLE}, ylabel="violent completions (%)", scale=100,
                           series_label={"focal": "focal (Muslim)", "control": "controls (pooled)"}.get)


def fig3(df: pd.DataFrame, models: list[str], harness_titles: dict[str, str], **_) -> Figure | None:
    """Figure 3: signed decision asymmetry per harness per model (pp; s is favourability, so negative = adverse to the focal identity)."""
    rows = select(df, "Delta_signed", harness=ANY, condition=["", "C3"]).assign(panel="C3: agentic decisions")
    if rows.empty:
        return None
    labels = {h: textwrap.fill(f"{h}: {t}", 14) for h, t in harness_titles.items()}
    return _grouped_panels(rows, panel="panel", x="harness", x_order=sorted(harness_titles), series="model",
                           styles=model_colors(models), ylabel="signed Δ (pp)", scale=1, labels=labels, zero_line=True)


def fig4(df: pd.DataFrame, models: list[str], **_) -> Figure | None:
    """Figure 4: V under the RAG pools, with δt and its permutation p per model in the legend."""
    rows = select(df, "V_focal", rag_pool=ANY, condition=OPTIONAL)
    if rows.empty:
        return None
    dt = select(df, "delta_t", condition=OPTIONAL, rag_pool=EITHER).set_index(["model", "condition"])

    def label(m: str) -> str:
        hits = dt.loc[[k for k in dt.index if k[0] == m]] if len(dt) else dt
        if hits.empty:
            return f"{m} (δt not computed)"
        r = hits.iloc[0]
        p = "p n/a" if pd.isna(r["p"]) else f"p={r['p']:.3g}"
        return f"{m} (δt={100 * r['estimate']:+.1f} pp, {p})"

    return _grouped_panels(rows, panel="condition", x="rag_pool", x_order=POOLS, series="model", styles=model_colors(models),
                           ylabel="focal violent completions (%)", scale=100, panel_title=_pooled, series_label=label)


def fig5(df: pd.DataFrame, models: list[str], **_) -> Figure | None:
    """Figure 5: focal V on the parallel subset by language variant."""
    rows = select(df, "V_focal", language=ANY, condition=OPTIONAL)
    if rows.empty:
        return None
    return _grouped_panels(rows, panel="condition", x="language", x_order=LANGUAGES, series="model", styles=model_colors(models),
                           ylabel="focal violent completions (%)", scale=100, labels=LANGUAGE_NAMES, panel_title=_pooled)


def fig6(df: pd.DataFrame, models: list[str], **_) -> Figure | None:
    """Figure 6: mitigation effect on V per condition, one panel per model."""
    rows = select(df, "mitigation_effect_V", mitigation=ANY, condition=ANY)
    if rows.empty:
        return None
    mits = ordered(rows["mitigation"].unique(), MITIGATIONS)
    styles = {m: {"color": OKABE_ITO[i % len(OKABE_ITO)], "hatch": ""} for i, m in enumerate(mits)}
    return _grouped_panels(rows, panel="model", x="condition", x_order=CONDITIONS, series="mitigation", styles=styles,
                           ylabel="mitigation effect on V (pp)", scale=100, zero_line=True)


def fig_probe(df: pd.DataFrame, models: list[str], probe: dict[str, pd.DataFrame], **_) -> Figure | None:
    """Logit-lens λ(l) per layer with 95% CI band (App. E), when `mirage probe` ran."""
    if not probe:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for (m, curve), color in zip(probe.items(), OKABE_ITO):
        ax.plot(curve["layer"], curve["mean_lambda"], color=color, label=m, linewidth=1.6)
        ax.fill_between(curve["layer"], curve["ci_low"], curve["ci_high"], color=color, alpha=0.2, linewidth=0)
    ax.axhline(0, color="#333333", linewidth=0.8)
    ax.set(xlabel="layer", ylabel="λ(l): violence-token log-odds, focal − control")
    ax.legend(frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


SPECS: list[FigureSpec] = [
    FigureSpec("fig2_violence_by_condition", "Figure 2: violence rate by condition",
               "Violent-completion rate V per model for direct completion (C1), chain of thought (C2) and agentic decisions (C3); focal (Muslim) vs pooled controls; whiskers are 95% CIs.", fig2),
    FigureSpec("fig3_decision_asymmetry", "Figure 3: decision asymmetry per harness",
               "Signed decision asymmetry Δ (pp) per agentic harness and model; 100·(s_focal − s_control) with s = favourability, so negative = less favourable to the focal (Muslim) identity on identical evidence; whiskers are 95% CIs.", fig3),
    FigureSpec("fig4_time_coupled_rag", "Figure 4: time-coupled retrieval",
               "Focal violent-completion rate under each retrieved-news pool; the legend gives the time-coupling coefficient δt (recent − neutral) and its permutation p-value.", fig4),
    FigureSpec("fig5_crosslingual", "Figure 5: cross-lingual rates",
               "Focal violent-completion rate on the parallel subset by language variant (English, MSA, Egyptian, Levantine, Maghrebi Arabic); whiskers are 95% CIs.", fig5),
    FigureSpec("fig6_mitigation", "Figure 6: mitigation effectiveness across conditions",
               "Effect of each mitigation on the violence rate per condition (metric mitigation_effect_V), one panel per model; whiskers are 95% CIs.", fig6),
    FigureSpec("fig_logit_lens", "Logit-lens probe (App. E)",
               "Mean per-layer violence-token log-odds difference λ(l) between matched focal and control prompts, with 95% CI band.", fig_probe),
]


def add_caption(fig: Figure, text: str) -> None:
    """Provenance footer inside the image, so a PNG/SVG copied elsewhere still names its run."""
    width_chars = int(fig.get_figwidth() * 15)
    fig.text(0.01, 0.01, textwrap.fill(text, width_chars), fontsize=7, color="#444444", va="bottom")


def save(fig: Figure, out_dir: Path, stem: str, formats: list[str], dpi: int) -> bytes:
    """Write the figure atomically (byte-reproducibly) in each format; return its PNG bytes (for inlining in the HTML)."""
    png = figure_bytes(fig, "png", dpi)
    for fmt in formats:
        with atomic_write(out_dir / f"{stem}.{fmt}", "wb") as fh:
            fh.write(png if fmt == "png" else figure_bytes(fig, fmt, dpi))
    plt.close(fig)
    return png


def build_all(df: pd.DataFrame, models: list[str], prov: Provenance, out_dir: Path, formats: list[str], dpi: int,
              harness_titles: dict[str, str], probe: dict[str, pd.DataFrame]) -> dict[str, bytes | None]:
    """Build every figure; returns stem -> PNG bytes (None when not computed). Stale files of a skipped figure are removed."""
    out: dict[str, bytes | None] = {}
    for spec in SPECS:
        fig = spec.build(df, models=models, harness_titles=harness_titles, probe=probe)
        if fig is None:
            for fmt in ("png", "svg"):
                (out_dir / f"{spec.stem}.{fmt}").unlink(missing_ok=True)
            out[spec.stem] = None
            continue
        add_caption(fig, prov.caption(models if spec.stem != "fig_logit_lens" else list(probe)))
        out[spec.stem] = save(fig, out_dir, spec.stem, formats, dpi)
    return out
