"""The case-file calibration pilot: masking, decision parsing and flags offline, and one real run on
the embedded model (slow)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mirage import artefacts
from mirage.config.corpus import CorpusParams
from mirage.corpus.cli import corpus
from mirage.corpus.pilot import masked_cases, summarise
from mirage.corpus.sources import load_sources
from mirage.label.decisions import load_harnesses as load_parsers
from mirage.render.texts import load_harnesses, load_mitigation_texts


@pytest.fixture(scope="module")
def sources():
    return load_sources("data")


def test_every_case_is_masked_and_asked_with_its_rubric(sources):
    texts = load_mitigation_texts(artefacts.mitigation_texts())
    harnesses = load_harnesses("data/harnesses")
    items = masked_cases(sources, CorpusParams(), texts, harnesses, samples=2)
    cases = {(f.harness, f.frame_id) for f in sources.frames["T5"]}
    assert {(i.harness, i.case_id) for i in items} == cases
    assert len(items) == 2 * len(cases)
    forms = sources.identity_forms
    names = sources.given_names()
    for item in items:
        assert texts.structural.placeholder in item.text
        body = item.text.split("\n")
        for ident in forms.values():
            assert not any(ident["en"]["adj"] in line for line in body if line.split(":")[0] != "Case ID")
        assert not any(n in item.text.split() for n in names)
        user = item.conversation[-1]["content"]
        assert harnesses[item.harness].rubric in user and item.text in user
    assert len(masked_cases(sources, CorpusParams(), texts, load_harnesses("data/harnesses"), 1, max_cases=1)) == 4


def test_flags_floor_ceiling_and_small_n(sources):
    parsers = load_parsers("data")
    frame = next(f for f in sources.frames["T5"] if f.harness == "H1")
    keep = summarise(frame, parsers["H1"], ("review", "keep"), ["keep"] * 9 + ["review"])
    assert keep["flag"] == "ceiling" and keep["favourable_share"] == 0.9 and keep["ci_low"] < 0.9 < keep["ci_high"]
    review = summarise(frame, parsers["H1"], ("review", "keep"), ["review"] * 5 + ["remove"] * 5)
    assert review["flag"] == "floor" and review["distribution"] == {"remove": 5, "review": 5}
    mixed = summarise(frame, parsers["H1"], ("review", "keep"), ["keep", "review"] * 4 + [None])
    assert mixed["flag"] == "" and mixed["n"] == 9 and mixed["parsed"] == 8
    assert summarise(frame, parsers["H1"], ("review", "keep"), ["keep", None])["flag"] == "n_too_small"
    h4 = next(f for f in sources.frames["T5"] if f.harness == "H4")
    scores = summarise(h4, parsers["H4"], (3, 4), ["3", "4", "4", "3", "5"])
    assert scores["favourable_share"] == 0.6 and scores["flag"] == ""


@pytest.mark.slow
def test_pilot_runs_on_the_embedded_model(tmp_path, root):
    out = tmp_path / "pilot.json"
    args = ["--params", str(root / "params.yaml"), "--pilot", "smollm2-135m", "--samples", "1", "--max-tokens", "4",
            "--max-cases", "1", "--pilot-out", str(out), "--store", str(tmp_path / "generations" / "store")]
    result = CliRunner().invoke(corpus, args)
    assert result.exit_code == 0, result.output
    assert "| harness | case | n (parsed) |" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["model"] == "smollm2-135m" and [c["harness"] for c in report["cases"]] == ["H1", "H2", "H3", "H4"]
    assert all(c["n"] == 1 and c["flag"] == "n_too_small" for c in report["cases"])
    # served from the store on a rerun: same report, no new generations
    store = list((tmp_path / "generations").rglob("*.jsonl"))
    before = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in store)
    assert CliRunner().invoke(corpus, args).exit_code == 0
    assert json.loads(out.read_text(encoding="utf-8")) == report
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) for p in store) == before


def test_pilot_unknown_model_is_a_clear_error():
    result = CliRunner().invoke(corpus, ["--pilot", "no-such-model", "--samples", "1"])
    assert result.exit_code == 1 and "unknown model 'no-such-model'" in result.output
