"""The slurm profile on a real one-node SLURM cluster (workflow/cluster/slurm.sh; needs root and apt).

The whole `demo` target runs twice from scratch copies of the project: locally (`--cores 2`) and through
`snakemake --executor slurm --profile workflow/profiles/slurm`. The embedded model declares 2 GPUs (stand-in
GRES devices), so every job that declares `gpu` > 0 must have run in the partition its `slurm_partition` names
(`gpu`) with CUDA_VISIBLE_DEVICES=0,1, every other job in `cpu` with none; which jobs those are comes from the
resources Snakemake printed for each job, never from a list of rule names. Every file the demo writes must be
byte-identical to the local run's (see `comparable` for the timing fields it masks); the local run starts with the
judge's evaluation and the pilot's completions of the test run's shared demo (`local_run`). To keep CI time down
both runs are shrunk alike: 1 sample of 4 tokens, the demo's baseline rows only (no RAG pools, cross-lingual variants
or mitigation rows), 1 probe pair per template, 200 bootstrap/permutation resamples.

What cannot run here, and stands in for it: there is no GPU, so the `gpu` partition's devices are copies of
/dev/null and model jobs compute on the CPU (torch sees no CUDA); for the same reason the probe cannot run in
`gpu` at all (NOT_RUN) and runs in `cpu` with the model declared CPU-only. There is no accounting database, so
`sacct` has nothing to report: placement is read from jobcomp/filetxt's record of each finished job (state,
partition, working directory) and from the TaskProlog's line in each job log (partition, CUDA_VISIBLE_DEVICES).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from mirage import artefacts
from mirage.protocol import CONDITIONS
from tests import shrunk_demo

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TARGET = "demo"
MODEL = "smollm2-135m"
GPUS = 2
# Fields a generation record or view row spends on when and how fast this run generated: two independent
# runs never share them (everything else in the row, the text included, must match).
RUN_TIMING = ("created", "latency_s")


def sh(cmd: list[str], cwd: Path, timeout: int = 1800) -> str:
    env = {**os.environ, "PYTHONPATH": str(cwd)}  # `python -m mirage` in every job runs the copy's code
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result.stdout + result.stderr


def shrink(repo: Path, gpus: int | None = None) -> None:
    """The small demo both runs share (module docstring); `gpus` declares the embedded model's GPUs."""
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["slices"]["demo"].update(n_samples=1, max_tokens={"C1": 4, "C2": 4, "C3": 4})
    params["render"]["demo"].update(crosslingual_base=0, rag_base=0, mitigation_base=0)
    params["probe"].update(bases_per_template=1, n_resamples=200)
    params["metrics"].update(n_boot=200, n_perm=200)
    if gpus is not None:
        params["models"][MODEL]["gpus"] = gpus  # operational: not part of any store key
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")


def declared_jobs(out: str) -> list[tuple[str, bool, dict[str, str]]]:
    """(rule, whether it ran in Snakemake's own process, resources) of every job Snakemake announced."""
    found = []
    for block in re.split(r"\n(?=\[[^\]]+\]\n(?:local)?rule )", out):
        rule = re.search(r"^(local)?rule (\w+):", block, re.M)
        res = re.search(r"^\s+resources: (.*)$", block, re.M)
        if rule:
            found.append((rule.group(2), bool(rule.group(1)),
                          dict(kv.split("=", 1) for kv in res.group(1).split(", ")) if res else {}))
    return found


def _rows(data: bytes) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k not in RUN_TIMING} for line in data.splitlines()]


def comparable(repo: Path) -> dict[str, bytes]:
    """Every file the run wrote under results/ (tarballs member by member: name, mode, mtime, content), as bytes
    that must match another run's exactly, except for what records when, how fast or in which process it ran:
    - not compared: logs/ (progress and timings), the judge's timing.json (measured speed only), Snakemake's
      `.snakemake_timestamp` markers of directory outputs;
    - JSON-lines rows (views, labels, store records, bundled completions) lose the fields RUN_TIMING;
    - the generation store is compared as its records and its index's keys, sorted by key: its shard files are
      named after the writing host and process, and the index holds byte offsets into them (which move with
      the lengths of the timing fields); the markers' `records_by_shard` is compared as its counts;
    - in every other file, a generation time (a `created` value of the store: Tables 13/14's query window, the
      leaderboard entry's date) reads `<created>`, and the SHA-256 and size of a leaderboard bundle's member
      (in its manifest and the board's entry) read `<sha256 NAME>` and `<bytes NAME>`: the bundled
      completions carry the timing fields, and every member is compared itself."""
    skip = (repo / Path(artefacts.log("x")).parent, repo / artefacts.judge_root())
    files: dict[str, bytes] = {}
    for p in sorted((repo / artefacts.RESULTS).rglob("*")):
        if not p.is_file() or p.name == ".snakemake_timestamp" or skip[0] in p.parents or (
                skip[1] in p.parents and p.name == "timing.json"):
            continue
        if p.name.endswith(".tar.gz"):
            with tarfile.open(p) as tar:
                for m in tar.getmembers():
                    files[f"{p.relative_to(repo)}:{m.name} {m.mode:o} {m.mtime}"] = tar.extractfile(m).read() if m.isfile() else b""
        else:
            files[str(p.relative_to(repo))] = p.read_bytes()

    out: dict[str, bytes] = {}
    created: set[str] = set()
    store = artefacts.store(MODEL) + "/"
    for partition in sorted({rel[len(store):].split("/")[0] for rel in files if rel.startswith(store)}):
        where = f"{store}{partition}/"
        here = {rel[len(where):]: data for rel, data in files.items() if rel.startswith(where)}
        records = [json.loads(line) for name, data in here.items() if name.endswith(".jsonl") for line in data.splitlines()]
        created |= {r["created"] for r in records}
        rows = sorted(({k: v for k, v in r.items() if k not in RUN_TIMING} for r in records), key=lambda r: r["key"])
        keys = sorted(line.split()[2:] for name, data in here.items() if name.endswith(".keys") for line in data.decode().splitlines())
        out[f"{where}* records"] = json.dumps(rows, sort_keys=True).encode()
        out[f"{where}* keys"] = json.dumps(keys).encode()
        for name, data in here.items():
            if name.endswith(".manifest.json"):
                marker = json.loads(data)
                marker["records_by_shard"] = sorted(marker["records_by_shard"].values())
                out[where + name] = json.dumps(marker, sort_keys=True).encode()
    members = {rel.split(":")[1].split()[0]: data for rel, data in files.items() if ":" in rel}
    digests = {hashlib.sha256(data).hexdigest(): f"<sha256 {name}>" for name, data in members.items()}
    sizes = {str(len(data)): f"<bytes {name}>" for name, data in members.items()}
    masks = re.compile("|".join(map(re.escape, [*created, *digests])))
    size = re.compile(r'(?:(?<=bytes": )|(?<=bytes&#34;: ))\d+')  # "bytes": N in a manifest, also HTML-escaped (&#34;)
    for rel, data in files.items():
        if rel.startswith(store):
            continue
        if rel.split()[0].endswith(".jsonl"):
            data = json.dumps(_rows(data)).encode()
        text = masks.sub(lambda m: digests.get(m.group(0), "<created>"), data.decode("utf-8", "surrogateescape"))
        text = size.sub(lambda m: sizes.get(m.group(0), m.group(0)), text)
        out[rel] = text.encode("utf-8", "surrogateescape")
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


# The probe cannot run in the `gpu` partition here: `mirage probe` loads a model declared with N GPUs only when
# torch sees N CUDA devices, and the stand-in GRES devices are not CUDA devices ("needs 2 GPU(s); 0 visible").
# So both runs first build the probe with the model declared CPU-only (under SLURM: gpu=0 -> partition cpu), then
# declare 2 GPUs and build the demo, which reuses the probe: a model's GPU count is operational, no rerun trigger.
NOT_RUN = "probe in partition gpu: stand-in GPUs are not CUDA devices, so it runs in partition cpu with gpu=0"


def build(repo: Path, run) -> str:
    """The probe with the model on CPU, then the demo with GPUS declared (see NOT_RUN); Snakemake's output."""
    shrink(repo, gpus=0)
    out = run(repo, *artefacts.probe(MODEL).values())
    shrink(repo, gpus=GPUS)
    return out + run(repo, TARGET)


def local(repo: Path, *targets: str) -> str:
    return sh(["snakemake", "--cores", "2", *targets], repo)


def slurm(repo: Path, *targets: str) -> str:
    return sh(["snakemake", "--executor", "slurm", "--profile", "workflow/profiles/slurm", "--slurm-no-account",
               "--slurm-keep-successful-logs", "--slurm-init-seconds-before-status-checks", "2",
               "--seconds-between-status-checks", "2", "--jobs", "8", "--latency-wait", "10", *targets], repo)


@pytest.fixture(scope="module")
def local_run(root, tmp_path_factory, demo_made) -> Path:
    """The shrunk demo run locally once: the reference for the SLURM run. It starts with the judge's evaluation and
    the embedded model's pilot completions of the test run's shared demo (`demo_made`: the same inputs and keys,
    made by local jobs), which the SLURM run makes itself."""
    repo = shrunk_demo.copy_project(root, tmp_path_factory.mktemp("local"))
    shrunk_demo.seed(demo_made, repo, partitions=("pilot",))
    build(repo, local)
    return repo


def test_slurm_runs_the_demo_with_model_jobs_on_gpus_and_matches_a_local_run(cluster, local_run, root, tmp_path):
    repo = shrunk_demo.copy_project(root, tmp_path / "slurm")
    out = build(repo, slurm)
    print(f"not run here: {NOT_RUN}")

    # What each job declared, rule -> (partition, GPUs): every job of a rule declares the same here. Only the
    # target rule (no action) runs in Snakemake's own process; every other job is submitted.
    declared: dict[str, tuple[str, int]] = {}
    for rule, in_process, res in declared_jobs(out):
        if in_process:
            assert rule == TARGET, f"{rule} ran outside SLURM"
            continue
        want = (res["slurm_partition"], int(res.get("gpu", 0)))
        assert declared.setdefault(rule, want) == want, (rule, res)
    assert {f"generate_{c}" for c in CONDITIONS} <= {r for r, (_, g) in declared.items() if g}, declared

    # Job logs: .snakemake/slurm_logs/rule_<rule>/<wildcards>/<jobid>.log, each with the TaskProlog's line;
    # jobcomp's record of the same job id gives its final state and partition.
    comp = (cluster / "jobcomp.log").read_text(encoding="utf-8")
    placed = {}
    for log in sorted((repo / ".snakemake/slurm_logs").rglob("*.log")):
        rule = next(p for p in log.relative_to(repo / ".snakemake/slurm_logs").parts if p.startswith("rule_"))[5:]
        m = re.search(r"mirage-slurm: job=(\d+) partition=(\w+) cuda=(\S+)", log.read_text(encoding="utf-8"))
        assert m, f"{log}: no placement line from the TaskProlog"
        job, partition, cuda = m.groups()
        record = re.search(rf"^JobId={job} .* WorkDir={re.escape(str(repo))} .*$", comp, re.M)
        assert record and "JobState=COMPLETED" in record.group(0) and f"Partition={partition} " in record.group(0), rule
        want_partition, gpus = declared[rule]
        assert want_partition == ("gpu" if gpus else "cpu")
        assert (partition, cuda) == (want_partition, ",".join(map(str, range(gpus))) or "none"), (rule, partition, cuda)
        assert rule not in placed, f"{rule} ran more than once"
        placed[rule] = f"{rule:20} {partition:4} {cuda}"
    assert set(placed) == set(declared), (placed, declared)
    print("placement:\n" + "\n".join(placed.values()))

    expected, got = comparable(local_run), comparable(repo)
    assert {artefacts.report(TARGET), artefacts.labels(MODEL, TARGET), *artefacts.metrics(TARGET).values(),
            artefacts.board_page()["page"]} <= set(expected)
    assert any(k.startswith(artefacts.figures_dir(TARGET)) and k.endswith(".png") for k in expected)
    assert set(got) == set(expected)
    assert [k for k in expected if got[k] != expected[k]] == []
