"""Placebo floors, frame-level relabelling tests, cluster-bootstrap intervals, DiD, CAI at zero, the structural flag,
missing data, the headline error budget and the power planner, on simulated label sets whose truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mirage.config.metrics import MetricsParams
from mirage.metrics import claims
from mirage.metrics.compute import Contrast, MetricsBuilder, compute_metrics, g_abs, g_signed, pooled
from mirage.metrics.power import Design, Heterogeneity, power
from mirage.metrics.stats import ClusterBootstrap, Clusters, bootstrap_stat

IDS = ("muslim", "christian", "jewish", "hindu", "secular")


def label_rows(rng, model="m", n_base=30, n_samples=5, templates=("T1", "T2"), frames=10, v=0.2, dv=0.0,
               s=0.6, delta=0.0, rag=None, c1_rate=None, structural=False, paraphrase=False, mitigations=(),
               refusal=None):
    """Label rows: C1/C2 (+ RAG pools {pool: (focal add, control add)}), C3 H1/H2 (+ M1.., structural).
    `refusal` {identity: rate}: that share of samples is refused (a refusal is non-violent; in C3 it has no decision)."""
    rows = []

    shared: dict[str, list[int]] = {}  # one request -> one set of completions (the store shares them)

    def add(cond, tmpl, harness, base, frame, ident, pool, mit, prob, score=False, req=None, para=False):
        draws = [int(rng.random() < prob) for _ in range(n_samples)]
        if req is not None:
            draws = shared.setdefault(req, draws)
        for k, x in enumerate(draws):
            refused = rng.random() < (refusal or {}).get(ident, 0.0)
            rows.append({"model": model, "condition": cond, "template": tmpl, "harness": harness, "base_id": base,
                         "frame_id": frame, "prompt_id": f"{base}-{ident}-{para}", "identity": ident,
                         "focal": ident == "muslim", "language": "en", "rag_pool": pool, "mitigation": mit,
                         "request_id": req or f"{cond}-{base}-{ident}-{pool}-{mit}-{para}", "paraphrase": para,
                         "sample_index": k, "violent": 0 if score or refused else x,
                         "score": None if refused or not score else float(x),
                         "violent_reasoning": x if cond == "C2" else None, "parse_ok": not refused, "refusal": refused,
                         "error": False})

    for t in templates:
        for i in range(n_base):
            base, frame, p0 = f"{t}b{i}", f"{t}f{i % frames}", rng.beta(4 * v, 4 * (1 - v))
            for ident in IDS:
                p = min(1.0, p0 + (dv if ident == "muslim" else 0.0))
                add("C1", t, None, base, frame, ident, "none", "none", p if c1_rate is None else c1_rate)
                add("C2", t, None, base, frame, ident, "none", "none", p)
                if paraphrase and ident in ("muslim", "christian"):
                    add("C1", t, None, base, frame, ident, "none", "none", p, para=True)
                for pool, (fa, ca) in (rag or {}).items():
                    add("C1", t, None, base, frame, ident, pool, "none", min(1.0, p + (fa if ident == "muslim" else ca)))
    for h in ("H1", "H2"):
        for i in range(n_base):
            base, q0 = f"{h}b{i}", rng.beta(4 * s, 4 * (1 - s))
            for ident in IDS:
                q = max(0.0, q0 + (delta if ident == "muslim" else 0.0))
                add("C3", "T5", h, base, f"{h}c{i}", ident, "none", "none", q, score=True)
                for mit in mitigations:
                    add("C3", "T5", h, base, f"{h}c{i}", ident, "none", mit, q, score=True)
                if structural:
                    add("C3", "T5", h, base, f"{h}c{i}", ident, "none", "structural", q0, score=True,
                        req=f"C3-{base}-structural")
    df = pd.DataFrame(rows)
    for col in ("violent", "score", "violent_reasoning"):
        df[col] = pd.to_numeric(df[col]).astype(float)
    return df


P = MetricsParams(n_boot=1000, n_perm=1000)


def pick(table, **kw):
    m = table
    for k, v in kw.items():
        m = m[m[k].fillna("") == v] if isinstance(v, str) else m[m[k] == v]
    assert len(m) == 1, (kw, len(m))
    return m.iloc[0]


def simulate_contrasts(n_audits, n_frames, per_frame, effect, seed, params=P, fxi=0.0):
    """p, excess_p and intervals of Delta_abs and dV over simulated audits (focal shift `effect`; frames of
    `per_frame` base prompts sharing a frame x identity effect of sd `fxi`)."""
    rng = np.random.default_rng(seed)
    n = n_frames * per_frame
    frames = np.repeat(np.arange(n_frames), per_frame).astype(str)
    bases = np.arange(n).astype(str)
    b = MetricsBuilder(params, dict(zip(bases, frames)))
    out = []
    for a in range(n_audits):
        rate = rng.beta(0.8, 3.2, (n, 1, 1)) + np.repeat(rng.normal(0, fxi, (n_frames, 5, 1)), per_frame, axis=0)
        rate[:, 0] += effect
        y = (rng.random((n, 5, 5)) < np.clip(rate, 0, 1)).mean(axis=2)
        u = b.units(np.zeros(n), bases, ("sim", a))
        one = [np.ones(n, bool)]
        t, q = pooled(g_signed(y))
        dv = b.contrast(Contrast(t, q), one, u, ("dv", a))[0]
        t, q = pooled(g_abs(y))
        da = b.contrast(Contrast(t, q, scale=100.0), one, u, ("da", a))[0]
        out.append({"dv_p": dv.p, "da_p": da.p, "da_excess_p": da.excess_p,
                    "da_cover": da.excess_ci_low <= 0 <= da.excess_ci_high, "da_raw": da.estimate,
                    "dv_cover": dv.ci_low <= effect <= dv.ci_high})
    return pd.DataFrame(out)


@pytest.mark.slow
def test_identity_blind_excess_covers_zero_and_tests_are_calibrated():
    sim = simulate_contrasts(400, 40, 1, 0.0, 1)
    # the raw Delta_abs of a blind model is far from 0 (the paper's noise floor) ...
    assert sim["da_raw"].mean() > 5
    # ... its excess over the identity placebo is not: 95 % CIs cover 0 at about the nominal rate
    assert 0.90 <= sim["da_cover"].mean() <= 0.985
    for col in ("dv_p", "da_p", "da_excess_p"):  # se of a rejection rate at 0.05 over 400 audits: 0.011
        assert 0.015 <= (sim[col] <= 0.05).mean() <= 0.085, col


@pytest.mark.slow
def test_frame_by_identity_effects_keep_the_size_of_frame_level_tests():
    """Identity effects that vary by frame (mean 0, sd 0.1) correlate the base prompts of a frame: relabelling within
    base prompts (flat) rejects a true null far too often, relabelling within frames does not."""
    clustered = simulate_contrasts(300, 20, 5, 0.0, 2, fxi=0.1)
    flat = simulate_contrasts(300, 20, 5, 0.0, 2, MetricsParams(n_boot=500, n_perm=1000, resampling="flat"), fxi=0.1)
    assert 0.015 <= (clustered["dv_p"] <= 0.05).mean() <= 0.09
    assert (flat["dv_p"] <= 0.05).mean() > 0.12
    assert 0.88 <= clustered["dv_cover"].mean() <= 0.985 and flat["dv_cover"].mean() < 0.88


def test_planted_effect_detected_and_planner_agrees():
    sim = simulate_contrasts(300, 40, 1, 0.12, 3)
    measured = (sim["dv_p"] <= 0.05).mean()
    assert measured > 0.5 and (sim["da_excess_p"] <= 0.05).mean() > 0.3
    assert sim["dv_cover"].mean() > 0.88  # the CI of dV covers the planted 0.12
    # the planner's generator differs (normal base effects, not Beta): same mean and sd of the per-prompt rate
    planned = power(Design(frames=((1,) * 40,), het=Heterogeneity(0.2, base_sd=0.179)), 0.12, 3000, 0)
    assert abs(planned - measured) <= 0.09  # 300 audits: se of the measured power ~ 0.028


def test_placebo_columns_and_planted_dv():
    labels = label_rows(np.random.default_rng(3), dv=0.15, delta=-0.3)
    table, _ = compute_metrics(labels, P)
    dv = pick(table, metric="dV", condition="C1", template="", rag_pool="none", identity="control", placebo_kind="identity")
    # pooled signed contrasts: the identity placebo averages to 0 by symmetry; the floor is in the CI / excess_p
    assert abs(dv.placebo) < 1e-12 and dv.excess == pytest.approx(dv.estimate)
    assert dv.excess_ci_low > 0 and dv.excess_p < 0.01 and dv.ci_method in ("percentile", "bca")
    assert dv.resampling == "clustered"
    per = pick(table, metric="dV", condition="C1", template="", rag_pool="none", identity="christian")
    assert per.placebo_kind == "identity" and np.isfinite(per.placebo) and per.excess_p < 0.05
    da = pick(table, metric="Delta_abs", harness="", mitigation="none", identity="control", placebo_kind="identity")
    assert da.placebo > 0 and da.excess > 0 and da.excess_ci_low > 0
    ub = pick(table, metric="Delta_abs_unbiased", harness="", mitigation="none", identity="control")
    assert 0 < ub.estimate <= da.estimate and ub.p < 0.05
    rea = pick(table, metric="dV_reasoning", condition="C2", template="", identity="control")
    assert rea.estimate > 0.05
    assert set(table.loc[table.metric == "CAI_reasoning", "condition"]) == {"C2/C1"}


def test_paraphrase_rows_are_placebos_only():
    labels = label_rows(np.random.default_rng(4), paraphrase=True)
    table, pp = compute_metrics(labels, P)
    para = table[table.placebo_kind == "paraphrase"]
    assert {"dV"} <= set(para.metric) and (para.n == 60).any()
    ident = pick(table, metric="dV", condition="C1", template="", rag_pool="none", identity="control", placebo_kind="identity")
    assert ident.n == 60  # paraphrase variants do not enter the identity metrics
    v = pick(table, metric="V_focal", condition="C1", template="", rag_pool="none", mitigation="none")
    orig = pp[(pp.condition == "C1") & pp.focal & ~pp.paraphrase & (pp.rag_pool == "none")]
    assert v.estimate == pytest.approx(orig.v.mean())


def test_delta_t_difference_in_differences():
    # generic time coupling: recent news raises violence for every identity by 0.15
    generic = label_rows(np.random.default_rng(5), n_base=40, rag={"neutral": (0, 0), "recent": (0.15, 0.15)})
    t, _ = compute_metrics(generic, P)
    dt, did = pick(t, metric="delta_t", condition="C1"), pick(t, metric="delta_t_did", condition="C1")
    assert dt.ci_low > 0 and dt.p < 0.01  # the paper's focal-only delta_t "finds" coupling
    assert did.ci_low <= 0 <= did.ci_high and abs(dt.placebo - 0.15) < 0.05 and dt.excess_ci_low <= 0 <= dt.excess_ci_high
    # identity-specific coupling: only the focal identity reacts
    specific = label_rows(np.random.default_rng(6), n_base=40, rag={"neutral": (0, 0), "recent": (0.15, 0.0)})
    t, _ = compute_metrics(specific, P)
    did = pick(t, metric="delta_t_did", condition="C1")
    assert did.ci_low > 0 and did.p < 0.01 and did.ci_low <= 0.15 <= did.ci_high


def test_cai_zero_denominator_and_fieller_interval():
    labels = label_rows(np.random.default_rng(7), n_base=20, c1_rate=0.0)
    table, _ = compute_metrics(labels, P)
    cai = pick(table, metric="CAI", template="")
    assert cai.flag == "zero_denominator" and np.isnan(cai.estimate) and np.isnan(cai.ci_low) and np.isnan(cai.p)
    assert cai.family == "headline" and np.isnan(cai.p_adj)  # a claim with no test: not counted in m
    labels = label_rows(np.random.default_rng(7), n_base=20, c1_rate=0.1, v=0.3)
    table, _ = compute_metrics(labels, P)
    cai = pick(table, metric="CAI", template="")
    assert cai.ci_method == "fieller" and cai.ci_low < cai.estimate < cai.ci_high and cai.ci_low > 1 and cai.p < 0.05
    assert (cai.ci_low > 1) == (cai.p <= 0.05)  # the interval inverts the same test


def test_structural_mitigation_flagged_and_blind_model_has_no_winner():
    labels = label_rows(np.random.default_rng(38), n_base=40, structural=True, mitigations=("M1", "M2"))
    table, _ = compute_metrics(labels, P)
    st = table[(table.mitigation == "structural") & table.metric.str.startswith(("Delta", "mitigation_effect_Delta"))]
    assert len(st) and (st.flag == "identical_by_construction").all() and st.p.isna().all()
    raw = pick(table, metric="Delta_abs", harness="", mitigation="structural", identity="control", placebo_kind="identity")
    assert raw.estimate == 0  # the built-in zero the flag guards against ranking
    ub = table[table.metric == "mitigation_effect_Delta_unbiased"]
    fam = ub[ub.paper_family == "asymmetry_reduction"]
    assert set(fam.mitigation) == {"M1", "M2"} and (fam.paper_p_adj > 0.05).all()  # blind model: no mitigation "wins"


def test_clustered_intervals_wider_than_flat_under_frame_effects():
    rng = np.random.default_rng(9)
    strata, frames = np.repeat(["T1", "T2"], 40), np.tile(np.repeat(np.arange(4), 10), 2).astype(str)
    x = rng.normal(0, 0.05, 80) + np.repeat(rng.normal(0, 0.3, 8), 10)  # a strong shared frame component
    widths = {}
    for name, labels in (("flat", None), ("clustered", frames)):
        boot = ClusterBootstrap(Clusters.of(strata, labels), 4000, np.random.default_rng(1))
        est = bootstrap_stat(x, lambda m: m[..., 0], boot, skew_threshold=99)
        widths[name] = est.ci_high - est.ci_low
    assert widths["clustered"] > 2 * widths["flat"]


def test_missing_variants_kept_and_refusals_as_results():
    """A base prompt keeps the variants it has; a focal identity refused more often shows as a refusal gap (tested and
    a headline claim), and the refusal bounds of dV bracket the primary estimate."""
    labels = label_rows(np.random.default_rng(12), n_base=60, refusal={"muslim": 0.25, "christian": 0.02, "jewish": 0.02,
                                                                       "hindu": 0.02, "secular": 0.02})
    drop = (labels.condition == "C1") & (labels.identity == "hindu") & labels.base_id.isin(["T1b0", "T1b1"])
    table, _ = compute_metrics(labels[~drop], P)
    dv = pick(table, metric="dV", condition="C1", template="", rag_pool="none", identity="control", placebo_kind="identity")
    assert dv.n == 120  # the two bases without a hindu variant stay, with three controls ...
    assert pick(table, metric="dV", condition="C1", template="", rag_pool="none", identity="hindu").n == 118  # ... not here
    gap = pick(table, metric="refusal_gap", condition="C1", template="")
    assert gap.estimate > 0.15 and gap.excess_p < 0.01 and gap.family == "headline"
    lo = pick(table, metric="dV_refusal_missing", condition="C1", template="")
    hi = pick(table, metric="dV_refusal_violent", condition="C1", template="")
    assert hi.estimate > dv.estimate and abs(lo.estimate) < 0.06  # refusals as non-violent pull dV down
    c3 = pick(table, metric="refusal_gap", condition="C3", harness="")
    assert c3.excess_p < 0.01
    adv = pick(table, metric="Delta_signed_refusal_adverse", harness="")
    fav = pick(table, metric="Delta_signed_refusal_favourable", harness="")
    assert adv.estimate < -5 < 5 < fav.estimate


def test_one_error_budget_per_model():
    """Every headline claim of a model shares one Holm correction on the p it is claimed on, and its interval (at the
    level Holm tested it) excludes 0 exactly when the claim is significant."""
    labels = label_rows(np.random.default_rng(13), n_base=40, dv=0.1, delta=-0.2, mitigations=("M1",),
                        rag={"neutral": (0, 0), "recent": (0.1, 0.0)})
    table, _ = compute_metrics(labels, P)
    fam = table[table.family == "headline"]
    assert {"dV", "dV_reasoning", "Delta_signed", "delta_t_did", "CAI", "dV_cot_amplification",
            "mitigation_effect_Delta_signed", "refusal_gap"} <= set(fam.metric)
    tested = fam[fam.p_adj.notna()]
    pc = tested.excess_p
    np.testing.assert_allclose(tested.p_adj, __import__("statsmodels.stats.multitest").stats.multitest.multipletests(
        pc, method="holm")[1])
    excludes = (tested.claim_ci_low > 0) | (tested.claim_ci_high < 0)
    assert (excludes == (tested.p_adj <= 0.05)).all()
    assert (tested.claim_level >= 0.95).all()
    assert pick(table, metric="dV", condition="C1", template="", rag_pool="none", identity="control",
                placebo_kind="identity").p_adj < 0.05
    dv = table[(table.metric == "dV") & (table.placebo_kind == "identity")]
    assert dv[dv.template.isin(["T1", "T2"]) | (dv.identity != "control") | (dv.rag_pool != "none")].family.eq("").all()
    assert claims.describe(fam.iloc[0]) == "ΔV, C1"


def test_flat_option_and_old_label_files():
    labels = label_rows(np.random.default_rng(10)).drop(columns=["frame_id", "paraphrase", "request_id"])
    table, _ = compute_metrics(labels, MetricsParams(n_boot=500, n_perm=500, resampling="flat"))
    bias = table[table.placebo_kind != ""]
    assert len(bias) and (table.loc[table.metric != "spearman", "resampling"] == "flat").all()
    tiny = label_rows(np.random.default_rng(11), n_base=1, templates=("T1",))
    t, _ = compute_metrics(tiny, P)
    row = pick(t, metric="dV", condition="C1", template="T1", identity="control")
    assert row.flag == "n_too_small" and np.isnan(row.ci_low) and np.isnan(row.p)


def test_cai_floor_is_the_controls_cot_amplification():
    """A chain of thought that adds violence for every identity raises CAI but not its excess over the controls' CAI,
    which is what the claim is tested on (false alarms at the nominal 5 %); a focal-only amplification is found, with
    an interval that inverts the test."""
    from mirage.metrics.compute import cai

    rng, p = np.random.default_rng(70), MetricsParams(n_boot=100, n_perm=1000)
    strata, n = np.repeat(["T1", "T2"], 40), 80
    bases = np.array([f"b{i}" for i in range(n)])
    raw, excess = [], []
    for rep in range(200):
        v2 = rng.binomial(5, np.repeat(rng.beta(1.2, 2.8, n)[:, None], 5, 1)) / 5  # C2: heterogeneous, every identity
        v1 = rng.binomial(5, np.full((n, 5), 0.1)) / 5
        b = MetricsBuilder(p, {f"b{i}": f"{strata[i]}f{i % 10}" for i in range(n)})
        est = cai(b, v2, v1, b.units(strata, bases, ("m", rep)), np.ones(n, bool), ("m", rep))
        raw.append(est.p <= 0.05)
        excess.append(est.excess_p <= 0.05)
        assert est.excess == pytest.approx(est.estimate - est.placebo)
    assert np.mean(raw) > 0.95 and np.mean(excess) < 0.085  # 5 % nominal; 0.085 is 2.6 binomial se above it
    blind = label_rows(np.random.default_rng(74), n_base=40, c1_rate=0.1, v=0.3)
    cai_row = pick(compute_metrics(blind, P)[0], metric="CAI", template="")
    assert cai_row.ci_low > 1 and claims.test_column("CAI") == "excess_p" and cai_row.family == "headline"
    specific = label_rows(np.random.default_rng(72), n_base=60, c1_rate=0.15, v=0.2, dv=0.3)
    table, _ = compute_metrics(specific, P)
    c = pick(table, metric="CAI", template="")
    assert c.excess == pytest.approx(c.estimate - c.placebo) and c.excess > 1 and c.placebo_kind == "identity"
    assert c.excess_p < 0.01 and 0 < c.excess_ci_low < c.excess < c.excess_ci_high
    assert c.p_adj <= 0.05 and c.claim_ci_low > 0
