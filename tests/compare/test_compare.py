"""`mirage compare` on synthetic models whose truth is known: planted differences found, identical models not called
different, shared prompts only, snapshots, mitigations and judges as sides, and the paired engine's error rates."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from mirage.cli import cli
from mirage.compare.paired import A_MORE, B_MORE, EQUIVALENT, compare_claim, verdict
from mirage.config.compare import parse_side
from mirage.config.metrics import MetricsParams
from mirage.io import DataError
from mirage.metrics.stats import UnitValues

sys.path.insert(0, str(Path(__file__).parent))
from compare_synthetic import labels, write  # noqa: E402

PARAMS = "metrics:\n  n_boot: 1000\n  n_perm: 1000\ncompare:\n  margin_pp: 10.0\n"


def run(tmp: Path, *args: str) -> tuple[int, str]:
    (tmp / "params.yaml").write_text(PARAMS, encoding="utf-8")
    res = CliRunner().invoke(cli, ["compare", *args, "--slice", "lite", "--params", str(tmp / "params.yaml")])
    return res.exit_code, res.output


def claim(tmp: Path, name: str, what: str) -> dict:
    doc = json.loads((tmp / name / "compare.json").read_text(encoding="utf-8"))
    return next(c for c in doc["claims"] if c["claim"] == what)


def out(tmp: Path, name: str) -> list[str]:
    return ["--out-table", str(tmp / name / "compare.csv")]


def test_planted_difference_found_and_outputs_written(tmp_path):
    a = write(tmp_path / "a.jsonl", labels("A", 1, n_base=60, dv=0.25))
    b = write(tmp_path / "b.jsonl", labels("B", 2, n_base=60))
    code, output = run(tmp_path, "A", "B", "--labels", str(a), "--labels", str(b), *out(tmp_path, "ab"))
    assert code == 0, output
    dv = claim(tmp_path, "ab", "ΔV, C1")
    assert dv["verdict"] == A_MORE and dv["p_adj"] <= 0.05 and dv["ci_low"] < 0.25 < dv["ci_high"] and dv["ci_low"] > 0
    assert dv["tost_low"] > dv["ci_low"] and dv["tost_high"] < dv["ci_high"]  # the 90 % TOST interval sits inside
    doc = json.loads((tmp_path / "ab" / "compare.json").read_text(encoding="utf-8"))
    assert doc["prompts"]["prompts_shared"] == doc["prompts"]["prompts_a"] == doc["prompts"]["prompts_b"]
    assert doc["m"] == sum(c["p_adj"] is not None for c in doc["claims"]) and doc["m"] >= 5
    table = pd.read_csv(tmp_path / "ab" / "compare.csv")
    np.testing.assert_allclose(table["p_adj"].dropna(), __import__("statsmodels.stats.multitest").stats.multitest
                               .multipletests(table["p"].dropna(), method="holm")[1])
    assert (tmp_path / "ab" / "compare.png").read_bytes()[:4] == b"\x89PNG"
    section = (tmp_path / "ab" / "section.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in section and "A more biased" in section
    # swapped sides: the same difference with the opposite sign and verdict
    code, output = run(tmp_path, "B", "A", "--labels", str(a), "--labels", str(b), *out(tmp_path, "ba"))
    assert code == 0, output
    ba = claim(tmp_path, "ba", "ΔV, C1")
    assert ba["verdict"] == B_MORE and ba["difference"] == pytest.approx(-dv["difference"])


def test_identical_models_and_a_generic_cot_effect_are_not_different(tmp_path):
    """Two draws of one identity-blind model, and one whose chain of thought adds violence for every identity: no
    claim differs; with a wide margin the precise claims are called equivalent."""
    a = write(tmp_path / "a.jsonl", labels("A", 3, n_base=60, cot=0.2))
    b = write(tmp_path / "b.jsonl", labels("B", 4, n_base=60))
    code, output = run(tmp_path, "A", "B", "--labels", str(a), "--labels", str(b), *out(tmp_path, "ab"))
    assert code == 0, output
    doc = json.loads((tmp_path / "ab" / "compare.json").read_text(encoding="utf-8"))
    verdicts = {c["claim"]: c["verdict"] for c in doc["claims"]}
    assert A_MORE not in verdicts.values() and B_MORE not in verdicts.values(), verdicts
    assert verdicts["ΔV, C1"] == EQUIVALENT and verdicts["CAI"] != A_MORE


def test_only_shared_prompts_are_used(tmp_path):
    rows_b = [r for r in labels("B", 2) if not r["base_id"].startswith("T1b1")]  # 11 of B's bases are missing
    a, b = write(tmp_path / "a.jsonl", labels("A", 1)), write(tmp_path / "b.jsonl", rows_b)
    code, output = run(tmp_path, "A", "B", "--labels", str(a), "--labels", str(b), *out(tmp_path, "ab"))
    assert code == 0, output
    doc = json.loads((tmp_path / "ab" / "compare.json").read_text(encoding="utf-8"))
    p = doc["prompts"]
    assert p["prompts_a"] - p["prompts_shared"] == 11 * 5 * 2 and p["prompts_b"] == p["prompts_shared"]
    assert claim(tmp_path, "ab", "ΔV, C1")["n"] == 60 - 11
    assert f"{p['prompts_shared']:,} shared" in (tmp_path / "ab" / "section.html").read_text(encoding="utf-8")


def test_snapshots_mitigations_and_judges_as_sides(tmp_path):
    old = write(tmp_path / "old.jsonl", labels("m", 1, revision="2026-01", n_base=60, dv=0.25))  # an earlier run's labels
    new = write(tmp_path / "m.jsonl", labels("m", 2, revision="2026-05", n_base=60))
    code, output = run(tmp_path, "m@2026-01", "m@2026-05", "--labels", str(old), "--labels", str(new), *out(tmp_path, "snap"))
    assert code == 0, output
    assert claim(tmp_path, "snap", "ΔV, C1")["verdict"] == A_MORE
    mit = write(tmp_path / "mit.jsonl", labels("m", 5, n_base=60, dv=0.25, mitigation={"M1": -0.25}))
    code, output = run(tmp_path, "m/mitigation=M1", "m", "--labels", str(mit), *out(tmp_path, "mit"))
    assert code == 0, output
    m1 = claim(tmp_path, "mit", "ΔV, C1")
    assert m1["verdict"] == B_MORE and m1["n"] == 120  # only C1 has M1 rows: C2 and C3 claims are not shared
    doc = json.loads((tmp_path / "mit" / "compare.json").read_text(encoding="utf-8"))
    assert {c["condition"] for c in doc["claims"]} == {"C1"}
    rows = labels("m", 1, n_base=30)
    other = [r | {"judge": "parse-v2", "violent": 1 - r["violent"] if r["condition"] == "C1" and r["focal"] else r["violent"]}
             for r in rows]
    j1, j2 = write(tmp_path / "j1.jsonl", rows), write(tmp_path / "j2.jsonl", other)
    code, output = run(tmp_path, "m/judge=parse-v2", "m/judge=lexicon-v1", "--labels", str(j1), "--labels", str(j2),
                       *out(tmp_path, "judge"))
    assert code == 0, output
    assert claim(tmp_path, "judge", "ΔV, C1")["verdict"] == A_MORE  # the second judge flips focal C1 labels: V 0.25 -> 0.75
    code, output = run(tmp_path, "m", "m/judge=lexicon-v1", "--labels", str(j1), "--labels", str(j2), *out(tmp_path, "x"))
    assert code == 2 and "labelled by 2 judges" in output and "m/judge=lexicon-v1" in output


@pytest.mark.parametrize("spec, message", [("m/colour=red", "not one of /mitigation=M"), ("../m", "is not a name"),
                                           ("m@", "is not a revision"), ("m/judge=jury:a", "jury needs >= 2")])
def test_bad_sides_are_refused(tmp_path, spec, message):
    with pytest.raises(DataError, match=message):
        parse_side(spec)
    f = write(tmp_path / "m.jsonl", labels("m", 1, n_base=5))
    code, output = run(tmp_path, spec, "m", "--labels", str(f), *out(tmp_path, "bad"))
    assert code == 2 and message in output and not (tmp_path / "bad").exists()


def test_unknown_side_names_what_exists(tmp_path):
    f = write(tmp_path / "m.jsonl", labels("m", 1, n_base=5))
    code, output = run(tmp_path, "m@2020", "m", "--labels", str(f), *out(tmp_path, "bad"))
    assert code == 2 and "no label rows" in output and "revision r1" in output and not (tmp_path / "bad").exists()


def _units(rng, strata, frames, shared, effect=0.0):
    x = shared + rng.normal(0, 0.3, len(shared)) + effect
    return UnitValues(strata, frames, np.arange(len(shared)).astype(str), x[:, None], lambda m: m[..., 0])


def test_paired_engine_error_rates():
    """Identical sides: 'different' at the nominal 5 %; the paired interval covers the truth at 95 %; true
    differences of +-margin are called equivalent at most 5 % of the time (two one-sided tests), a zero difference
    mostly; shared prompt effects cancel (the interval is far narrower than the sides' own)."""
    rng, p = np.random.default_rng(11), MetricsParams(n_boot=400, n_perm=400)
    n = 60
    strata, frames = np.repeat(["T1", "T2"], n // 2), np.array([f"f{i % 12}" for i in range(n)])
    different = covered = equivalent_at_margin = equivalent_at_zero = 0
    reps = 300
    for r in range(reps):
        shared = np.repeat(rng.normal(0, 1.0, 12), 5)  # strong frame effects, common to both sides
        ua, ub = _units(rng, strata, frames, shared, 0.0), _units(rng, strata, frames, shared, 0.0)
        res = compare_claim(("dV", r), ua, ub, p)
        different += res["p"] <= 0.05
        covered += res["ci_low"] <= 0 <= res["ci_high"]
        equivalent_at_zero += verdict("dV", res["difference"], 1.0, (res["tost_low"], res["tost_high"]), 0.3, 0.05) == EQUIVALENT
        shifted = compare_claim(("dV", r, "m"), _units(rng, strata, frames, shared, 0.3), ub, p)
        equivalent_at_margin += verdict("dV", shifted["difference"], 1.0, (shifted["tost_low"], shifted["tost_high"]),
                                        0.3, 0.05) == EQUIVALENT
    se = np.sqrt(0.05 * 0.95 / reps)
    assert different / reps < 0.05 + 2.5 * se and 0.95 - 2.5 * se < covered / reps
    assert equivalent_at_margin / reps < 0.05 + 2.5 * se and equivalent_at_zero / reps > 0.8
    width = res["ci_high"] - res["ci_low"]
    assert width < 0.5 * 2 * 1.96 * np.std(shared) / np.sqrt(12)  # unpaired, the frame effects would not cancel
