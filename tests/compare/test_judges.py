"""`mirage judges`: one model's completions under several judges: claim differences, agreement, and the gold-set
panel (error correlation, effective number of independent judges)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mirage.cli import cli
from mirage.compare.judges import panel

sys.path.insert(0, str(Path(__file__).parent))
from compare_synthetic import labels, write  # noqa: E402


def judge_eval(name: str, wrong: range, n: int = 100) -> dict:
    return {"judge": name, "n": n, "misclassified": [{"set": "gold.jsonl", "line": i, "identity": None, "language": "en"}
                                                     for i in wrong]}


def test_gold_panel_counts_correlated_judges_once():
    same = panel({"a": judge_eval("a", range(10)), "b": judge_eval("b", range(10))})
    assert same["pairs"][0]["error_correlation"] == pytest.approx(1.0) and same["effective_judges"] == pytest.approx(1.0)
    apart = panel({"a": judge_eval("a", range(10)), "b": judge_eval("b", range(50, 60)), "c": judge_eval("c", range(80, 90))})
    phi = (0 * 100 - 10 * 10) / (10 * 90)  # disjoint errors: slightly negative correlation, clipped to 0 in the mean
    assert all(p["error_correlation"] == pytest.approx(phi) for p in apart["pairs"])
    assert apart["effective_judges"] == pytest.approx(3.0) and apart["pairs"][0]["agreement"] == pytest.approx(0.8)
    assert "different gold sets" in panel({"a": judge_eval("a", range(3)), "b": judge_eval("b", range(3), n=50)})["note"]


def test_judges_command(tmp_path):
    rows = labels("m", 1, n_base=60)
    rng = np.random.default_rng(4)
    lenient = [r | {"judge": "parse-v1", "violent": 0 if r["focal"] and r["condition"] == "C1" and rng.random() < 0.5
                    else r["violent"]} for r in rows]
    files = [write(tmp_path / "j1.jsonl", rows), write(tmp_path / "j2.jsonl", lenient)]
    evals = []
    for name, wrong in (("lexicon-v1", range(10)), ("parse-v1", range(5, 15))):
        evals.append(tmp_path / name / "judge_eval.json")
        evals[-1].parent.mkdir()
        evals[-1].write_text(json.dumps(judge_eval(name, wrong)), encoding="utf-8")
    (tmp_path / "params.yaml").write_text("metrics:\n  n_boot: 1000\n  n_perm: 1000\n", encoding="utf-8")
    out = tmp_path / "out" / "judges.csv"
    res = CliRunner().invoke(cli, ["judges", "--model", "m", "--slice", "lite", "--params", str(tmp_path / "params.yaml"),
                                   *(a for f in files for a in ("--labels", str(f))),
                                   *(a for f in evals for a in ("--judge-eval", str(f))), "--out-table", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads((out.parent / "judges.json").read_text(encoding="utf-8"))
    assert doc["judges"] == ["lexicon-v1", "parse-v1"] and doc["reference"] == "lexicon-v1"
    dv = next(c for c in doc["claims"] if c["claim"] == "ΔV, C1")
    assert dv["verdict"] == "B more biased" and dv["difference"] < 0  # the lenient judge misses half the focal violence
    c2 = next(c for c in doc["claims"] if c["claim"] == "ΔV, C2")
    assert c2["difference"] == 0 and c2["verdict"] != "B more biased"  # C2 labels are identical
    agree = doc["sample_agreement"][0]
    assert 0.85 < agree["agreement"] < 1 and agree["n"] == len(rows)
    assert doc["gold"]["pairs"][0]["errors_both"] == 5 and 1 < doc["gold"]["effective_judges"] < 2
    assert "effective number of independent judges" in (out.parent / "section.html").read_text(encoding="utf-8")
    res = CliRunner().invoke(cli, ["judges", "--model", "m", "--slice", "lite", "--params", str(tmp_path / "params.yaml"),
                                   "--labels", str(files[0]), "--out-table", str(tmp_path / "x" / "j.csv")])
    assert res.exit_code == 2 and "needs two or more" in res.output and not (tmp_path / "x").exists()
