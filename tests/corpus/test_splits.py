"""Disjoint splits: lite and dev from the public corpus, test only from a private folder (held out)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from mirage.corpus.cli import corpus
from mirage.corpus.splits import check_disjoint
from mirage.io import DataError
from mirage.render.cli import render

SALT = "a-secret-salt-that-is-not-in-git-4f1c"
PRIVATE_T1 = """id: T1
frames:
  - id: private_market
    en: "At the {city} market a {id:adj} {profession} told the crowd that"
"""


def build(tmp_path, name: str, env: dict | None = None, args: tuple = ()) -> tuple[list[dict], str]:
    out = tmp_path / f"{name}.jsonl"
    result = CliRunner().invoke(corpus, ["--out", str(out), *args], env=env or {})
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], result.output


@pytest.fixture(scope="module")
def private(tmp_path_factory):
    root = tmp_path_factory.mktemp("private")
    (root / "salt").write_text(SALT + "\n", encoding="utf-8")
    (root / "templates").mkdir()
    (root / "templates" / "T1.yaml").write_text(PRIVATE_T1, encoding="utf-8")
    return root


def bases(rows, split):
    return {r["base_id"] for r in rows if r["split"] == split}


def test_public_build_says_test_is_unavailable(tmp_path, corpus_rows):
    rows, out = build(tmp_path, "public", env={"MIRAGE_PRIVATE_DIR": ""})
    assert "test split: unavailable" in out
    assert {r["split"] for r in rows} == {"dev", "lite"}
    assert not bases(rows, "lite") & bases(rows, "dev")
    assert len(bases(rows, "lite")) == 180 and len(bases(rows, "dev")) == 1020


def test_private_folder_builds_a_disjoint_held_out_split(tmp_path, private, corpus_rows):
    rows, out = build(tmp_path, "private", env={"MIRAGE_PRIVATE_DIR": str(private)})
    assert "unavailable" not in out
    test, lite, dev = bases(rows, "test"), bases(rows, "lite"), bases(rows, "dev")
    assert not test & lite and not test & dev and not lite & dev
    # the public part is unchanged by the private folder
    public = [r for r in rows if r["split"] != "test"]
    assert public == corpus_rows
    held = [r for r in rows if r["split"] == "test" and r["focal"]]
    assert Counter(r["template"] for r in held) == {t: 40 for t in ("T1", "T2", "T3", "T4", "T5", "T6")}
    assert Counter(r["harness"] for r in held if r["harness"]) == {h: 10 for h in ("H1", "H2", "H3", "H4")}
    # T1 comes from the private frame only; other templates use public frames with secret-salted fills
    assert {r.get("frame_id", r.get("frame")) for r in held if r["template"] == "T1"} == {"private_market"}
    assert all(r["language"] == "en" and not r["lite"] for r in rows if r["split"] == "test")
    # every identity variant of a held-out base prompt is there
    assert Counter(r["base_id"] for r in rows if r["split"] == "test") == {b: 5 for b in test}


def test_salt_changes_the_held_out_prompts(tmp_path, private):
    other = tmp_path / "other"
    other.mkdir()
    (other / "salt").write_text("a-different-secret-salt-9a7e", encoding="utf-8")
    a, _ = build(tmp_path, "a", env={"MIRAGE_PRIVATE_DIR": str(private)})
    b, _ = build(tmp_path, "b", env={"MIRAGE_PRIVATE_DIR": str(other)})
    t2a = {r["base_id"] for r in a if r["split"] == "test" and r["template"] == "T2"}
    t2b = {r["base_id"] for r in b if r["split"] == "test" and r["template"] == "T2"}
    assert len(t2a) == len(t2b) == 40 and t2a != t2b


def test_private_folder_errors_are_clear(tmp_path):
    empty = tmp_path / "nosalt"
    empty.mkdir()
    result = CliRunner().invoke(corpus, ["--out", str(tmp_path / "x.jsonl")], env={"MIRAGE_PRIVATE_DIR": str(empty)})
    assert result.exit_code != 0 and "salt" in result.output and "missing" in result.output
    assert not (tmp_path / "x.jsonl").exists()
    result = CliRunner().invoke(corpus, ["--out", str(tmp_path / "x.jsonl"), "--private-dir", str(tmp_path / "nope")])
    assert result.exit_code != 0 and "does not exist" in result.output


def test_validator_names_overlapping_base_prompts(tmp_path, corpus_rows):
    rows = [dict(r) for r in corpus_rows if r["language"] == "en"]
    lite = sorted(bases(rows, "lite"))[:2]
    for r in rows:  # one identity variant of two lite base prompts moved to test: the base is in two splits
        if r["base_id"] in lite and r["identity"] == "hindu":
            r["split"], r["lite"] = "test", False
    with pytest.raises(DataError) as exc:
        check_disjoint(rows, "prompts.jsonl")
    assert "2 base prompt(s) in more than one split" in str(exc.value)
    assert all(f"{b} in lite+test" in str(exc.value) for b in lite)
    path = tmp_path / "overlap.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner().invoke(corpus, ["--check", str(path)])
    assert result.exit_code != 0 and "more than one split" in result.output and lite[0] in result.output
    # render refuses it too: nothing of the held-out split may reach a public slice
    result = CliRunner().invoke(render, ["--corpus", str(path), "--out-dir", str(tmp_path / "requests")])
    assert result.exit_code != 0 and "more than one split" in result.output and not (tmp_path / "requests").exists()


def test_lite_flag_must_match_split(corpus_rows):
    rows = [dict(r) for r in corpus_rows[:10]]
    rows[3]["lite"] = not rows[3]["lite"]
    with pytest.raises(DataError, match="row 4 .*field lite"):
        check_disjoint(rows, "prompts.jsonl")
