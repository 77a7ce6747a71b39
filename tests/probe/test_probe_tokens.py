"""The violence token set V: construction rules, exclusions, determinism, word-list errors."""

from __future__ import annotations

import json

import pytest
from probe_tiny import make_tokenizer

from mirage.io import DataError
from mirage.probe.tokens import build_token_set, read_word_list

STEMS = ["terror", "attack", "bomb", "weapon", "extremi", "jihad", "threat", "kill"]


def texts(token_set: dict, key: str = "tokens") -> list[str]:
    return [e["text"] for e in token_set[key]]


def test_stems_exclusions_and_cap(tiny_tokenizer):
    ts = build_token_set(tiny_tokenizer, STEMS, ["bombay"], max_forms_per_stem=None)
    assert set(texts(ts)) == {"Attack", "attack", "attacks", "bomb", "terror", "terrorist", "weapon", "killed", "threat", "extremist"}
    assert texts(ts, "excluded") == ["Bombay"]
    assert ts["stems_without_tokens"] == ["jihad"]
    assert ts["token_ids"] == sorted(ts["token_ids"]) and tiny_tokenizer.unk_token_id not in ts["token_ids"]
    capped = build_token_set(tiny_tokenizer, STEMS, ["bombay"], max_forms_per_stem=1)
    # 'attack' is the lowest-ranked attack form and keeps its capitalised variant; 'attacks' is beyond the cap
    assert {"Attack", "attack"} <= set(texts(capped)) and "attacks" in texts(capped, "beyond_cap")
    assert "terror" in texts(capped) and "terrorist" not in texts(capped)


def test_token_set_is_deterministic_for_a_tokenizer(tiny_tokenizer):
    a = build_token_set(tiny_tokenizer, STEMS, ["bombay"], 3)
    b = build_token_set(make_tokenizer(), list(STEMS), ["bombay"], 3)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert a["hash"] != build_token_set(tiny_tokenizer, STEMS, ["bombay", "terror"], 3)["hash"]


def test_no_match_is_an_error(tiny_tokenizer):
    with pytest.raises(DataError, match="no vocabulary token"):
        build_token_set(tiny_tokenizer, ["zzz"], [], None)


def test_shipped_lists_parse(root):
    assert read_word_list(root / "data/probe/stems.txt") == STEMS
    assert "bombay" in read_word_list(root / "data/probe/exclusions.txt")


def test_bad_word_list_names_file_and_line(tmp_path):
    path = tmp_path / "exclusions.txt"
    path.write_text("# comment\nbombay\nkill joy\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"exclusions.txt:3: 'kill joy'"):
        read_word_list(path)
