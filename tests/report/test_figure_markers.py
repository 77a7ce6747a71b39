"""Figures say what they draw (issue 35): a legend entry shows the marker its series is drawn with (a series without
any interval only as hollow diamonds), and no point is cut by an axis of the placebo-floor plot."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

sys.path.insert(0, str(Path(__file__).parent))
import synthetic  # noqa: E402

from mirage.report import figures  # noqa: E402
from mirage.report.data import load_metrics  # noqa: E402


def _metrics(tmp_path, edit) -> pd.DataFrame:
    rows = synthetic.write_run(tmp_path, probe=False)
    for r in rows:
        edit(r)
    pd.DataFrame(rows).to_csv(tmp_path / "m.csv", index=False)
    return load_metrics(tmp_path / "m.csv")


def _drawn_markers(fig) -> set[tuple[str, str]]:
    """(marker, face) of every point drawn in the panels: face 'hollow' or 'filled'."""
    out = set()
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_marker() not in (None, "None", "", " ") and len(line.get_xdata()):
                out.add((line.get_marker(), "hollow" if line.get_markerfacecolor() in ("white", "w", (1, 1, 1, 1)) else "filled"))
    return out


def _legend_markers(fig) -> dict[str, tuple[str, str]]:
    leg = fig.legends[0]
    return {t.get_text(): (h.get_marker(), "hollow" if h.get_markerfacecolor() in ("white", "w", (1, 1, 1, 1)) else "filled")
            for t, h in zip(leg.get_texts(), leg.legend_handles) if isinstance(h, Line2D)}


def test_a_series_without_intervals_is_a_hollow_diamond_in_the_legend_too(tmp_path):
    def degenerate(r):  # the demo: every mitigation row has n = 1, so no point has an interval
        if r["metric"] == "mitigation_effect_V":
            r.update(n=1, estimate=0.0, ci_low=0.0, ci_high=0.0)

    fig, _, _ = figures.fig6(_metrics(tmp_path, degenerate), synthetic.MODELS)
    assert _drawn_markers(fig) == {("D", "hollow")}
    legend = _legend_markers(fig)
    assert set(legend.values()) == {("D", "hollow")} and len(legend) >= 3  # every mitigation, and the 'no interval' entry


def test_series_with_intervals_keep_their_filled_shapes(tmp_path):
    fig, _, _ = figures.fig2(_metrics(tmp_path, lambda r: None), synthetic.MODELS)
    legend = _legend_markers(fig)
    assert legend["focal (Muslim)"] == ("o", "filled") and legend["controls (pooled)"] == ("s", "filled")
    assert {m for m, _ in _drawn_markers(fig)} >= {"o", "s"}


def test_no_point_of_the_placebo_plot_is_cut_by_an_axis(tmp_path):
    def extreme(r):  # the demo's case: few rows, no floors, no intervals to widen the axes
        r.update(flag="n_too_small", n=1, ci_low=None, ci_high=None, placebo=None, excess=None)

    df = _metrics(tmp_path, extreme)
    df = df[(df["metric"] == "dV") & df["condition"].isin(["C1", "C2"])]
    fig, _, _ = figures.fig_placebo(df, synthetic.MODELS)
    fig.canvas.draw()
    checked = 0
    for ax in fig.axes:
        box = ax.get_window_extent()
        for line in ax.get_lines():
            if line.get_marker() in (None, "None", "", " "):
                continue
            radius = line.get_markersize() / 2 * fig.dpi / 72 + line.get_markeredgewidth() * fig.dpi / 72
            for x, y in line.get_xydata():
                px, py = ax.transData.transform((x, y))
                assert box.x0 <= px - radius and px + radius <= box.x1, (ax.get_title(), x, ax.get_xlim())
                assert box.y0 <= py - radius and py + radius <= box.y1, (ax.get_title(), y, ax.get_ylim())
                checked += 1
    assert checked >= 4
