"""The rebuild promise, end to end on the embedded model in a scratch repository:

run the demo with DVC, push, clone fresh, pull, run the pipeline again -> zero generation requests and
identical metrics and figures; nothing-changed checks report nothing to do; one metrics parameter
reruns only metrics and report.

To keep CI time down the scratch demo is shrunk (tests/shrunk_demo.py): 1 sample of 4 tokens per request, 1 probe
pair per template, 200 bootstrap/permutation resamples. Every rule, condition, pool and mitigation view still runs;
none of the assertions depends on those sizes. The embedded model's completions of the scratch demo and the judge's
evaluation are the test run's shared ones (the `demo_made` fixture: the same keys and inputs, made once by the same
jobs); everything else the demo writes is made by the scratch repository's own `dvc repro demo`, and all of it again
by the clone's forced rerun.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests import shrunk_demo

pytestmark = pytest.mark.slow

GIT_ENV = {"GIT_AUTHOR_NAME": "mirage test", "GIT_AUTHOR_EMAIL": "test@mirage.invalid",
           "GIT_COMMITTER_NAME": "mirage test", "GIT_COMMITTER_EMAIL": "test@mirage.invalid"}


def sh(cmd: list[str], cwd: Path, timeout: int = 900) -> str:
    env = {**os.environ, **GIT_ENV}
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result.stdout + result.stderr


def digest(paths: list[Path]) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(paths)}


def store_records(repo: Path) -> dict[str, int]:
    return {str(p.relative_to(repo)): len(p.read_text(encoding="utf-8").splitlines())
            for p in sorted((repo / "results/generations/smollm2-135m/store").rglob("*.jsonl"))}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory, root, demo_made) -> dict[str, Path]:
    """A git+DVC copy of the project (tracked and untracked-not-ignored files) with remotes in tmp, its shrunk
    demo run by `dvc repro demo` from the shared completions (module docstring)."""
    base = tmp_path_factory.mktemp("rebuild")
    repo = shrunk_demo.copy_project(root, base / "origin")
    shrunk_demo.shrink(repo / "params.yaml")
    shrunk_demo.seed(demo_made, repo)
    sh(["git", "init", "-q"], repo)
    for remote in ("public", "completions"):
        sh(["dvc", "remote", "modify", remote, "url", str(base / "remote" / remote)], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-qm", "scratch"], repo)
    sh(["dvc", "repro", "demo"], repo, timeout=1500)
    return {"base": base, "repo": repo}


def test_demo_push_clone_pull_rebuilds_without_requests(scratch):
    base, repo = scratch["base"], scratch["repo"]
    assert (repo / "results/report/demo/index.html").exists()
    figures = digest(list((repo / "results/figures/demo").glob("*.png")))
    metrics = digest(list((repo / "results/metrics/demo").glob("*")))
    assert figures and "metrics.csv" in metrics

    # Up-to-date checks are cheap and say nothing to do.
    assert "up to date" in sh(["dvc", "status", "demo"], repo).lower()
    assert "Nothing to be done" in sh(["snakemake", "-n", "demo"], repo)

    sh(["dvc", "push", "--with-deps", "demo"], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-qm", "demo run"], repo)
    scratch["pushed"] = True
    assert any((base / "remote" / "completions").rglob("*")), "completions went to their own remote"

    clone = base / "clone"
    sh(["git", "clone", "-q", str(repo), str(clone)], base)
    sh(["dvc", "pull", "--with-deps", "demo"], clone)
    before = store_records(clone)
    assert before == store_records(repo)

    # Rerun every rule, generation included: the store already holds every key.
    out = sh(["snakemake", "--cores", "all", "--forceall", "demo"], clone, timeout=1200)
    assert "Finished job" in out or "steps (100%) done" in out
    assert store_records(clone) == before, "a rerun after dvc pull must not request or store anything new"
    logs = "".join(p.read_text(encoding="utf-8") for p in (clone / "results/logs/generate").rglob("*.log"))
    assert logs.count("sent 0 call(s)") == 3, "each generation job found every key in the pulled store"
    assert digest(list((clone / "results/metrics/demo").glob("*"))) == metrics
    assert digest(list((clone / "results/figures/demo").glob("*.png"))) == figures
    # every DVC output of the stage (store, views, labels, metrics, figures, tables, report, probe) came out identical
    assert "up to date" in sh(["dvc", "status", "demo"], clone).lower()


def test_partial_release_pulls_what_exists_and_names_what_is_absent(scratch):
    """A release that holds only the demo: `make pull` exits 0, fetches the demo and lists the lite/full outputs absent."""
    base, repo = scratch["base"], scratch["repo"]
    assert scratch.get("pushed"), "runs after the push test, which made the demo-only release"
    clone = base / "partial"
    sh(["git", "clone", "-q", str(repo), str(clone)], base)
    # `make pull` with the environment running this suite as its VENV, taken as installed (--assume-old: a fresh
    # clone's pyproject.toml is newer than any stamp), so the target's own commands run, not a second install
    venv = Path(sys.prefix)
    out = sh(["make", "pull", f"VENV={venv}", f"--assume-old={venv / '.installed'}"], clone)
    assert (clone / "results/report/demo/index.html").exists()
    assert "absent from the remotes" in out and "results/report/lite" in out and "results/report/demo" not in out.split("absent")[1]


def test_one_metrics_parameter_reruns_only_metrics_and_report(scratch):
    repo = scratch["repo"]
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["metrics"]["alpha"] = 0.01
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    assert re.search(r"params.yaml:\s+modified:\s+metrics\b", sh(["dvc", "status", "demo"], repo))
    out = sh(["snakemake", "-n", "demo"], repo)
    stats = out.split("Job stats:")[1].split("total")[0]
    jobs = {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", stats, re.M)}
    # the leaderboard bundles recompute metrics too, so they follow; nothing upstream of metrics reruns
    assert jobs == {"metrics", "report", "leaderboard_submit", "leaderboard_verify", "leaderboard_build", "demo"}, out
