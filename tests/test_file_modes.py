"""Output files are as readable as the umask allows (issue 16 item 6): 0644 under umask 022, not mkstemp's 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from mirage.io import atomic_write, write_json, write_jsonl

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def umask():
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_writers_follow_the_umask(tmp_path: Path, umask, mask: int, expected: int):
    umask(mask)
    with atomic_write(tmp_path / "a.txt") as fh:
        fh.write("x")
    with atomic_write(tmp_path / "b.png", "wb") as fh:
        fh.write(b"\x89PNG")
    write_jsonl(tmp_path / "c.jsonl", [{"a": 1}])
    write_json(tmp_path / "d.json", {"a": 1})
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what open() gives: the reference
    assert mode(plain) == expected
    for name in ("a.txt", "b.png", "c.jsonl", "d.json"):
        assert mode(tmp_path / name) == expected, name


def test_a_real_stage_output_is_world_readable_under_umask_022(tmp_path: Path, umask):
    from mirage.corpus.cli import corpus

    out = tmp_path / "prompts.jsonl"
    result = CliRunner().invoke(corpus, ["--params", str(ROOT / "params.yaml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert mode(out) == 0o644
    assert not list(tmp_path.glob(".*.tmp")), "no temp file left behind"
