"""The Snakemake workflow and DVC pipeline definitions: lint, the full matrix with GPU declarations, profiles."""

from __future__ import annotations

import re
import shutil
import subprocess

import yaml

from mirage.params import load_params


def run(cmd: list[str], cwd, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_params_yaml_holds_only_plain_values(root):
    """DVC reads params.yaml too and rejects YAML dates and other tagged types."""

    def walk(v, key=""):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{key}.{k}" if key else k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        else:
            assert v is None or isinstance(v, (str, int, float, bool)), f"{key}: {type(v).__name__}"

    walk(yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8")))


def test_snakemake_lint_is_clean(root):
    result = run(["snakemake", "--lint"], root)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dry_run_lists_the_full_matrix_with_gpu_declarations(root):
    result = run(["snakemake", "-n", "--cores", "all", "--resources", "gpu=8", "api=4"], root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    params = load_params(root / "params.yaml")
    for model in params.slices.full.models:
        for condition in ("C1", "C2", "C3"):
            assert f"results/generations/{model}/full/{condition}/none-none.jsonl" in out
        gpus = params.models[model].gpus
        if gpus:
            jobs = re.findall(rf"output: results/generations/{re.escape(model)}/full/C1/none-none\.jsonl.*?resources: ([^\n]*)", out, re.S)
            assert jobs and f"gpu={gpus}" in jobs[0], (model, jobs)
    assert re.search(r"output: results/generations/deepseek-v3/full/C2/none-none\.jsonl.*?resources: [^\n]*gpu=8", out, re.S)
    for target in ("results/report/full/index.html", "results/probe/deepseek-v3/table7.csv"):
        assert target in out


def test_dvc_stage_outputs_follow_the_slice_models(root):
    params = load_params(root / "params.yaml")
    stages = yaml.safe_load((root / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    for name in ("demo", "lite", "full"):
        outs = [next(iter(o)) if isinstance(o, dict) else o for o in stages[name]["outs"]]
        for model in getattr(params.slices, name).models:
            assert f"results/generations/{model}/store/{name}" in outs
            assert f"results/labels/{model}/{name}.jsonl" in outs
        persisted = [next(iter(o)) for o in stages[name]["outs"] if isinstance(o, dict) and next(iter(o.values())).get("persist")]
        assert all("/store/" in p for p in persisted) and persisted


def test_slurm_profile_dry_run_maps_gpus(root):
    result = run(["snakemake", "-n", "--profile", "workflow/profiles/slurm", "all"], root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Using profile workflow/profiles/slurm" in out
    assert re.search(r"rule generate_C1:.*?resources: [^\n]*gpu=8", out, re.S)
    for job in re.findall(r"rule (\w+):\n(?:    [^\n]*\n)*?    resources: ([^\n]*)", out):  # model jobs -> gpu
        partition = re.search(r"slurm_partition=(\w+)", job[1]).group(1)
        assert partition == ("gpu" if job[0].startswith(("generate_", "probe")) else "cpu"), job


def test_kubernetes_profile_dry_run(root, tmp_path):
    """Pods share no filesystem: inputs come from the storage provider (here the `fs` plugin on a tmp folder)."""
    shutil.copytree(root / "data", tmp_path / "data")
    result = run(["snakemake", "-n", "--profile", "workflow/profiles/kubernetes", "--default-storage-provider", "fs",
                  "--default-storage-prefix", str(tmp_path), "lite"], root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "generate_C3" in out and "(in storage)" in out
