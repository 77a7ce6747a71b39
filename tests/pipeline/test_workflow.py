"""The Snakemake workflow and DVC pipeline definitions: lint, the full matrix with GPU declarations, profiles."""

from __future__ import annotations

import os
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


def jobs(out: str) -> list[dict]:
    """Dry-run job blocks: rule name, wildcards, input/output lines and resources as a dict."""
    found = []
    for block in re.split(r"\n(?=\[[^\]]+\]\n(?:local)?rule )", out):
        m = re.search(r"^(?:local)?rule (\w+):", block, re.M)
        if not m:
            continue
        res = re.search(r"^\s+resources: (.*)$", block, re.M)
        pairs = dict(kv.split("=", 1) for kv in res.group(1).split(", ")) if res else {}
        wc = re.search(r"^\s+wildcards: (.*)$", block, re.M)
        found.append({"rule": m.group(1), "resources": pairs, "block": block,
                      "wildcards": dict(kv.split("=", 1) for kv in wc.group(1).split(", ")) if wc else {}})
    return found


def test_slurm_profile_sends_model_jobs_to_the_gpu_partition_with_their_gpus(root):
    result = run(["snakemake", "-n", "--profile", "workflow/profiles/slurm", "all"], root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    # the workflow profile (profiles/default) is loaded after it, as Snakemake documents
    assert "Using profiles workflow/profiles/slurm and workflow specific profile profiles/default" in out
    profile = yaml.safe_load((root / "workflow/profiles/slurm/config.yaml").read_text(encoding="utf-8"))
    params = load_params(root / "params.yaml")
    seen = set()
    for job in jobs(out):
        r, rule = job["resources"], job["rule"]
        if rule in profile["set-resources"]:
            gpus = params.models[job["wildcards"]["model"]].gpus
            want = profile["set-resources"][rule]
            assert r["slurm_partition"] == ("gpu" if gpus else "cpu"), (rule, job["wildcards"], r)
            assert int(r.get("gpu", 0)) == gpus and int(r["mem_mb"]) == want["mem_mb"] and int(r["runtime"]) == want["runtime"]
            seen.add((rule, job["wildcards"]["model"]))
        elif rule != "all":
            default = profile["default-resources"]
            assert r["slurm_partition"] == "cpu" and int(r["mem_mb"]) == default["mem_mb"], (rule, r)
            assert int(r["runtime"]) == default["runtime"] and int(r.get("gpu", 0)) == 0, (rule, r)
    models = params.slices.full.models
    assert {(f"generate_{c}", m) for c in ("C1", "C2", "C3") for m in models} <= seen
    assert ("generate_C1", "deepseek-v3") in seen and params.models["deepseek-v3"].gpus == 8


def test_kubernetes_profile_sees_every_input_and_output(root, tmp_path):
    """Pods share no filesystem: every declared input and output goes through the storage provider (here `fs`)."""
    shutil.copytree(root / "data", tmp_path / "data")
    result = run(["snakemake", "-n", "--profile", "workflow/profiles/kubernetes", "--default-storage-provider", "fs",
                  "--default-storage-prefix", str(tmp_path), "lite"], root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    rules = set()
    for job in jobs(out):
        for kind in ("input", "output"):
            line = re.search(rf"^\s+{kind}: (.*)$", job["block"], re.M)
            if line:
                files = line.group(1).split(", ")
                assert all("storage)" in f for f in files), (job["rule"], kind, [f for f in files if "storage)" not in f])
        rules.add(job["rule"])
    assert {"generate_C3", "label", "metrics", "report"} <= rules
    assert "store/lite/C3.manifest.json (send to storage)" in out  # the paid-for store partition is part of the DAG


def test_a_stale_registry_is_refused_at_dag_time_before_any_job(root, tmp_path):
    """Models that would have to send (here: empty stores, requests not yet rendered) but cannot, being retired or
    keyless, stop a real run before anything starts; a dry run only warns."""
    for name in ("Snakefile", "params.yaml"):
        shutil.copy2(root / name, tmp_path / name)
    for folder in ("workflow", "data", "mirage"):
        shutil.copytree(root / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"PYTHONPATH": str(tmp_path)}
    real = subprocess.run(["snakemake", "--cores", "1", "--touch", "lite"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)
    out = real.stdout + real.stderr
    assert real.returncode == 1 and "4 model(s) would have to send requests they cannot send; nothing was started" in out
    assert "Traceback" not in out and "Exception" not in out, "the refusal alone, not Snakemake's frames around it"
    # the LLM judge of lite (slices.lite.judge) is checked like a generating model: its replies would have to be sent
    assert ("judge gpt-4.1 on lite: its store holds no replies, so every one of the slice's judge calls would be sent, "
            "and it cannot send them: no API key (set the environment variable OPENAI_API_KEY)") in out
    assert "claude-opus-4 on lite: its store holds no completions" in out and "claude-opus-4-20250514 was retired on 2026-06-15" in out
    assert "gpt-4o on lite" in out and "set OPENAI_API_KEY" in out and "dvc pull --with-deps lite" in out
    assert "llama-3.3-70b on lite" not in out, "open models need no key"
    assert not (tmp_path / "results").exists()
    dry = subprocess.run(["snakemake", "-n", "lite"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    dry_out = dry.stdout + dry.stderr
    assert dry.returncode == 0 and "warning:" in dry_out and "judge gpt-4.1 on lite" in dry_out
    # the dry run shows the judge's model: measured on the gold sets, and a rerun trigger of every label job
    assert "output: results/judge/gpt-4.1/judge_eval.json" in dry_out and "wildcards: judge=gpt-4.1" in dry_out
