"""Pairs named in params.yaml `compare.pairs` are Snakemake jobs and DVC stages; a bad pair is refused by params."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from mirage.dvc_yaml import build
from mirage.params import ParamsError, validate_params

PAIRS = {"snap": {"a": "gpt-4o@2024-08-06", "b": "gpt-4o/mitigation=M1", "slice": "lite"},
         "two": {"a": "smollm2-135m", "b": "smollm2-135m/judge=lexicon-v1", "slice": "demo"}}


def params_with_pairs(root, tmp_path):
    raw = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    raw["compare"]["pairs"] = PAIRS
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return raw, path


def test_pairs_become_dvc_stages(root, tmp_path):
    raw, _ = params_with_pairs(root, tmp_path)
    stages = build(validate_params(raw))["stages"]
    snap = stages["compare-snap"]
    assert snap["cmd"].startswith("snakemake results/compare/lite/snap/compare.json ") and "model_set=paper" in snap["cmd"]
    assert snap["outs"] == ["results/compare/lite/snap"] and {"compare", "metrics", "label", "slices.lite"} <= set(snap["params"])
    assert "report" not in snap["params"] and stages["compare-two"]["outs"] == ["results/compare/demo/two"]


@pytest.mark.parametrize("pair, message", [({"a": "m/colour=x", "b": "m", "slice": "lite"}, "not one of /mitigation"),
                                           ({"a": "m", "b": "n", "slice": "nope"}, "unknown slice")])
def test_bad_pairs_are_refused_by_params(pair, message):
    with pytest.raises(ParamsError, match=message):
        validate_params({"compare": {"pairs": {"p": pair}}})
    with pytest.raises(ParamsError, match="not a name"):
        validate_params({"compare": {"pairs": {"../p": {"a": "m", "b": "n", "slice": "lite"}}}})


def test_snakemake_plans_every_pair(root, tmp_path):
    _, path = params_with_pairs(root, tmp_path)
    dry = subprocess.run(["snakemake", "-n", "-p", "--configfile", str(path), "--", "compare_all", "lite"], cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stderr[-2000:]
    out = dry.stdout
    assert ("python -m mirage compare gpt-4o@2024-08-06 gpt-4o/mitigation=M1 --slice lite --name snap "
            "--labels results/labels/gpt-4o/lite.jsonl") in out
    assert "--labels results/labels/smollm2-135m/demo.jsonl --out-table results/compare/demo/two/compare.csv" in out
    report = next(line for line in out.splitlines() if "python -m mirage report --slice lite" in line)
    assert "--compare-section results/compare/lite/snap/section.html" in report and "demo/two" not in report
