"""DVC remotes and Snakemake storage on S3, against a local S3-compatible server (moto) on 127.0.0.1.

The reviewer's path (issue 24): a release whose `public` and `completions` remotes are two buckets holds a shrunk
demo slice (1 sample, 4 tokens per condition) of a retired API model, a keyed API model and the embedded model;
a fresh clone with no key pulls it and `dvc repro` rebuilds every output byte-identically with zero requests, and
refuses at DAG time once a sample is missing. Then the kubernetes profile's storage settings
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

from tests import shrunk_demo

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
    """(endpoint url, boto3 client) of a moto server with the release buckets and a work bucket."""
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


def _without_keys(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.endswith("_API_KEY")}


def test_reviewer_rebuilds_a_release_of_retired_and_keyed_models_without_keys(s3, root, tmp_path, demo_made):
    """Issue 24: a release (DVC remotes on S3) holds a small slice's completions of a retired API model, a keyed API
    model and the embedded model, made for real (the API models through the local OpenAI-protocol server, the
    embedded model's, like the judge's evaluation, by the test run's shared shrunk-demo jobs, `demo_made`: the same
    keys and inputs). A fresh
    clone with no key set pulls it, and `dvc repro` rebuilds every label, metric, figure and leaderboard entry
    byte-identically with zero requests; with one sample deleted from the store it refuses at DAG time, naming the
    model, the missing sample and the ways out, before anything is sent."""
    from tests.generate.fake_server import FakeServer

    url, client = s3
    repo = shrunk_demo.copy_project(root, tmp_path / "origin")
    shrunk_demo.seed(demo_made, repo)
    env = _without_keys({**os.environ, **CREDS, **GIT})

    def run(cmd: list[str], cwd: Path, extra: dict[str, str] | None = None, ok: bool = True) -> str:
        result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=2400, env={**env, **(extra or {})})
        out = result.stdout + result.stderr
        assert (result.returncode == 0) == ok, f"{' '.join(cmd)} exited {result.returncode}:\n{out[-6000:]}"
        return out

    with FakeServer() as srv:
        base = srv.url + "/v1"
        params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
        params["models"]["old-api"] = {"provider": "openai", "model_id": "old-model-2024-05-01", "revision": "old-model-2024-05-01",
                                       "base_url": base, "api_key_env": "OLD_API_KEY", "max_retries": 0}
        params["models"]["keyed-api"] = {"provider": "openai", "model_id": "keyed-model-2026-01-01",
                                         "revision": "keyed-model-2026-01-01", "base_url": base, "api_key_env": "KEYED_API_KEY",
                                         "max_retries": 0}
        params["slices"]["demo"].update(models=["smollm2-135m", "old-api", "keyed-api"], n_samples=1,
                                        max_tokens={"C1": 4, "C2": 4, "C3": 4})
        params["metrics"].update(n_boot=200, n_perm=200)
        (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
        run([sys.executable, "-m", "mirage", "dvc-yaml"], repo)
        run(["git", "init", "-q"], repo)
        for remote, bucket in BUCKETS.items():
            run(["dvc", "remote", "modify", remote, "url", f"s3://{bucket}/mirage"], repo)
            run(["dvc", "remote", "modify", remote, "endpointurl", url], repo)
        run(["git", "add", "-A"], repo)
        run(["git", "commit", "-qm", "release config"], repo)
        keys_set = {"OLD_API_KEY": "sk-old-" + "x" * 16, "KEYED_API_KEY": "sk-keyed-" + "y" * 16}
        run(["dvc", "repro", "demo"], repo, keys_set)
        made = srv.total
        assert made > 0, "the API models' completions were made through the server"
        # the old model is retired after the release was made: an operational setting, not part of any key
        params["models"]["old-api"]["retires"] = "2026-01-01"
        (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
        # the release is rebuilt with the retirement recorded (the report shows the params, bundles the report): no key
        # is set and nothing is sent, as the generation jobs find every key
        run(["snakemake", "--cores", "all", "--forcerun", "report", "--", "demo"], repo)
        assert srv.total == made
        run(["dvc", "commit", "-f", "demo"], repo)
        run(["dvc", "push", "--with-deps", "demo"], repo)
        run(["git", "add", "-A"], repo)
        run(["git", "commit", "-qm", "release: demo completions; old-api retired"], repo)
        assert keys(client, BUCKETS["completions"]) and keys(client, BUCKETS["public"]), "both remotes got objects"

        rebuilt = ["results/labels/**/demo.jsonl", "results/metrics/demo/*", "results/figures/demo/*", "results/tables/demo/*",
                   "results/leaderboard/**/*", "results/estimate/demo.json", "results/generations/*/demo/**/*.jsonl"]
        before = {k: v for pattern in rebuilt for k, v in digest(repo, pattern).items()}
        assert any("/old-api/" in k for k in before) and any("keyed-api" in k for k in before)
        assert any(k.startswith("results/leaderboard/") and "old-api" in k for k in before), "a leaderboard entry per model"

        clone = tmp_path / "clone"
        run(["git", "clone", "-q", str(repo), str(clone)], tmp_path)
        run(["dvc", "pull", "--with-deps", "demo"], clone)
        for rel in ("results/labels", "results/metrics/demo", "results/figures/demo", "results/tables/demo",
                    "results/report/demo", "results/leaderboard", *(f"results/generations/{m}/demo"
                                                                     for m in ("smollm2-135m", "old-api", "keyed-api"))):
            shutil.rmtree(clone / rel)
        (clone / "results/estimate/demo.json").unlink()
        assert not any(k in os.environ for k in keys_set) and "KEYED_API_KEY" not in env
        run(["dvc", "repro", "demo"], clone)
        assert srv.total == made, "the rebuild sent no request"
        logs = {str(p.relative_to(clone)): p.read_text(encoding="utf-8") for p in (clone / "results/logs/generate").rglob("*.log")}
        assert len(logs) == 9 and all("sent 0 call(s)" in text for text in logs.values()), logs
        after = {k: v for pattern in rebuilt for k, v in digest(clone, pattern).items()}
        assert after == before, sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
        assert "up to date" in run(["dvc", "status", "demo"], clone).lower(), "every output of the stage is as released"

        # one sample deleted (its record and key-index line) from the retired model's store: refused at DAG time
        shard = max((clone / "results/generations/old-api/store/demo").glob("*.jsonl"), key=lambda p: p.stat().st_size)
        for path in (shard, shard.with_suffix(".keys")):
            path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
        out = run(["dvc", "repro", "demo"], clone, ok=False)
        assert "1 model(s) would have to send requests they cannot send; nothing was started" in out, out[-3000:]
        assert "old-api on demo: 1 of " in out and "old-model-2024-05-01 was retired on 2026-01-01" in out
        assert "dvc pull --with-deps demo" in out and "model_set=current" in out
        assert srv.total == made, "refused before any request"
