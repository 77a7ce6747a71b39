"""The slurm profile on a real one-node SLURM cluster (workflow/cluster/slurm.sh; needs root and apt).

The embedded model is declared with 2 GPUs in the scratch copy's params (stand-in GRES devices), so its
generation job must land in partition `gpu` with CUDA_VISIBLE_DEVICES=0,1 while corpus and render run in
`cpu`; the outputs must be byte-identical to a local run of the same target. To keep CI time down the target
is the demo's C1 generation (corpus -> render -> generate_C1), not the whole demo, with 1 sample of 4 tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TARGET = "results/generations/smollm2-135m/demo/C1/none-none.jsonl"
GPUS = 2


def sh(cmd: list[str], cwd: Path, timeout: int = 1800) -> str:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result.stdout + result.stderr


def copy_project(root: Path, dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                           cwd=root, capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        if (root / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dest / rel)
    return dest


def shrink(repo: Path, gpus: int | None = None) -> None:
    """1 sample of 4 tokens per request (both runs alike); `gpus` declares the embedded model's GPUs."""
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["slices"]["demo"].update(n_samples=1, max_tokens={"C1": 4, "C2": 4, "C3": 4})
    if gpus is not None:
        params["models"]["smollm2-135m"]["gpus"] = gpus  # operational: not part of any store key
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")


def outputs(repo: Path) -> dict[str, str]:
    """Hashes of corpus, requests and generation views; in views the two fields that record when and how fast
    this run generated (`created`, `latency_s`) are dropped: two independent runs never share them."""
    out = {str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
           for p in (repo / "results/corpus/prompts.jsonl", repo / "results/requests/C1.jsonl")}
    for p in sorted((repo / "results/generations/smollm2-135m/demo/C1").glob("*.jsonl")):
        rows = [{k: v for k, v in json.loads(line).items() if k not in ("created", "latency_s")}
                for line in p.read_text(encoding="utf-8").splitlines()]
        out[str(p.relative_to(repo))] = hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()
    return out


@pytest.fixture(scope="module")
def cluster(root):
    if os.geteuid() != 0:
        pytest.skip("starting slurmctld/slurmd/munge needs root")
    if not shutil.which("slurmctld") and not shutil.which("apt-get"):
        pytest.skip("SLURM is not installed and apt-get is unavailable to install it")
    script = root / "workflow/cluster/slurm.sh"
    sh(["bash", str(script), "start"], root, timeout=900)
    yield Path(os.environ.get("MIRAGE_SLURM_STATE", "/var/lib/mirage-slurm"))
    subprocess.run(["bash", str(script), "stop"], cwd=root, timeout=120)


def test_slurm_profile_places_model_jobs_on_gpus_and_matches_a_local_run(cluster, root, tmp_path):
    local = copy_project(root, tmp_path / "local")
    shrink(local)
    sh(["snakemake", "--cores", "2", TARGET], local)

    repo = copy_project(root, tmp_path / "slurm")
    shrink(repo, gpus=GPUS)
    sh(["snakemake", "--executor", "slurm", "--profile", "workflow/profiles/slurm", "--slurm-no-account",
        "--slurm-keep-successful-logs", "--slurm-init-seconds-before-status-checks", "5", "--jobs", "4",
        "--latency-wait", "10", TARGET], repo)

    # Job logs: .snakemake/slurm_logs/rule_<rule>/<wildcards>/<jobid>.log, each with the TaskProlog's line.
    placed = {}
    for log in (repo / ".snakemake/slurm_logs").rglob("*.log"):
        rule = next(p for p in log.relative_to(repo / ".snakemake/slurm_logs").parts if p.startswith("rule_"))[5:]
        m = re.search(r"mirage-slurm: job=(\d+) partition=(\w+) cuda=(\S+)", log.read_text(encoding="utf-8"))
        assert m, f"{log}: no placement line from the TaskProlog"
        placed[rule] = (m.group(1), m.group(2), m.group(3))
    assert set(placed) == {"corpus", "render", "generate_C1"}, placed
    comp = (cluster / "jobcomp.log").read_text(encoding="utf-8")
    for rule, (job, partition, cuda) in placed.items():
        record = re.search(rf"^JobId={job} .*$", comp, re.M)
        assert record and "JobState=COMPLETED" in record.group(0), (rule, job)
        assert f"Partition={partition} " in record.group(0)
        if rule.startswith("generate_"):
            assert (partition, cuda) == ("gpu", ",".join(map(str, range(GPUS)))), (rule, partition, cuda)
        else:
            assert (partition, cuda) == ("cpu", "none"), (rule, partition, cuda)

    expected = outputs(local)
    assert len(expected) >= 3 and outputs(repo) == expected
