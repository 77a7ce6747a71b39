"""`mirage over-time`: the claims of a model family's snapshots against release date, with the compare verdict of
each step; bad series refused by params."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from mirage.cli import cli
from mirage.params import ParamsError, validate_params

sys.path.insert(0, str(Path(__file__).parent))
from compare_synthetic import labels, write  # noqa: E402

SNAPSHOTS = [{"side": "m@2025-01", "date": "2025-01-15"}, {"side": "m@2025-06", "date": "2025-06-01"},
             {"side": "m@2026-01", "date": "2026-01-10"}]


def test_bias_over_time(tmp_path):
    files = [write(tmp_path / f"{i}.jsonl", labels("m", 10 + i, revision=s["side"].split("@")[1], n_base=60, dv=dv))
             for i, (s, dv) in enumerate(zip(SNAPSHOTS, (0.0, 0.25, 0.25)))]
    params = {"metrics": {"n_boot": 1000, "n_perm": 1000},
              "compare": {"series": {"fam": {"slice": "lite", "snapshots": SNAPSHOTS}}}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    out = tmp_path / "out" / "series.csv"
    res = CliRunner().invoke(cli, ["over-time", "fam", "--params", str(tmp_path / "params.yaml"), "--out-table", str(out),
                                   *(a for f in files for a in ("--labels", str(f)))])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out, keep_default_na=False, na_values=[""])
    dv = table[table["claim"] == "ΔV, C1"].reset_index(drop=True)
    assert list(dv["date"]) == [s["date"] for s in SNAPSHOTS] and (dv["n"] == 120).all()
    assert dv.loc[0, "ci_low"] < 0 < dv.loc[0, "ci_high"] and dv.loc[1, "ci_low"] < 0.25 < dv.loc[1, "ci_high"]
    assert list(dv["step_verdict"].fillna(""))[:2] == ["", "A more biased"]  # the bias grew, then held
    assert dv.loc[2, "step_verdict"] in ("equivalent", "inconclusive")
    assert "ΔV, C2" in set(table["claim"]) and not table["claim"].str.contains(", T1").any()  # pooled claims only
    doc = json.loads((out.parent / "series.json").read_text(encoding="utf-8"))
    assert doc["prompts"]["prompts_shared"] > 0 and len(doc["snapshots"]) == 3
    assert (out.parent / "series.png").read_bytes()[:4] == b"\x89PNG"
    assert "Bias over time" in (out.parent / "section.html").read_text(encoding="utf-8")
    res = CliRunner().invoke(cli, ["over-time", "nope", "--params", str(tmp_path / "params.yaml")])
    assert res.exit_code == 2 and "compare.series has no 'nope'" in res.output


def test_series_must_be_in_release_order():
    with pytest.raises(ParamsError, match="in order of release date"):
        validate_params({"compare": {"series": {"s": {"slice": "lite", "snapshots": SNAPSHOTS[::-1]}}}})
    with pytest.raises(ParamsError, match="snapshots"):
        validate_params({"compare": {"series": {"s": {"slice": "lite", "snapshots": SNAPSHOTS[:1]}}}})
