"""The bounded reader and the name rules, directly (the hostile suite drives them through the commands)."""

from __future__ import annotations

import os

import pytest

from mirage import untrusted
from mirage.io import DataError
from mirage.names import check_judge, check_name, inside


def test_ordinary_yaml_and_json_pass_unchanged():
    text = "base: &b {x: 1, y: [1, 2]}\nother:\n  <<: *b\n  y: [3]\nbig: 123456789012\n"
    assert untrusted.load_yaml(text, "t.yaml") == {"base": {"x": 1, "y": [1, 2]}, "other": {"x": 1, "y": [3]}, "big": 123456789012}
    assert untrusted.loads('{"a": [1, 2.5, "x", null, true], "b": {"c": -0.0}}', "t.json") == \
        {"a": [1, 2.5, "x", None, True], "b": {"c": -0.0}}
    assert untrusted.loads(b'"\\"[[[[\\""', "t.json") == '"[[[["', "brackets inside strings are not nesting"


@pytest.mark.parametrize(("text", "error"), [
    ('{"a": 1, "a": 2}', "t.json: key 'a' appears twice in one object"),
    ("[" * 33 + "]" * 33, "t.json: JSON nested deeper than 32 levels (limits.json_depth)"),
    ("1" * 65, "t.json: JSON number of 65 characters, more than 64 (limits.json_number_chars)"),
    ("[1e400]", "t.json: JSON number 1e400 is out of range (not a finite double)"),
    ("[Infinity]", "t.json: Infinity is not JSON (numbers must be finite)"),
    ("{", "t.json: not valid JSON (Expecting property name enclosed in double quotes at column 2)"),
])
def test_strict_json(text, error):
    with pytest.raises(DataError) as err:
        untrusted.loads(text, "t.json")
    assert str(err.value) == error


def test_a_file_read_stops_at_its_limit_and_never_opens_a_fifo(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    with pytest.raises(DataError, match=r"101 bytes, more than the 100 a file may have \(limits.file_mb\)"):
        untrusted.read_bytes(big, "file", 100, "file_mb")
    os.mkfifo(tmp_path / "pipe")  # opened non-blocking: this returns at once instead of waiting for a writer
    with pytest.raises(DataError, match="a FIFO, not a regular file"):
        untrusted.read_bytes(tmp_path / "pipe", "file", 100, "file_mb")


def test_names_and_paths():
    for good in ("smollm2-135m", "gpt-4o", "Qwen2.5-72B", "a", "m" * 100):
        assert check_name(good) == good
    for bad in ("", "-x", ".x", "a/b", "..", "a b", "m" * 101, "é"):
        with pytest.raises(DataError):
            check_name(bad)
    assert check_judge("jury:gpt-4o,parse-v1") == "jury:gpt-4o,parse-v1"
    assert check_judge(["parse-v1", "parse-v1", "lexicon-v1"]) == ["parse-v1", "parse-v1", "lexicon-v1"]


def test_inside_follows_links(tmp_path):
    root = tmp_path / "board"
    (root / "entries").mkdir(parents=True)
    (root / "entries" / "out").symlink_to(tmp_path)
    assert inside(root, root / "entries" / "a.json") == root / "entries" / "a.json"
    with pytest.raises(DataError, match="outside"):
        inside(root, root / "entries" / "out" / "a.json")
    with pytest.raises(DataError, match="outside"):
        inside(root, root / ".." / "x")
