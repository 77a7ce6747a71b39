"""`mirage devices`: every GPU job gets GPUs no other running job holds, under real Snakemake scheduling, with fake
GPUs (CUDA_VISIBLE_DEVICES=0..7 is the node's pool; each job records what it was given and when it ran)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mirage.devices import NoSlots, take

ROOT = Path(__file__).resolve().parents[1]
POOL = [str(i) for i in range(8)]
# GPUs per job: 19 GPUs' worth of jobs, more than the 8 at once, of mixed sizes, one that needs none.
NEEDS = [2, 2, 2, 2, 4, 1, 1, 1, 1, 2, 0, 1]

RECORD = """\
import json, os, sys, time
start = time.time()
time.sleep(1.0)
json.dump({"devices": os.environ["CUDA_VISIBLE_DEVICES"], "start": start, "end": time.time()}, open(sys.argv[1], "w"))
"""

SNAKEFILE = f"""\
NEEDS = {NEEDS}

rule all:
    input: expand("out/{{i}}.json", i=range(len(NEEDS)))

rule job:
    output: "out/{{i}}.json"
    resources: gpu=lambda wc: NEEDS[int(wc.i)]
    shell: "python -m mirage devices --gpus {{resources.gpu}} -- python record.py {{output}}"
"""


def node_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(POOL), "MIRAGE_GPU_LOCKS": str(tmp_path / "locks"),
            "PYTHONPATH": str(ROOT)}


def run_workflow(tmp_path: Path, *resources: str) -> list[dict]:
    (tmp_path / "Snakefile").write_text(SNAKEFILE, encoding="utf-8")
    (tmp_path / "record.py").write_text(RECORD, encoding="utf-8")
    cmd = ["snakemake", "--cores", "8", "--workflow-profile", "none", *resources]
    result = subprocess.run(cmd, cwd=tmp_path, env=node_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return [json.loads((tmp_path / f"out/{i}.json").read_text()) | {"need": n} for i, n in enumerate(NEEDS)]


def check_no_device_shared(jobs: list[dict]) -> None:
    for job in jobs:
        got = [d for d in job["devices"].split(",") if d]
        assert len(got) == job["need"] and len(set(got)) == len(got) and set(got) <= set(POOL), job
        job["set"] = set(got)
    overlapping = 0
    for a, b in itertools.combinations(jobs, 2):
        if a["start"] < b["end"] and b["start"] < a["end"]:  # ran at the same time
            overlapping += 1
            assert not a["set"] & b["set"], (a, b)
    assert overlapping >= 3, "the jobs never ran side by side: nothing was tested"
    assert set().union(*(j["set"] for j in jobs)) == set(POOL)


@pytest.mark.slow
def test_snakemake_gpu_jobs_get_disjoint_devices_and_use_all_eight(tmp_path):
    jobs = run_workflow(tmp_path, "--resources", "gpu=8")
    check_no_device_shared(jobs)
    busiest = max(sum(j["need"] for j in jobs if j["start"] <= t < j["end"]) for t in (j["start"] for j in jobs))
    assert 5 <= busiest <= 8  # the counter let several jobs' GPUs run at once (never over 8), each on its own


@pytest.mark.slow
def test_without_a_gpu_count_jobs_wait_for_free_devices_instead_of_sharing(tmp_path):
    """`snakemake --cores 8` with no `--resources gpu=N` starts jobs whatever their GPUs: the slots still hold."""
    check_no_device_shared(run_workflow(tmp_path))


def hold(tmp_path: Path, gpus: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "mirage", "devices", "--gpus", str(gpus), "--", "sleep", "60"],
                            cwd=ROOT, env=node_env(tmp_path) | {"CUDA_VISIBLE_DEVICES": "0,1"}, stderr=subprocess.PIPE,
                            text=True)
    line = proc.stderr.readline()
    assert "CUDA_VISIBLE_DEVICES=" in line, line
    return proc


def test_a_killed_job_releases_its_devices(tmp_path):
    proc = hold(tmp_path, 2)
    try:
        with pytest.raises(NoSlots, match=rf"held: GPU 0: pid {proc.pid} \(sleep 60\)"):
            take(1, ["0", "1"], tmp_path / "locks", "test", wait_s=0.3)
        os.kill(proc.pid, signal.SIGKILL)  # no cleanup can run: the kernel drops the locks
        proc.wait(timeout=10)
        held = take(2, ["0", "1"], tmp_path / "locks", "test", wait_s=5)
        assert [d for d, _ in held] == ["0", "1"]
    finally:
        proc.kill()
        proc.wait()


def test_a_waiting_job_starts_when_devices_free_up(tmp_path):
    proc = hold(tmp_path, 1)
    try:
        said = []
        waiter = time.monotonic()
        subprocess.Popen(["sh", "-c", f"sleep 1; kill {proc.pid}"])
        held = take(2, ["0", "1"], tmp_path / "locks", "test", wait_s=30, say=said.append)
        assert [d for d, _ in held] == ["0", "1"] and time.monotonic() - waiter >= 0.9
        assert said and "waiting for 2 free GPU(s) of 2" in said[0] and f"pid {proc.pid}" in said[0]
    finally:
        proc.kill()
        proc.wait()


def test_no_gpu_job_sees_none_an_oversized_job_fails_at_once_and_a_gpu_less_node_runs_it_on_none(tmp_path):
    env = node_env(tmp_path)
    seen = subprocess.run([sys.executable, "-m", "mirage", "devices", "--gpus", "0", "--", "sh", "-c",
                           'echo "[$CUDA_VISIBLE_DEVICES]"'], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert seen.returncode == 0 and seen.stdout.strip() == "[]", seen.stderr
    big = subprocess.run([sys.executable, "-m", "mirage", "devices", "--gpus", "9", "--", "true"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert big.returncode == 1 and "needs 9 GPU(s) but this node offers 8" in big.stderr, big.stderr
    none = subprocess.run([sys.executable, "-m", "mirage", "devices", "--gpus", "2", "--", "sh", "-c",
                           'echo "[$CUDA_VISIBLE_DEVICES]"'], cwd=ROOT, env=env | {"CUDA_VISIBLE_DEVICES": ""},
                          capture_output=True, text=True, timeout=60)
    assert none.returncode == 0 and none.stdout.strip() == "[]" and "shows no GPU; running with none" in none.stderr


def test_holders_name_only_slots_still_held(tmp_path):
    from mirage.devices import holders, try_take

    first = try_take(1, ["0", "1"], tmp_path, "first")
    second = try_take(1, ["0", "1"], tmp_path, "second")
    assert [d for d, _ in first] == ["0"] and [d for d, _ in second] == ["1"]
    os.close(first[0][1])  # released: its text stays in the file but it is no holder
    assert holders(tmp_path, ["0", "1"]) == f"GPU 1: pid {os.getpid()} (second)"
    os.close(second[0][1])
    assert holders(tmp_path, ["0", "1"]) == "none now"
