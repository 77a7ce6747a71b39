"""Pairs, series and judge sets named in params.yaml `compare` are Snakemake jobs and DVC stages; a bad entry is
refused by params."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from mirage.dvc_yaml import build
from mirage.params import ParamsError, validate_params

PAIRS = {"snap": {"a": "gpt-4o@2024-08-06", "b": "gpt-4o/mitigation=M1", "slice": "lite"},
         "two": {"a": "smollm2-135m", "b": "smollm2-135m/judge=lexicon-v1", "slice": "demo"}}
SERIES = {"gpt4o": {"slice": "lite", "snapshots": [{"side": "gpt-4o@2024-05-13", "date": "2024-05-13"},
                                                   {"side": "gpt-4o@2024-08-06", "date": "2024-08-06"}]}}
JUDGES = {"smol-judges": {"model": "smollm2-135m", "slice": "demo"}, "gpt4o-jury": {"model": "gpt-4o", "slice": "lite"}}


def params_with_pairs(root, tmp_path, jury: list[str] | None = None):
    raw = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    extra = tmp_path / "smollm2-parse-v1.jsonl"  # another judge's labels, made outside the pipeline
    extra.write_text("", encoding="utf-8")
    raw["compare"] |= {"pairs": PAIRS, "series": SERIES,
                       "judges": JUDGES | {"smol-judges": JUDGES["smol-judges"] | {"labels": [str(extra)]}}}
    if jury:
        raw["slices"]["lite"]["judge"] = jury
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
    series = stages["over-time-gpt4o"]
    assert series["cmd"].startswith("snakemake results/compare/lite/series/gpt4o/series.json ")
    assert series["outs"] == ["results/compare/lite/series/gpt4o"] and "compare" in series["params"]
    judges = stages["judges-smol-judges"]
    assert judges["cmd"].startswith("snakemake results/compare/demo/judges/smollm2-135m/judges.json ")
    assert judges["outs"] == ["results/compare/demo/judges/smollm2-135m"]
    assert str(tmp_path / "smollm2-parse-v1.jsonl") in judges["deps"] and "data/judge/gold.jsonl" in judges["deps"]
    assert stages["judges-gpt4o-jury"]["outs"] == ["results/compare/lite/judges/gpt-4o"]


def test_dvc_yaml_check_sees_a_judge_set_added_to_params(root, tmp_path):
    """The checked-in dvc.yaml is in sync with params.yaml; naming a judge set in params makes it stale until
    regenerated, and the regenerated file holds its stage."""
    _, path = params_with_pairs(root, tmp_path)
    dvc = tmp_path / "dvc.yaml"
    check = [sys.executable, "-m", "mirage", "dvc-yaml", "--params", str(path), "--out", str(dvc)]
    dvc.write_text((root / "dvc.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    stale = subprocess.run([*check, "--check"], cwd=root, capture_output=True, text=True)
    assert stale.returncode == 1 and "out of sync" in stale.stderr
    assert subprocess.run(check, cwd=root, capture_output=True, text=True).returncode == 0
    assert subprocess.run([*check, "--check"], cwd=root, capture_output=True, text=True).returncode == 0
    stages = yaml.safe_load(dvc.read_text(encoding="utf-8"))["stages"]
    assert {"judges-smol-judges", "judges-gpt4o-jury", "over-time-gpt4o", "compare-snap"} <= set(stages)


@pytest.mark.parametrize("pair, message", [({"a": "m/colour=x", "b": "m", "slice": "lite"}, "not one of /mitigation"),
                                           ({"a": "m", "b": "n", "slice": "nope"}, "unknown slice")])
def test_bad_pairs_are_refused_by_params(pair, message):
    with pytest.raises(ParamsError, match=message):
        validate_params({"compare": {"pairs": {"p": pair}}})
    with pytest.raises(ParamsError, match="not a name"):
        validate_params({"compare": {"pairs": {"../p": {"a": "m", "b": "n", "slice": "lite"}}}})
    with pytest.raises(ParamsError, match="both name model m on slice lite"):
        validate_params({"compare": {"judges": {"x": {"model": "m", "slice": "lite"}, "y": {"model": "m", "slice": "lite"}}}})
    with pytest.raises(ParamsError, match="not a name"):
        validate_params({"compare": {"judges": {"x": {"model": "../m", "slice": "lite"}}}})


def test_snakemake_plans_every_pair_series_and_judge_set(root, tmp_path):
    _, path = params_with_pairs(root, tmp_path, jury=["gpt-4.1", "lexicon-v1", "parse-v3"])
    dry = subprocess.run(["snakemake", "-n", "-p", "--configfile", str(path), "--", "compare_all", "lite"], cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stderr[-2000:] + dry.stdout[-3000:]
    out = dry.stdout
    assert ("python -m mirage compare gpt-4o@2024-08-06 gpt-4o/mitigation=M1 --slice lite --name snap "
            "--labels results/labels/gpt-4o/lite.jsonl") in out
    assert "--labels results/labels/smollm2-135m/demo.jsonl --out-table results/compare/demo/two/compare.csv" in out
    report = next(line for line in out.splitlines() if "python -m mirage report --slice lite" in line)
    assert "--compare-section results/compare/lite/snap/section.html" in report and "demo/two" not in report
    assert ("python -m mirage over-time gpt4o --labels results/labels/gpt-4o/lite.jsonl "
            "--out-table results/compare/lite/series/gpt4o/series.csv") in out
    assert ("python -m mirage judges --model gpt-4o --slice lite --labels results/labels/gpt-4o/lite.jsonl "
            "--judge-eval results/judge/gpt-4.1/judge_eval.json --judge-eval results/judge/lexicon-v1/judge_eval.json "
            "--judge-eval results/judge/parse-v3/judge_eval.json --out-table results/compare/lite/judges/gpt-4o/judges.csv") in out
    assert "python -m mirage judge eval" in out and "--judge lexicon-v1" in out  # each jury member measured on its own
    assert (f"python -m mirage judges --model smollm2-135m --slice demo --labels results/labels/smollm2-135m/demo.jsonl "
            f"--labels {tmp_path / 'smollm2-parse-v1.jsonl'} --judge-eval") in out
    assert ("--compare-section results/compare/lite/series/gpt4o/section.html --compare-section "
            "results/compare/lite/judges/gpt-4o/section.html") in report
