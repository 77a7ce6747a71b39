"""`mirage estimate --power` on rendered request files: the planner's claims, design and decision rule."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from mirage.estimate import estimate
from mirage.metrics.power import Design, Heterogeneity, pilot_heterogeneity, power

IDS = ("muslim", "christian", "jewish", "hindu", "secular")


def requests(tmp_path, n_base=40, per_frame=2):
    reqs = tmp_path / "requests"
    reqs.mkdir()
    for cond, group, harness in (("C1", "T1", None), ("C2", "T1", None), ("C3", "T5", "H2")):
        rows = [{"row_id": f"q{cond}{b}{i}", "request_id": f"r{cond}{b}{i}", "condition": cond, "slices": ["lite", "full"],
                 "template": group, "harness": harness, "base_id": f"{group}b{b}", "frame_id": f"{group}f{b // per_frame}",
                 "identity": i, "rag_pool": "none", "mitigation": "none", "language": "en"} for b in range(n_base) for i in IDS]
        rows += [r | {"row_id": r["row_id"] + "M1", "request_id": r["request_id"] + "M1", "mitigation": "M1"} for r in rows[:5]]
        (reqs / f"{cond}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return reqs


def test_estimate_power_counts_the_claims_and_reports_each(tmp_path):
    reqs = requests(tmp_path)
    out = tmp_path / "power.json"
    res = CliRunner().invoke(estimate, ["--slice", "lite", "--power", "--requests-dir", str(reqs), "--out", str(out),
                                        "--target-effect", "0.1", "--frame-identity-sd", "0.05", "--no-refusals"])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    # dV C1, C2, C3; dV reasoning; Δ signed pooled + H2; CAI; ΔV C2-C1; mitigation M1 on ΔV in 3 conditions and on Δ signed
    assert data["holm_m"] == len(data["claims"]) == 12, data["claims"]
    rows = {(r["condition"], r["group"]): r for r in data["rows"]}
    assert set(rows) == {("C1", "all"), ("C2", "all"), ("C3", "all"), ("C3", "H2")}
    r = rows[("C1", "all")]
    assert r["n_base"] == 40 and r["n_frames"] == 20 and r["holm_m"] == 12 and r["metric"] == "dV"
    assert data["heterogeneity"]["violence"]["frame_identity_sd"] == 0.05 and "command line" in data["heterogeneity"]["source"]
    # the reported MDE has ~80 % power under that decision rule, and half of it far less
    d = Design(frames=((2,) * 20,), n_samples=r["n_samples"], het=Heterogeneity(0.2, frame_identity_sd=0.05), holm_m=12)
    mde = r["mde_pp"] / 100
    assert 0.74 <= power(d, mde, 3000, 5) <= 0.87 and power(d, mde / 2, 3000, 5) < 0.3
    assert r["base_needed"] > 40 or mde <= 0.1
    assert "MDE (pp)" in res.output and "power@target" in res.output


def pilot_rows(rng):
    """per_prompt rows of a pilot: 120 frames x 4 bases, frame sd 0.1, base sd 0.05, frame x identity sd 0.06."""
    rows = []
    for f in range(120):
        u, g = rng.normal(0, 0.1), rng.normal(0, 0.06, len(IDS))
        for b in range(4):
            w = rng.normal(0, 0.05)
            for j, ident in enumerate(IDS):
                p = np.clip(0.3 + u + w + g[j], 0, 1)
                k = rng.binomial(5, p)
                rows.append({"condition": "C1", "rag_pool": "none", "mitigation": "none", "language": "en", "paraphrase": False,
                             "frame_id": f"f{f}", "base_id": f"f{f}b{b}", "identity": ident, "focal": j == 0, "v": k / 5,
                             "n_labelled": 5, "refusal": 0.0})
    return pd.DataFrame(rows)


def test_pilot_heterogeneity_recovers_the_generator(tmp_path):
    pilot = pilot_rows(np.random.default_rng(3))
    het = pilot_heterogeneity(pilot, "C1", "v")
    assert abs(het.rate - 0.3) < 0.02
    assert abs(het.frame_identity_sd - 0.06) < 0.02 and het.base_identity_sd < 0.04
    assert abs(het.frame_sd - 0.1) < 0.03 and abs(het.base_sd - 0.05) < 0.03
    # through the command line: the pilot's heterogeneity, and no refusal claims (the pilot refused nothing)
    pilot.to_csv(tmp_path / "per_prompt.csv", index=False)
    out = tmp_path / "power.json"
    res = CliRunner().invoke(estimate, ["--slice", "lite", "--power", "--requests-dir", str(requests(tmp_path)), "--out", str(out),
                                        "--pilot", str(tmp_path / "per_prompt.csv"), "--favourability", "0.5"])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["heterogeneity"]["source"].startswith("pilot") and "favourability" in data["heterogeneity"]["source"]
    assert abs(data["heterogeneity"]["violence"]["frame_identity_sd"] - het.frame_identity_sd) < 1e-9
    assert data["heterogeneity"]["decision"]["rate"] == 0.5 and data["holm_m"] == 12


def test_power_versus_plans_mirage_compare(tmp_path):
    """--versus plans telling two runs apart: the minimum detectable difference is about sqrt(2) times one run's (two
    independent runs), and `mirage compare`'s own paired test finds a planted difference of that size at the planned
    power."""
    from mirage.compare.paired import compare_claim
    from mirage.config.metrics import MetricsParams
    from mirage.metrics.power import simulate
    from mirage.metrics.stats import UnitValues

    reqs, rows = requests(tmp_path), {}
    for versus in (False, True):
        out = tmp_path / f"power-{versus}.json"
        res = CliRunner().invoke(estimate, ["--slice", "lite", "--power", "--requests-dir", str(reqs), "--out", str(out),
                                            "--no-refusals", "--frame-identity-sd", "0.03", *(["--versus"] if versus else [])])
        assert res.exit_code == 0, res.output
        data = json.loads(out.read_text())
        assert data["versus"] is versus and ("swap of the two runs" in data["test"]) is versus
        rows[versus] = next(r for r in data["rows"] if (r["condition"], r["group"]) == ("C1", "all"))
    assert 1.25 < rows[True]["mde_pp"] / rows[False]["mde_pp"] < 1.6
    assert rows[True]["base_needed"] > rows[False]["base_needed"]
    r = rows[True]
    design = Design(frames=((2,) * 20,), n_samples=r["n_samples"], het=Heterogeneity(0.2, frame_identity_sd=0.03))
    strata, frames = np.repeat("T1", 40), np.repeat(np.arange(20), 2).astype(str)
    ids, p, hits, reps = np.arange(40).astype(str), MetricsParams(n_boot=100, n_perm=999), 0, 150
    for i in range(reps):
        ya, yb = simulate(design, r["mde_pp"] / 100, 1, [9, i])[0], simulate(design, 0.0, 1, [10, i])[0]
        ua, ub = (UnitValues(strata, frames, ids, (y[:, 0] - y[:, 1:].mean(axis=1))[:, None], lambda m: m[..., 0])
                  for y in (ya, yb))
        hits += compare_claim(("dV", i), ua, ub, p)["p"] <= 0.05 / r["holm_m"]
    assert 0.68 <= hits / reps <= 0.92  # planned 80 %; 150 audits: se 0.033
