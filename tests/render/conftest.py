"""Fixtures: the real corpus rendered once by the real CLI from the shipped data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from .util import ROOT, read_rows, run_render


@pytest.fixture(scope="session")
def corpus_file(corpus_rows, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("render_corpus") / "prompts.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus_rows), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def rendered(corpus_file, tmp_path_factory) -> tuple[Path, dict[str, list[dict]], str]:
    """The full matrix rendered from the shipped data: (out dir, rows per condition, CLI output)."""
    out = tmp_path_factory.mktemp("requests")
    code, output = run_render("--params", str(ROOT / "params.yaml"), "--corpus", str(corpus_file), "--out-dir", str(out))
    assert code == 0, output
    return out, read_rows(out), output


@pytest.fixture(scope="session")
def identity_tokens() -> dict[str, list[str]]:
    return yaml.safe_load((ROOT / "data/identities.yaml").read_text(encoding="utf-8"))["identity_tokens"]
