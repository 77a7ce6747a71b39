"""DVC remotes and Snakemake storage on S3, against a local S3-compatible server (moto) on 127.0.0.1.

One demo run (shrunk: 1 sample, 4 tokens per condition) in a scratch git+DVC repository whose `public`
and `completions` remotes point at two buckets; `dvc push`; a fresh clone; `dvc pull`; the generation jobs
rerun and send nothing; outputs byte-identical. Then the kubernetes profile's storage settings
(default-storage-provider s3 + prefix) run the corpus rule with snakemake-storage-plugin-s3.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
GIT = {"GIT_AUTHOR_NAME": "mirage test", "GIT_AUTHOR_EMAIL": "test@mirage.invalid",
       "GIT_COMMITTER_NAME": "mirage test", "GIT_COMMITTER_EMAIL": "test@mirage.invalid"}
BUCKETS = {"public": "mirage-public", "completions": "mirage-completions"}


def sh(cmd: list[str], cwd: Path, timeout: int = 1800) -> str:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, **CREDS, **GIT})
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result.stdout + result.stderr


def digest(repo: Path, pattern: str) -> dict[str, str]:
    return {str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(repo.glob(pattern)) if p.is_file()}


@pytest.fixture(scope="module")
def s3():
    pytest.importorskip("moto.server", reason="needs moto[server]")
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("dvc_s3", reason="needs dvc-s3")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=url, aws_access_key_id="testing", aws_secret_access_key="testing",
                          region_name="us-east-1")
    for _ in range(100):
        try:
            client.list_buckets()
            break
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.2)
    for bucket in (*BUCKETS.values(), "mirage-work"):
        client.create_bucket(Bucket=bucket)
    yield url, client
    server.terminate()
    server.wait(timeout=30)


def keys(client, bucket: str, prefix: str = "") -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


def test_dvc_push_clone_pull_over_s3_rebuilds_without_requests(s3, root, tmp_path):
    url, client = s3
    repo = tmp_path / "origin"
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        if (root / rel).is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, repo / rel)
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["slices"]["demo"].update(n_samples=1, max_tokens={"C1": 4, "C2": 4, "C3": 4})
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    sh(["git", "init", "-q"], repo)
    for remote, bucket in BUCKETS.items():  # what the README tells a user to run, plus the local endpoint
        sh(["dvc", "remote", "modify", remote, "url", f"s3://{bucket}/mirage"], repo)
        sh(["dvc", "remote", "modify", remote, "endpointurl", url], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-qm", "scratch"], repo)
    sh(["dvc", "repro", "demo"], repo, timeout=2400)
    sh(["dvc", "push"], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-qm", "demo run"], repo)
    assert keys(client, BUCKETS["public"]) and keys(client, BUCKETS["completions"]), "both remotes got objects"

    store = "results/generations/smollm2-135m/store/**/*.jsonl"
    views = "results/generations/smollm2-135m/demo/**/*.jsonl"
    before = {**digest(repo, store), **digest(repo, views), **digest(repo, "results/metrics/demo/*"),
              **digest(repo, "results/labels/**/*.jsonl")}
    assert digest(repo, store) and digest(repo, views)

    clone = tmp_path / "clone"
    sh(["git", "clone", "-q", str(repo), str(clone)], tmp_path)
    sh(["dvc", "pull", "--with-deps", "demo"], clone)  # a plain pull also wants lite/full, never run here
    assert digest(clone, store) == digest(repo, store)
    out = sh(["snakemake", "--cores", "all", "--forcerun", "generate_C1", "generate_C2", "generate_C3",
              "--", "demo"], clone, timeout=2400)
    assert "generate_C1" in out
    logs = "".join(p.read_text(encoding="utf-8") for p in (clone / "results/logs/generate").rglob("*.log"))
    assert logs.count("sent 0 call(s)") == 3, "each generation job found every key in the pulled store"
    after = {**digest(clone, store), **digest(clone, views), **digest(clone, "results/metrics/demo/*"),
             **digest(clone, "results/labels/**/*.jsonl")}
    assert after == before


def test_kubernetes_profile_storage_settings_run_a_rule_on_s3(s3, root, tmp_path):
    url, client = s3
    work = tmp_path / "k8s"
    shutil.copytree(root / "data", work / "data")
    for rel in ("Snakefile", "params.yaml", "workflow", "envs", "mirage"):
        src = root / rel
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, work / rel)
    for p in (work / "data").rglob("*"):  # pods share no filesystem: inputs live in the bucket
        if p.is_file():
            client.upload_file(str(p), "mirage-work", f"mirage/{p.relative_to(work)}")
    # The kubernetes profile as is (default-storage-provider s3), with the bucket and endpoint given on the
    # command line and the local executor standing in for pods. Targets go first: --storage-* take lists.
    sh(["snakemake", "corpus", "--profile", str(root / "workflow/profiles/kubernetes"), "--executor", "local",
        "--cores", "1", "--default-storage-prefix", "s3://mirage-work/mirage", "--storage-s3-endpoint-url", url,
        "--storage-s3-access-key", "testing", "--storage-s3-secret-key", "testing"], work, timeout=900)
    assert "mirage/results/corpus/prompts.jsonl" in keys(client, "mirage-work", "mirage/results/")
    body = client.get_object(Bucket="mirage-work", Key="mirage/results/corpus/prompts.jsonl")["Body"].read()
    local = tmp_path / "prompts.jsonl"
    sh([sys.executable, "-m", "mirage", "corpus", "--out", str(local)], work)
    assert body == local.read_bytes()
