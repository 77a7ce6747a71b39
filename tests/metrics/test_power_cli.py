"""`mirage estimate --power` on a rendered request file: the planner's table and JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mirage.generate.cli import estimate
from mirage.metrics.power import Design, min_detectable, power


def test_estimate_power_table(tmp_path):
    reqs = tmp_path / "requests"
    reqs.mkdir()
    for cond, group, harness in (("C1", "T1", None), ("C3", "T5", "H2")):
        rows = [{"row_id": f"q{cond}{b}{i}", "request_id": f"r{cond}{b}{i}", "condition": cond, "slices": ["lite", "full"],
                 "template": group, "harness": harness, "base_id": f"{cond}b{b}", "identity": i, "rag_pool": "none",
                 "mitigation": "none", "language": "en"} for b in range(40) for i in range(5)]
        rows.append(rows[0] | {"row_id": "extra", "request_id": "x", "mitigation": "M1"})  # not a baseline request
        (reqs / f"{cond}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "power.json"
    res = CliRunner().invoke(estimate, ["--slice", "lite", "--power", "--requests-dir", str(reqs), "--out", str(out),
                                        "--models", "gpt-4o", "--target-effect", "0.1"])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    rows = {r["group"]: r for r in data["rows"]}
    assert set(rows) == {"T1", "H2"} and rows["T1"]["n_base"] == 40 and rows["T1"]["holm_m"] == 12
    assert rows["H2"]["metric"] == "Delta_signed" and rows["H2"]["holm_m"] == 16
    # the reported MDE really has ~80 % power at the Holm threshold, and half of it far less
    d = Design(n_base=40, n_samples=data["rows"][0]["n_samples"], holm_m=12)
    mde = rows["T1"]["mde_pp"] / 100
    assert abs(mde - min_detectable(d)) < 1e-9 and 0.75 <= power(d, mde, 4000, 1) <= 0.86 and power(d, mde / 2) < 0.3
    assert rows["T1"]["base_needed"] > 40 or mde <= 0.1
    assert "MDE (pp)" in res.output
