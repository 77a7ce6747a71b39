"""Religion x gender cells (metrics.intersectional): a gap planted for women-cued prompts only is claimed in that cell,
the men's cell stays within its identity-placebo floor, and the cells join the headline Holm family only when on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mirage.config.metrics import MetricsParams
from mirage.metrics import claims
from mirage.metrics.compute import compute_metrics
from mirage.report import tables
from mirage.report.data import load_metrics


def cued_labels(planted, effect: float) -> pd.DataFrame:
    """Baseline C1/C2 rows of the planted fixture (no overall gap); every other base prompt's cue is a woman's name
    (gender f), the rest a man's (m); the focal identity's violence rises by `effect` on the women-cued prompts."""
    rng = np.random.default_rng(7)
    rows = [r for r in planted(rng, n_base=30, n_samples=5, dv=0.0) if r["condition"] in ("C1", "C2")
            and r["rag_pool"] == "none" and r["mitigation"] == "none"]
    df = pd.DataFrame(rows)
    df["gender"] = np.where(df["base_id"].str[-1].astype(int) % 2 == 0, "f", "m")
    hit = df["focal"] & (df["gender"] == "f")
    df.loc[hit, "violent"] = (rng.random(int(hit.sum())) < 0.2 + effect).astype(int)
    return df


def test_a_gap_planted_in_one_cell_is_found_there_and_the_other_cell_stays_on_its_floor(planted, tmp_path):
    p = MetricsParams(n_boot=500, n_perm=500, intersectional=True)
    table, _ = compute_metrics(cued_labels(planted, 0.3), p)
    cells = table[(table["gender"] != "") & (table["metric"] == "dV") & (table["condition"] == "C1")].set_index("gender")
    women, men = cells.loc["f"], cells.loc["m"]
    assert women["n"] == men["n"] == 75  # 150 base prompts, half of each gender
    assert abs(women["estimate"] - 0.3) < 0.08 and women["excess_ci_low"] > 0 and women["ci_low"] > 0
    assert women["family"] == claims.FAMILY and women["p_adj"] <= p.alpha
    assert men["family"] == claims.FAMILY and men["p_adj"] > p.alpha
    assert men["excess_ci_low"] < 0 < men["excess_ci_high"] and abs(men["placebo"]) < 0.05
    assert claims.describe(women.to_dict() | {"gender": "f"}) == "ΔV of a religion × gender cell, C1, gender f"
    rates = table[(table["gender"] == "f") & (table["condition"] == "C1") & (table["metric"].isin(["V_focal", "V_control"]))]
    assert set(rates["identity"]) == {"muslim", "control"} and rates["ci_low"].notna().all()
    # The report shows the cells as a table of their own (and keeps them out of the pooled tables).
    table.to_csv(tmp_path / "metrics.csv", index=False)
    df = load_metrics(tmp_path / "metrics.csv")
    inp = tables.Inputs(df, ["m"], pd.DataFrame(), pd.DataFrame(), None)
    shown = tables.table_gender_cells(inp).display.set_index("gender")
    assert shown.loc["f", "C1 ΔV"].startswith("27.5 [") and "placebo floor" in shown.loc["f", "C1 ΔV"]
    assert "n=75" in shown.loc["m", "C2 V focal"]
    pooled = tables.table3(inp).display.iloc[0]["C1 ΔV"]
    assert "n=150" in pooled and pooled.startswith("14.0 [")



def test_cells_are_off_by_default_and_leave_the_headline_family_alone(planted):
    labels = cued_labels(planted, 0.3)
    off, _ = compute_metrics(labels, MetricsParams(n_boot=200, n_perm=200))
    on, _ = compute_metrics(labels, MetricsParams(n_boot=200, n_perm=200, intersectional=True))
    assert (off["gender"] == "").all()
    head_off, head_on = off[off["family"] == claims.FAMILY], on[on["family"] == claims.FAMILY]
    assert len(head_on) == len(head_off) + 2 * 2  # two conditions x two cells
    same = head_on[head_on["gender"] == ""][["metric", "condition", "estimate", "excess_p"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(same, head_off[["metric", "condition", "estimate", "excess_p"]].reset_index(drop=True))
