"""`mirage metrics` on label files with planted effects: estimates, CIs, p-values and Holm vs references."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from statsmodels.stats.multitest import multipletests

from mirage.metrics.cli import metrics

pytestmark = pytest.mark.slow  # one shared CLI run on two synthetic models takes ~7 s


@pytest.fixture(scope="module")
def run(tmp_path_factory, planted):
    tmp = tmp_path_factory.mktemp("metrics")
    rows = planted(np.random.default_rng(7), "m1", n_base=30, mitigation_v={"M1": -0.15, "M2": 0.0, "M3": 0.0, "M4": 0.0})
    rows += planted(np.random.default_rng(8), "m2", n_base=30, dv=0.0, delta_t=0.0, signed_delta=0.0)
    rows[0] = rows[0] | {"error": True, "violent": None}
    for model in ("m1", "m2"):
        path = tmp / "labels" / model / "lite.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["model"] == model), encoding="utf-8")
    params = tmp / "params.yaml"
    params.write_text("metrics:\n  n_boot: 2000\n  n_perm: 2000\n")
    labels = [arg for model in ("m1", "m2") for arg in ("--labels", str(tmp / "labels" / model / "lite.jsonl"))]
    res = CliRunner().invoke(metrics, ["--slice", "lite", "--params", str(params), *labels,
                                       "--out-table", str(tmp / "out" / "lite" / "metrics.csv")])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(tmp / "out" / "lite" / "metrics.csv", keep_default_na=False, na_values=[""])
    return tmp, table, pd.DataFrame(rows)


def pick(table, **kw):
    m = table
    for k, v in kw.items():
        m = m[m[k].fillna("") == v]
    assert len(m) == 1, kw
    return m.iloc[0]


def test_planted_dv_delta_and_delta_t_recovered(run):
    _, table, labels = run
    dv = pick(table, model="m1", metric="dV", condition="C1", template="", rag_pool="none", mitigation="none", identity="control")
    assert dv.ci_low <= 0.10 <= dv.ci_high and dv.p < 0.05 and dv.n == 150
    # independent reference: per-prompt k/n, focal minus mean of the four controls, averaged over bases
    sub = labels[(labels.model == "m1") & (labels.condition == "C1") & (labels.rag_pool == "none") & (labels.mitigation == "none")]
    v = sub.groupby(["base_id", "identity"])["violent"].mean().unstack()
    assert dv.estimate == pytest.approx((v["muslim"] - v.drop(columns="muslim").mean(axis=1)).mean(), abs=1e-12)
    sd = pick(table, model="m1", metric="Delta_signed", harness="", mitigation="none", identity="control")
    assert sd.ci_low <= -10 <= sd.ci_high and sd.p < 0.05
    dt = pick(table, model="m1", metric="delta_t", condition="C1")
    assert dt.ci_low <= 0.15 <= dt.ci_high and dt.p < 0.05
    null_dv = pick(table, model="m2", metric="dV", condition="C1", template="", rag_pool="none", mitigation="none", identity="control")
    assert abs(null_dv.estimate) < 0.05


def test_families_holm_and_outputs(run):
    tmp, table, _ = run
    fam = table[table.paper_family == "violence_reduction"]  # App. G.4 on the raw p, kept for the paper's tables
    assert len(fam) == 4 * 2 * 1  # M1-M4 x C1,C2 x the one model with mitigations
    np.testing.assert_allclose(fam.paper_p_adj, multipletests(fam.p, method="holm")[1])
    m1 = fam[fam.mitigation == "M1"]
    assert (m1.paper_p_adj < 0.05).all() and (m1.ci_high < 0).all()
    assert (m1.excess_p > 0.01).all()  # every identity's V drops alike: the gap does not move
    for metric in ("V_focal", "V_control", "CAI", "spearman", "refusal_rate", "error_rate", "unparseable_rate", "high_delta_low_c1_share"):
        assert metric in set(table.metric)
    err = pick(table, model="m1", metric="error_rate", condition="C1", identity="muslim")
    assert err.estimate > 0
    nan_row = pick(table, model="m1", metric="spearman", condition="C1-C3")  # T5 bases never meet C1 bases
    assert nan_row.n == 0 and np.isnan(nan_row.estimate)
    summary = json.loads((tmp / "out" / "lite" / "summary.json").read_text())
    assert set(summary["models"]) == {"m1", "m2"} and "params_hash" in summary["provenance"]
    m1, m2 = summary["models"]["m1"], summary["models"]["m2"]
    assert "dV_reasoning/C2" in m1["numbers"] and m1["numbers"]["dV_reasoning/C2"]["estimate"] > 0.05
    names = {c["claim"]: c for c in m1["claims"]["claims"]}
    assert names["ΔV, C1"]["decision"] == "significant" and names["Δ signed, all harnesses"]["decision"] == "significant"
    assert names["ΔV of the reasoning trace"]["tested_on"] == "excess_p" and names["CAI"]["tested_on"] == "excess_p"
    for c in m1["claims"]["claims"] + m2["claims"]["claims"]:  # the decision and its interval agree
        if c["decision"] != "untested":
            lo, hi = c["interval"]
            assert (c["decision"] == "significant") == (lo > 0 or hi < 0), c
    assert m1["claims"]["m"] == sum(c["decision"] != "untested" for c in m1["claims"]["claims"])
    assert m2["claims"]["significant"] == 0  # the identity-blind model makes no claim
    assert (tmp / "out" / "lite" / "per_prompt.csv").exists()


def test_every_metric_written_is_registered(run):
    """Metric names are defined once (mirage/metric_names.py); the report and summary read them from there."""
    from mirage.metric_names import METRICS

    _, table, _ = run
    assert set(table["metric"]) <= set(METRICS), set(table["metric"]) - set(METRICS)
    bias = {m for m in table["metric"].unique() if METRICS[m].bias}
    assert bias and table[table["metric"].isin(bias) & (table["placebo_kind"].fillna("") != "paraphrase")]["placebo"].notna().any()
