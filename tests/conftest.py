"""Shared fixtures: the project root, a corpus built once per test session and the shrunk demo's completions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def corpus_rows(tmp_path_factory) -> list[dict]:
    """The real corpus, built by the real CLI from the shipped data/ into a temp file."""
    from click.testing import CliRunner

    from mirage.corpus.cli import corpus

    out = tmp_path_factory.mktemp("corpus") / "prompts.jsonl"
    result = CliRunner().invoke(corpus, ["--params", str(ROOT / "params.yaml"), "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session", autouse=True)
def _run_from_project_root():
    """Commands resolve params.yaml paths (data/, results/) from the project root, as users run them."""
    import os

    old = os.getcwd()
    os.chdir(ROOT)
    yield
    os.chdir(old)


@pytest.fixture(scope="session")
def demo_made(tmp_path_factory, root) -> Path:
    """A copy of the project holding the embedded model's completions of the shrunk demo (tests/shrunk_demo.py) and
    the judge's evaluation, made by real Snakemake jobs once per test run. The end-to-end tests that start from a
    finished demo copy them in (`shrunk_demo.seed`) rather than each making the same files again. Under pytest-xdist
    the first worker to ask makes them, under a file lock in the run's temp folder that all workers share; the others
    wait and reuse them."""
    from filelock import FileLock

    from tests import shrunk_demo

    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return shrunk_demo.generate(root, tmp_path_factory.mktemp("demo-made"))
    shared = tmp_path_factory.getbasetemp().parent
    repo, done = shared / "demo-made" / "project", shared / "demo-made" / "done"
    with FileLock(str(shared / "demo-made.lock")):
        if not done.exists():
            shrunk_demo.generate(root, repo)
            done.touch()
    return repo
