"""Board policy (issue 25 item 6): a submission never silently replaces an accepted row; `--supersede` replaces it
and keeps both in the history; the manifest's code version and params hash are checked against the board's and
shown when they differ; the page shows each row's verification date and what was recomputed."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

from mirage.cli import cli

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import manifest, unpack, verify, write_manifest  # noqa: E402


def _other_submission(run, tmp_path: Path) -> Path:
    """The same run bundled again by another code version (a resubmission: another manifest, the same numbers)."""
    folder = unpack(run["bundle"], tmp_path / "again")
    m = manifest(folder)
    m["code_version"] = "0.1.1+src.newer"
    write_manifest(folder, m)
    return folder


def _files(board: Path) -> dict[str, str]:
    return {p.relative_to(board).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(board.rglob("*")) if p.is_file()}


def test_a_new_submission_never_silently_replaces_an_accepted_row(run, tmp_path):
    board = tmp_path / "board"
    assert verify(run, run["bundle"], board).exit_code == 0
    before = _files(board)
    again = verify(run, run["bundle"], board)  # the same bundle: nothing changes
    assert again.exit_code == 0 and "already the board's row" in again.output and _files(board) == before
    other = _other_submission(run, tmp_path)
    refused = verify(run, other, board)
    assert refused.exit_code == 2, refused.output
    assert "already has a verified row for smollm2-135m on test" in refused.output and "--supersede" in refused.output
    assert _files(board) == before


def test_supersede_replaces_the_row_and_keeps_the_old_one_in_the_history(run, tmp_path):
    board = tmp_path / "board"
    assert verify(run, run["bundle"], board).exit_code == 0
    old = json.loads((board / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))
    result = verify(run, _other_submission(run, tmp_path), board, "--supersede")
    assert result.exit_code == 0 and "replaced the row" in result.output, result.output
    new = json.loads((board / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))
    assert new["manifest"]["code_version"] == "0.1.1+src.newer" and new["manifest_sha256"] != old["manifest_sha256"]
    (record,) = new["history"]
    assert record["manifest_sha256"] == old["manifest_sha256"]
    kept = json.loads((board / record["entry"]).read_text(encoding="utf-8"))
    assert kept["manifest"] == old["manifest"] and (board / record["bundle"]).is_file()
    assert (board / new["bundle"]).is_file() and new["bundle"] != record["bundle"]
    build = CliRunner().invoke(cli, ["leaderboard", "build", "--board", str(board)])
    assert build.exit_code == 0, build.output
    page = (board / "entries" / "smollm2-135m--test.html").read_text(encoding="utf-8")
    assert "supersedes" in page and old["manifest_sha256"][:12] in page


def test_the_board_checks_code_version_and_params_hash_and_shows_what_was_recomputed(run, tmp_path):
    folder = unpack(run["bundle"], tmp_path / "b")
    m = manifest(folder)
    m["code_version"], m["params_hash"] = "0.0.1+src.elsewhere", "0123456789abcdef"
    write_manifest(folder, m)
    board = tmp_path / "board"
    result = verify(run, folder, board)
    assert result.exit_code == 0, result.output  # recomputation decides; the provenance difference is shown
    entry = json.loads((board / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))
    checks = entry["verified"]["checks"]
    assert checks["code_version"] == {"bundle": "0.0.1+src.elsewhere", "board": checks["code_version"]["board"], "match": False}
    assert checks["params_hash"]["match"] is False and checks["params_hash"]["bundle"] == "0123456789abcdef"
    assert entry["verified"]["date"][:4] >= "2025" and len(entry["verified"]["recomputed"]) == 3
    assert CliRunner().invoke(cli, ["leaderboard", "build", "--board", str(board)]).exit_code == 0
    index = (board / "index.html").read_text(encoding="utf-8")
    assert entry["verified"]["date"][:10] in index and "code version differs" in index and "params hash differs" in index
    assert "labels of 26 completions (judge parse-v3)" in index  # what was recomputed, in the cell's title
    page = (board / "entries" / "smollm2-135m--test.html").read_text(encoding="utf-8")
    assert "<strong>differs</strong>: bundle 0.0.1+src.elsewhere" in page
    assert entry["verified"]["date_source"] == "clock"
    # the untouched bundle matches the board it was made for; dated by its completions, a rebuild is byte-identical
    shutil.rmtree(board)
    assert verify(run, run["bundle"], board, "--date-from-bundle").exit_code == 0
    first = (board / "entries" / "smollm2-135m--test.json").read_bytes()
    entry = json.loads(first)
    assert all(c["match"] for c in entry["verified"]["checks"].values())
    assert entry["verified"]["date"] == entry["manifest"]["created"] and entry["verified"]["date_source"] == "bundle"
    shutil.rmtree(board)
    assert verify(run, run["bundle"], board, "--date-from-bundle").exit_code == 0
    assert (board / "entries" / "smollm2-135m--test.json").read_bytes() == first
