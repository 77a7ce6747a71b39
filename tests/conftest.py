"""Shared fixtures: the project root and a corpus built once per test session."""

from __future__ import annotations

import json
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
