"""The shrunk demo of the end-to-end tests (tests/pipeline/test_rebuild.py, tests/cluster/test_s3.py), and the
embedded model's completions and the judge's evaluation it needs, made once per test run (the `demo_made` fixture
of tests/conftest.py).

Shrunk: 1 sample of 4 tokens per request, 1 probe pair per template, 200 bootstrap/permutation resamples. Every
rule, condition, pool and mitigation view still runs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from mirage import artefacts
from mirage.params import load_params
from mirage.protocol import CONDITIONS

MODEL = "smollm2-135m"
#: The embedded model's store partitions a shrunk demo writes: its three generation jobs and its pilot.
PARTITIONS = ("demo", "pilot")


def copy_project(root: Path, dest: Path) -> Path:
    """Tracked and untracked-not-ignored files of the project at `root`, copied to `dest`."""
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                           cwd=root, capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        if (root / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dest / rel)
    return dest


def shrink(params_path: Path) -> None:
    """The shrunk demo's sizes (module docstring), written into a copy's params.yaml."""
    params = yaml.safe_load(params_path.read_text(encoding="utf-8"))
    params["slices"]["demo"].update(n_samples=1, max_tokens={"C1": 4, "C2": 4, "C3": 4})
    params["probe"].update(bases_per_template=1, n_resamples=200)
    params["metrics"].update(n_boot=200, n_perm=200)
    params_path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")


def generate(root: Path, dest: Path) -> Path:
    """Run the shrunk demo's generation jobs, pilot and judge evaluation with Snakemake in a copy of the project at
    `dest`; return that copy."""
    repo = copy_project(root, dest)
    shrink(repo / "params.yaml")
    judge = load_params(repo / "params.yaml").judge_of("demo")
    targets = [*(artefacts.store_marker(MODEL, "demo", c) for c in CONDITIONS), artefacts.pilot(MODEL),
               artefacts.judge_eval(judge)]
    result = subprocess.run(["snakemake", "--cores", "2", *targets], cwd=repo, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, f"the shrunk demo's generation failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return repo


def seed(made: Path, repo: Path, partitions: tuple[str, ...] = PARTITIONS) -> None:
    """Copy what `generate` made in `made` into the copy of the project at `repo`: the embedded model's records in
    `partitions` (store shards and their key indexes, not the jobs' markers), so its generation jobs find every key
    of the shrunk demo and send nothing, and the judge's evaluation (newer than its inputs, so Snakemake keeps it)."""
    for partition in partitions:
        dest = repo / artefacts.store(MODEL) / partition
        dest.mkdir(parents=True, exist_ok=True)
        for shard in (made / artefacts.store(MODEL) / partition).glob("*.jsonl"):
            for path in (shard, shard.with_suffix(".keys")):
                shutil.copy2(path, dest / path.name)
    shutil.copytree(made / artefacts.judge_root(), repo / artefacts.judge_root())
