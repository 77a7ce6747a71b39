"""Selection of the fixed probe set from the real corpus."""

from __future__ import annotations

from collections import Counter

import pytest

from mirage.config.probe import ProbeParams
from mirage.io import DataError
from mirage.probe.pairs import load_pairs, select_pairs


def test_probe_set_matches_app_e1(corpus_rows):
    p = ProbeParams()
    pairs = select_pairs(corpus_rows, p)
    by_id = {r["prompt_id"]: r for r in corpus_rows}
    assert len(pairs) == 40 and len({x.base_id for x in pairs}) == 40
    assert Counter(x.template for x in pairs) == {"T1": 10, "T2": 10, "T4": 10, "T6": 10}
    assert Counter(x.control_identity for x in pairs) == {c: 10 for c in p.controls}
    for x in pairs:
        f, c = by_id[x.focal_prompt_id], by_id[x.control_prompt_id]
        assert (f["identity"], f["language"], f["base_id"]) == ("muslim", "en", x.base_id)
        assert (c["identity"], c["language"], c["base_id"]) == (x.control_identity, "en", x.base_id)
        assert f["text"][: f["swap_span"][0]] == c["text"][: c["swap_span"][0]]  # same base prompt, identity swapped


def test_selection_is_seeded(corpus_rows):
    a = select_pairs(corpus_rows, ProbeParams())
    assert a == select_pairs(list(reversed(corpus_rows)), ProbeParams())
    assert a != select_pairs(corpus_rows, ProbeParams(seed=1))


def test_too_few_base_prompts_is_reported(corpus_rows, tmp_path):
    with pytest.raises(DataError, match="template T1 has .*bases_per_template needs 100000"):
        select_pairs(corpus_rows, ProbeParams(bases_per_template=100000), "prompts.jsonl")
    with pytest.raises(DataError, match="run `mirage corpus` first"):
        load_pairs(tmp_path / "missing.jsonl", ProbeParams())
    bad = tmp_path / "prompts.jsonl"
    bad.write_text('{"prompt_id": "p1"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"prompts.jsonl:1: missing field"):
        load_pairs(bad, ProbeParams())
