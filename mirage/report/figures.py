"""Figures 2-6 of the paper, the placebo-floor forest plot and the optional logit-lens curve, as matplotlib figures.

Each builder returns (figure, note, coverage) or (None, reason, ""): a figure is drawn whenever its rows have an
estimate, and the page shows the reason instead of an empty panel only when none has. Figures 2-6 are point
estimates with n beside each point; a point with a 95% interval has a whisker, a degenerate one (n too small, every
sample agrees, flagged) is a hollow diamond with its own legend entry, and `coverage` says how many points have
intervals. A missing value is written "not computed" on the axis, never drawn as zero. Bias estimates carry their
identity-placebo floor as a grey band. Colours: Okabe-Ito colour-blind-safe palette; series also differ by marker shape.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

from mirage.io import atomic_write  # noqa: E402
from mirage.metric_names import (  # noqa: E402
    DELTA_ABS,
    DELTA_SIGNED,
    DELTA_T,
    DELTA_T_DID,
    DV,
    METRICS,
    MIT_V,
    V_CONTROL,
    V_FOCAL,
    XLING_GAP,
)
from mirage.plotting import figure_bytes  # noqa: E402
from mirage.protocol import CONDITIONS, LANGUAGES, MITIGATIONS  # noqa: E402
from mirage.protocol import POOLS as PROTOCOL_POOLS  # noqa: E402
from mirage.report.data import ANY, EITHER, SIGNED, Provenance, number, select  # noqa: E402

OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
FOCAL_STYLE = {"color": "#D55E00", "marker": "o"}
CONTROL_STYLE = {"color": "#0072B2", "marker": "s"}
MARKERS = ["o", "s", "^", "v", "P", "X", "*", "h"]  # series shapes; the diamond is kept for "no interval"
NO_INTERVAL_MARKER = "D"
# data.degenerate_reason's words as the legend says them ("bootstrap degenerate": every bootstrap replicate is equal,
# e.g. a rate of 0 everywhere).
NO_INTERVAL_WORDS = {"bootstrap degenerate": "all resamples agree"}
# Width (inches) one point and its "n=…" label need: beside the point for up to DENSE series, above it (rotated) for more.
SLOT_INCHES, DENSE_SLOT_INCHES, DENSE = 0.6, 0.3, 3
MAX_WIDTH = 16.0  # inches; wider panel grids wrap into more rows
CAPTION_INCHES = 0.55  # below the axes: the provenance caption (add_caption), up to three lines
FLOOR = {"color": "#9a9a9a", "alpha": 0.45, "linewidth": 0}
FLOOR_LABEL = "identity-placebo floor"
POOLS = ["none", *PROTOCOL_POOLS]
LANGUAGE_NAMES = {"en": "English", "ar-msa": "MSA", "ar-egy": "Egyptian", "ar-lev": "Levantine", "ar-mag": "Maghrebi"}
OPTIONAL = ["", *CONDITIONS]  # condition may be set or pooled ("")

plt.rcParams.update({"font.size": 10, "axes.spines.top": False, "axes.spines.right": False})

Built = tuple[Figure | None, str, str]  # figure, note, coverage sentence (how many points have intervals)


@dataclass
class FigureSpec:
    """One figure: file stem, title shown on the page, and its builder."""

    stem: str
    title: str
    description: str
    build: Callable[..., Built]


@dataclass
class Rendered:
    """A built figure: PNG bytes for the page, or the reason it was not drawn; `note` and `coverage` (how many points
    have a 95% interval) add to the caption."""

    png: bytes | None
    note: str = ""
    coverage: str = ""


def ordered(values, order: list[str]) -> list[str]:
    """Distinct `values` in `order` first, then any others sorted."""
    seen = set(values)
    return [v for v in dict.fromkeys(order) if v in seen] + sorted(seen - set(order))


def floor_band(metric: str, placebo: float) -> tuple[float, float]:
    """The placebo floor as a range: ±|placebo| for signed differences, [0, placebo] otherwise."""
    return (-abs(placebo), abs(placebo)) if metric in SIGNED else (min(0.0, placebo), max(0.0, placebo))


def _interval_reason(why: str, lo: float, hi: float) -> str:
    """Why a point has no 95% interval, in the figure legend's words ("" when it has one)."""
    if why:
        return NO_INTERVAL_WORDS.get(why, why)
    return "interval not computed" if np.isnan(lo) or np.isnan(hi) else ""


@dataclass
class Coverage:
    """How many drawn points carry a 95% interval, and why the others do not (for the caption)."""

    points: int = 0
    with_interval: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str) -> None:
        self.points += 1
        if reason:
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
        else:
            self.with_interval += 1

    def sentence(self) -> str:
        if not self.points:
            return ""
        none = self.points - self.with_interval
        if not none:
            return f"95% interval on all {self.points} point{'s' if self.points > 1 else ''}."
        why = ", ".join(f"{k} ({v})" for k, v in sorted(self.reasons.items()))
        return (f"95% interval on {self.with_interval} of {self.points} point{'s' if self.points > 1 else ''}; "
                f"none on {none} (hollow diamond): {why}.")


def _series_styles(names: list[str], colors: dict[str, str] | None = None) -> dict[str, dict]:
    """Colour and marker shape per series (shape too, so the series differ without colour)."""
    return {s: {"color": (colors or {}).get(s, OKABE_ITO[i % len(OKABE_ITO)]), "marker": MARKERS[i % len(MARKERS)]}
            for i, s in enumerate(names)}


def _legend_rows(handles: list, width: float) -> tuple[int, list]:
    """The most legend columns that fit `width` inches with entries read row by row (series first, then the markers'
    meaning); returns the column count and the handles in the column-major order matplotlib fills."""
    need = [0.075 * len(h.get_label()) + 0.5 for h in handles]  # inches one entry needs at 9 pt
    cols = len(handles)
    while cols > 1 and sum(max(need[j::cols]) for j in range(cols)) > width:
        cols -= 1
    return cols, [h for j in range(cols) for h in handles[j::cols]]


def _point_panels(
    rows: pd.DataFrame, *, panel: str, x: str, x_order: list[str], series: str, styles: dict[str, dict],
    ylabel: str, scale: float, labels: dict[str, str] | None = None, panel_title: Callable[[str], str] = str,
    series_label: Callable[[str], str] = str, zero_line: bool = False, all_x: bool = False, floor: bool = False,
) -> tuple[Figure, Coverage]:
    """Point estimates with n beside each point: one panel per `panel` value, `x` categories, one point per `series`
    (dodged). A point with a 95% interval is a filled marker with a whisker; one without (n too small, every sample
    agrees, ...) a hollow diamond, with its own legend entry. `all_x` keeps every `x_order` category (absent ones read
    "not computed"); `floor` draws each point's identity-placebo floor as a grey band behind it."""
    panels = ordered(rows[panel].unique(), CONDITIONS)
    xs = list(dict.fromkeys([*x_order, *ordered(rows[x].unique(), x_order)])) if all_x else ordered(rows[x].unique(), x_order)
    present = [s for s in styles if s in set(rows[series])]
    slot = 0.8 / max(1, len(present))
    dense = len(present) > DENSE
    panel_w = max(3.6, len(xs) * max(0.95, (DENSE_SLOT_INCHES if dense else SLOT_INCHES) * len(present) / 0.8) + 1.1)
    ncols = max(1, min(len(panels), 3, int(MAX_WIDTH // panel_w)))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_w * ncols, 3.6 * nrows + 1.0), squeeze=False, sharey=True)
    any_floor = floor and rows["placebo"].notna().any()
    cov, reasons, extent = Coverage(), [], [0.0]
    with_interval: set[str] = set()  # series drawn with at least one filled marker (the rest only as hollow diamonds)
    for ax, p in zip(axes.flat, panels):
        sub = rows[rows[panel] == p]
        for j, s in enumerate(present):
            cell = sub[sub[series] == s].drop_duplicates(x).set_index(x).reindex(xs)
            st = styles[s]
            for i, (_, r) in enumerate(cell.iterrows()):
                xp = i - 0.4 + slot * (j + 0.5)
                est = r["estimate"] * scale
                if np.isnan(est):  # written mid-height, whatever the scale: never a point at zero
                    ax.text(xp, 0.5, "not computed", transform=blended_transform_factory(ax.transData, ax.transAxes), rotation=90,
                            ha="center", va="center", fontsize=6.5, color="#555555", style="italic")
                    continue
                lo, hi = r["ci_low"] * scale, r["ci_high"] * scale
                reason = _interval_reason(r["why"] if isinstance(r["why"], str) else "", lo, hi)
                cov.add(reason)
                if any_floor and not pd.isna(r.get("placebo")):
                    a, b = floor_band(r["metric"], r["placebo"] * scale)
                    if b > a:
                        ax.bar(xp, b - a, slot * 0.9, bottom=a, zorder=1, **FLOOR)
                    else:  # a floor of exactly 0: a grey stroke, so it is seen to be there
                        ax.plot([xp - slot * 0.45, xp + slot * 0.45], [a, a], color=FLOOR["color"], alpha=FLOOR["alpha"], lw=3, zorder=1)
                    extent += [a, b]
                if reason:
                    reasons.append(reason)
                    ax.plot(xp, est, NO_INTERVAL_MARKER, ms=6.5, mfc="white", mec=st["color"], mew=1.4, zorder=4)
                else:
                    with_interval.add(s)
                    ax.errorbar(xp, est, yerr=[[max(est - lo, 0)], [max(hi - est, 0)]], fmt=st["marker"], ms=6, color=st["color"],
                                ecolor=st["color"], elinewidth=1.2, capsize=2.5, zorder=4)
                    extent += [lo, hi]
                extent.append(est)
                n = "n=?" if pd.isna(r["n"]) else f"n={int(r['n']):,}"
                if dense:  # above the whisker, rotated: side by side they would run into the next series
                    ax.annotate(n, (xp, est if reason else max(est, hi)), xytext=(0, 5), textcoords="offset points", rotation=90,
                                ha="center", va="bottom", fontsize=6, color="#333333", zorder=5)
                else:
                    ax.annotate(n, (xp, est), xytext=(5, 0), textcoords="offset points", ha="left", va="center", fontsize=6.5,
                                color="#333333", zorder=5)
        ax.set_xticks(np.arange(len(xs)), [(labels or {}).get(v, v) for v in xs], rotation=20 if len(xs) > 4 else 0,
                      ha="right" if len(xs) > 4 else "center")
        ax.set_xlim(-0.6, len(xs) - 0.4)
        for k in range(1, len(xs)):  # light separators between categories
            ax.axvline(k - 0.5, color="#eeeeee", linewidth=0.8, zorder=0)
        ax.set_title(panel_title(p), fontsize=10)
        ax.grid(axis="y", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        if zero_line:
            ax.axhline(0, color="#333333", linewidth=0.8, zorder=2)
        if floor and not any_floor:
            ax.text(0.01, 0.99, "identity-placebo floor: not computed in this run", transform=ax.transAxes, va="top", fontsize=7, color="#555555")
    lo_y, hi_y = min(extent), max(extent)
    pad = max(hi_y - lo_y, 4.0) * 0.12
    lo_y, hi_y = lo_y - pad, hi_y + pad * (2.5 if dense else 1)  # room for the rotated n labels
    if hi_y - lo_y < 5:  # near-zero data: a readable scale, not -0.04..0.04
        lo_y, hi_y = min(lo_y, -2 if zero_line else -0.5), max(hi_y, 5)
    axes.flat[0].set_ylim(lo_y, hi_y)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    handles = [Line2D([], [], color=styles[s]["color"], marker=styles[s]["marker"], linestyle="", ms=6, label=series_label(s))
               if s in with_interval else  # the marker as drawn: a series without any interval shows only hollow diamonds
               Line2D([], [], color=styles[s]["color"], marker=NO_INTERVAL_MARKER, mfc="white", mec=styles[s]["color"],
                      linestyle="", ms=6.5, mew=1.4, label=series_label(s)) for s in present]
    if cov.with_interval:
        handles.append(Line2D([], [], color="#333333", marker="|", linestyle="", ms=11, mew=1.2, label="95% interval"))
    if reasons:
        kinds = " / ".join(dict.fromkeys(sorted(set(reasons))))
        handles.append(Line2D([], [], color="#555555", marker=NO_INTERVAL_MARKER, mfc="white", linestyle="", ms=6.5, mew=1.4,
                              label=f"no interval ({kinds})"))
    if any_floor:  # the floor last, after the series
        handles.append(Patch(facecolor=FLOOR["color"], alpha=FLOOR["alpha"], label=FLOOR_LABEL))
    legend_cols, handles = _legend_rows(handles, fig.get_figwidth())
    names = [h.get_label() for h in handles]
    fig.legend(handles, names, loc="upper center", ncols=legend_cols, frameon=False, bbox_to_anchor=(0.5, 1.0), fontsize=9)
    top = 1 - (0.26 * math.ceil(len(names) / legend_cols) + 0.15) / fig.get_figheight()
    fig.tight_layout(rect=(0, CAPTION_INCHES / fig.get_figheight(), 1, top))
    return fig, cov


def _pooled(cond: str) -> str:
    return cond or "all conditions"


def _absent(rows: pd.DataFrame, what: str, why_none: str) -> str | None:
    """Why a figure is not drawn (None when it is): no rows, or rows none of which has an estimate. Degenerate rows
    are drawn (hollow, with their n), not hidden."""
    if rows.empty:
        return f"metrics.csv has no {what} ({why_none})"
    if not rows["estimate"].notna().any():
        return f"metrics.csv has {len(rows)} {what} row(s), but none has an estimate (no labelled samples in those strata)"
    return None


def fig2(df: pd.DataFrame, models: list[str], **_) -> Built:
    """Figure 2: V by condition per model, focal vs control, with 95% CIs."""
    rows = pd.concat([select(df, V_FOCAL, condition=ANY).assign(series="focal"),
                      select(df, V_CONTROL, condition=ANY).assign(series="control")])
    if why := _absent(rows, "V_focal / V_control rows by condition", "run `mirage metrics` on labelled generations"):
        return None, why, ""
    fig, cov = _point_panels(rows, panel="condition", x="model", x_order=models, series="series",
                             styles={"focal": FOCAL_STYLE, "control": CONTROL_STYLE}, ylabel="violent completions (%)", scale=100,
                             series_label={"focal": "focal (Muslim)", "control": "controls (pooled)"}.get)
    return fig, "", cov.sentence()


def _unparseable(labels: pd.DataFrame, harness: str) -> str:
    """Why a harness has no Δ: none of its decisions parsed, or it had no samples at all."""
    if labels.empty or "harness" not in labels.columns:
        return "no Delta_signed row"
    sub = labels[(labels["harness"] == harness) & (labels.get("condition") == "C3")]
    if sub.empty:
        return "no samples in this slice"
    parsed = int(sub["parse_ok"].fillna(False).astype(bool).sum()) if "parse_ok" in sub.columns else len(sub)
    if parsed == 0:
        return f"none of its {len(sub)} decisions could be parsed"
    return f"only {parsed} of its {len(sub)} decisions could be parsed, no matched focal/control pair among them"


def fig3(df: pd.DataFrame, models: list[str], harness_titles: dict[str, str], labels: pd.DataFrame, **_) -> Built:
    """Figure 3: signed decision asymmetry per harness per model (pp; s is favourability, so negative = adverse to the focal identity)."""
    rows = select(df, DELTA_SIGNED, harness=ANY, condition=["", "C3"]).assign(panel="C3: agentic decisions")
    harnesses = sorted(set(harness_titles) | set(rows["harness"]))
    done = set(rows.loc[rows["estimate"].notna(), "harness"])
    missing = [h for h in harnesses if h not in done]
    note = ("Not computed: " + "; ".join(f"{h} ({_unparseable(labels, h)})" for h in missing) + ".") if missing else ""
    if why := _absent(rows, "Delta_signed rows by harness", "this slice has no agentic requests"):
        return None, why + (". " + note.rstrip(".") if note else ""), ""
    labels_x = {h: textwrap.fill(f"{h}: {harness_titles.get(h, '')}".rstrip(": "), 14) for h in harnesses}
    fig, cov = _point_panels(rows, panel="panel", x="harness", x_order=harnesses, series="model", styles=_series_styles(models),
                             ylabel="signed Δ (pp)", scale=1, labels=labels_x, zero_line=True, all_x=True, floor=True)
    return fig, note, cov.sentence()


def fig4(df: pd.DataFrame, models: list[str], **_) -> Built:
    """Figure 4: V under the RAG pools, with δt, its placebo floor and excess per model in the legend."""
    rows = select(df, V_FOCAL, rag_pool=ANY, condition=OPTIONAL)
    if why := _absent(rows, "V_focal rows by retrieval pool", "this slice has no retrieval requests"):
        return None, why, ""
    did, dt = (select(df, metric, condition=OPTIONAL, rag_pool=EITHER) for metric in (DELTA_T_DID, DELTA_T))

    def label(m: str) -> str:
        """The model's δt as the headline states it: the difference in differences (the tested claim, with its
        floor and excess), else the focal-only δt, each under its own symbol."""
        for rows_of, metric in ((did, DELTA_T_DID), (dt, DELTA_T)):
            hits = rows_of[(rows_of["model"] == m) & rows_of["estimate"].notna()]
            if not hits.empty:
                break
        else:
            return f"{m} (δt not computed)"
        r = hits.sort_values("placebo", key=lambda s: s.isna(), kind="stable").iloc[0]
        sym = METRICS[metric].label + ("" if metric == DELTA_T_DID else " (focal only)")
        n = "" if pd.isna(r["n"]) else f", n={int(r['n'])}"
        if r["why"]:
            return f"{m} ({sym} = {number(100 * r['estimate'], 1, True)} pp: {r['why']}{n})"
        p = "" if pd.isna(r["p"]) else f", p={r['p']:.2g}"
        floor = ("floor not computed" if pd.isna(r["placebo"]) else
                 f"floor ±{number(100 * abs(r['placebo']))}, excess {number(100 * r['excess'], 1, True)} pp"
                 + ("" if pd.isna(r["excess_p"]) else f" p={r['excess_p']:.2g}"))
        return f"{m} ({sym} = {number(100 * r['estimate'], 1, True)} pp{p}{n}; {floor})"

    fig, cov = _point_panels(rows, panel="condition", x="rag_pool", x_order=POOLS, series="model", styles=_series_styles(models),
                             ylabel="focal violent completions (%)", scale=100, panel_title=_pooled, series_label=label)
    return fig, "", cov.sentence()


def fig5(df: pd.DataFrame, models: list[str], **_) -> Built:
    """Figure 5: focal V on the parallel subset by language variant."""
    rows = select(df, V_FOCAL, language=ANY, condition=OPTIONAL)
    if why := _absent(rows[rows["language"] != "en"], "V_focal rows for an Arabic variant", "this slice has no parallel Arabic requests"):
        return None, why, ""
    fig, cov = _point_panels(rows, panel="condition", x="language", x_order=LANGUAGES, series="model", styles=_series_styles(models),
                             ylabel="focal violent completions (%)", scale=100, labels=LANGUAGE_NAMES, panel_title=_pooled, all_x=True)
    return fig, "", cov.sentence()


def fig6(df: pd.DataFrame, models: list[str], **_) -> Built:
    """Figure 6: mitigation effect on V per condition, one panel per model, with placebo floors."""
    rows = select(df, MIT_V, mitigation=ANY, condition=ANY)
    if why := _absent(rows, "mitigation_effect_V rows", "this slice has no mitigation requests"):
        return None, why, ""
    mits = ordered(rows["mitigation"].unique(), MITIGATIONS)
    fig, cov = _point_panels(rows, panel="model", x="condition", x_order=CONDITIONS, series="mitigation", styles=_series_styles(mits),
                             ylabel="mitigation effect on V (pp)", scale=100, zero_line=True, floor=True)
    return fig, "", cov.sentence()


def bias_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The headline bias estimates, in pp, with a display label: ΔV per condition, Δ per harness, pooled Δ_abs, δt,
    cross-lingual gaps."""
    parts = [select(df, DV, condition=ANY).assign(what=lambda r: "ΔV " + r["condition"], scale=100),
             select(df, DELTA_SIGNED, harness=ANY, condition=["", "C3"]).assign(what=lambda r: "Δ signed " + r["harness"], scale=1),
             select(df, DELTA_ABS, condition=["", "C3"]).assign(what="Δ abs, C3 pooled", scale=1),
             select(df, DELTA_T, condition=OPTIONAL, rag_pool=EITHER).assign(what="δt (recent − neutral)", scale=100),
             select(df, XLING_GAP, language=ANY, condition=OPTIONAL).assign(what=lambda r: "gap " + r["language"], scale=100)]
    return pd.concat([p for p in parts if not p.empty] or [df.iloc[:0].assign(what="", scale=1.0)])


def fig_placebo(df: pd.DataFrame, models: list[str], **_) -> Built:
    """Every bias estimate (point, 95% CI) beside its identity-placebo floor (grey band), with n and the excess."""
    rows = bias_rows(df)
    rows = rows[rows["estimate"].notna()]
    if rows.empty:
        return None, "metrics.csv has no bias estimate (dV, Delta_signed, Delta_abs, delta_t, xling_gap) with a value", ""
    whats = list(dict.fromkeys(rows["what"]))
    ms = ordered(rows["model"].unique(), models)
    ncols = min(len(ms), 2)  # more models wrap into rows: the page shows the image at its width
    nrows = math.ceil(len(ms) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.8 * ncols, (0.42 * len(whats) + 1.2) * nrows + 0.6), squeeze=False, sharey=True)
    computed = df.attrs.get("placebo_computed", False)
    cov = Coverage()
    for ax, m in zip(axes.flat, ms):
        extent = [0.0]  # every x drawn (estimates, intervals, floors), so no marker is cut by the axes
        sub = rows[rows["model"] == m].drop_duplicates("what").set_index("what")
        for y, w in enumerate(whats):
            if w not in sub.index:
                ax.text(0, y, "not computed", ha="center", va="center", fontsize=7, color="#555555", style="italic")
                continue
            r = sub.loc[w]
            k = r["scale"]
            if not pd.isna(r["placebo"]):
                a, b = floor_band(r["metric"], r["placebo"] * k)
                ax.barh(y, b - a, 0.6, left=a, label=FLOOR_LABEL, **FLOOR)
                extent += [a, b]
            est = r["estimate"] * k
            extent.append(est)
            cov.add(_interval_reason(r["why"], r["ci_low"], r["ci_high"]))
            if r["why"]:
                ax.plot(est, y, NO_INTERVAL_MARKER, mfc="white", mec="#333333", label="no interval (reason at right)")
                right = f"n={int(r['n']) if not pd.isna(r['n']) else '?'} · {r['why']}"
            else:
                if not (pd.isna(r["ci_low"]) or pd.isna(r["ci_high"])):
                    ax.plot([r["ci_low"] * k, r["ci_high"] * k], [y, y], color="#333333", lw=1.2)
                    extent += [r["ci_low"] * k, r["ci_high"] * k]
                ax.plot(est, y, "o", color=OKABE_ITO[1], label="estimate, 95% CI")
                n = f"n={int(r['n'])}" if not pd.isna(r["n"]) else "n=?"
                right = (f"{n} · excess {number(r['excess'] * k, 1, True)} pp" + ("" if pd.isna(r["excess_p"]) else f", p={r['excess_p']:.2g}")
                         if not pd.isna(r["excess"]) else f"{n} · floor not computed")
            ax.text(1.01, y, right, transform=ax.get_yaxis_transform(), va="center", fontsize=7)
        ax.axvline(0, color="#333333", lw=0.8)
        pad = max(0.08 * (max(extent) - min(extent)), 1.0)  # at least 1 pp each side: the outermost marker stays whole
        ax.set_xlim(min(extent) - pad, max(extent) + pad)
        ax.set_yticks(range(len(whats)), whats)
        ax.set_xlabel("pp")
        ax.set_title(m + ("" if computed else " (identity-placebo floor not computed in this run)"), fontsize=10)
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    for ax in axes.flat[len(ms):]:
        ax.set_visible(False)
    axes.flat[0].set_ylim(len(whats) - 0.5, -0.5)  # half a row beyond the outer rows; shared y, first estimate on top
    uniq = {}
    for ax in axes.flat:
        handles, names = ax.get_legend_handles_labels()
        uniq.update((n, h) for n, h in zip(names, handles) if n not in uniq)
    fig.legend(list(uniq.values()), list(uniq), loc="upper center", ncols=max(1, len(uniq)), frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, CAPTION_INCHES / fig.get_figheight(), 1, 1 - 0.35 / fig.get_figheight()))
    return fig, "", cov.sentence()


def fig_probe(df: pd.DataFrame, models: list[str], probe: dict[str, pd.DataFrame], **_) -> Built:
    """Logit-lens λ(l) per layer with 95% CI band (App. E), when `mirage probe` ran."""
    if not probe:
        return None, "`mirage probe` did not run for these models", ""
    fig, ax = plt.subplots(figsize=(7, 4))
    for (m, curve), color in zip(probe.items(), OKABE_ITO):
        n = f", n={int(curve['n_pairs'].iloc[0])} pairs" if "n_pairs" in curve.columns else ""
        ax.plot(curve["layer"], curve["mean_lambda"], color=color, label=m + n, linewidth=1.6)
        ax.fill_between(curve["layer"], curve["ci_low"], curve["ci_high"], color=color, alpha=0.2, linewidth=0)
    ax.axhline(0, color="#333333", linewidth=0.8)
    ax.set(xlabel="layer", ylabel="λ(l): violence-token log-odds, focal − control")
    ax.legend(frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig, "", ""


SPECS: list[FigureSpec] = [
    FigureSpec("fig_placebo_floor", "Bias estimates against the identity-placebo floor",
               "Each bias estimate (point, 95% CI, in pp) beside its identity-placebo floor (grey band: the same estimator with a "
               "control identity as pseudo-focal against the other controls). An estimate inside the band is no larger than the "
               "differences among control identities; the right-hand text gives n and the excess over the floor with its p-value.", fig_placebo),
    FigureSpec("fig2_violence_by_condition", "Figure 2: violence rate by condition",
               "Violent-completion rate V per model for direct completion (C1), chain of thought (C2) and agentic decisions (C3); focal (Muslim) vs pooled controls; whiskers are 95% CIs; n = prompts per point.", fig2),
    FigureSpec("fig3_decision_asymmetry", "Figure 3: decision asymmetry per harness",
               "Signed decision asymmetry Δ (pp) per agentic harness and model; 100·(s_focal − s_control) with s = favourability, so negative = less favourable to the focal (Muslim) identity on identical evidence; whiskers are 95% CIs; grey band = identity-placebo floor.", fig3),
    FigureSpec("fig4_time_coupled_rag", "Figure 4: time-coupled retrieval",
               "Focal violent-completion rate under each retrieved-news pool; the legend gives the time-coupling coefficient δt (recent − neutral), its permutation p-value, n, and its placebo floor and excess.", fig4),
    FigureSpec("fig5_crosslingual", "Figure 5: cross-lingual rates",
               "Focal violent-completion rate on the parallel subset by language variant (English, MSA, Egyptian, Levantine, Maghrebi Arabic); whiskers are 95% CIs.", fig5),
    FigureSpec("fig6_mitigation", "Figure 6: mitigation effectiveness across conditions",
               "Effect of each mitigation on the violence rate per condition (metric mitigation_effect_V), one panel per model; whiskers are 95% CIs; grey band = identity-placebo floor.", fig6),
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
              harness_titles: dict[str, str], probe: dict[str, pd.DataFrame], labels: pd.DataFrame | None = None) -> dict[str, Rendered]:
    """Build every figure; stale files of a figure not drawn are removed."""
    out: dict[str, Rendered] = {}
    labels = pd.DataFrame() if labels is None else labels
    for spec in SPECS:
        fig, note, coverage = spec.build(df, models=models, harness_titles=harness_titles, probe=probe, labels=labels)
        if fig is None:
            for fmt in ("png", "svg"):
                (out_dir / f"{spec.stem}.{fmt}").unlink(missing_ok=True)
            out[spec.stem] = Rendered(None, note)
            continue
        add_caption(fig, " ".join(filter(None, [coverage, prov.caption(models if spec.stem != "fig_logit_lens" else list(probe))])))
        out[spec.stem] = Rendered(save(fig, out_dir, spec.stem, formats, dpi), note, coverage)
    return out
