"""Corpus depth (issue 15), measured on the corpus the real CLI builds from the shipped data/:
frames, distinct words, near-duplicates, case files, identity cues, paraphrase placebos, Arabic forms."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pytest
import yaml
from click.testing import CliRunner

from mirage.corpus.cli import _agreement_forms, corpus
from mirage.corpus.sources import load_sources
from mirage.corpus.stats import corpus_stats, near_duplicates

COMPLETION = ("T1", "T2", "T3", "T4", "T6")
HARNESSES = ("H1", "H2", "H3", "H4")


@pytest.fixture(scope="module")
def sources():
    return load_sources("data")


@pytest.fixture(scope="module")
def stats(corpus_rows, sources):
    return {s["group"]: s for s in corpus_stats(corpus_rows, _agreement_forms(sources))}


def originals(rows):
    return [r for r in rows if r["language"] == "en" and r["focal"] and not r["paraphrase"]]


@pytest.mark.parametrize("template", COMPLETION)
def test_templates_have_many_frames_words_and_few_near_duplicates(stats, template):
    s = stats[template]
    assert s["bases"] == 200
    assert s["frames"] >= 25
    assert s["distinct_words"] >= 600
    assert s["near_dup_rate"] < 0.02


def test_near_duplicate_measure_is_word_set_jaccard():
    assert near_duplicates(["a b c d e", "a b c d e f"]) == 1  # 5/6 >= 0.8
    assert near_duplicates(["a b c d", "a b c e"]) == 0  # 3/5 < 0.8


def test_every_base_prompt_records_its_frame(corpus_rows):
    for r in corpus_rows:
        assert r["frame_id"]
        assert (r["case_id"] is not None) == (r["template"] == "T5")
        if r["template"] == "T5":
            assert r["case_id"] == r["frame_id"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_each_harness_has_twelve_or_more_distinct_case_files(corpus_rows, stats, harness):
    assert stats[harness]["bases"] == 50
    assert stats[harness]["cases"] >= 12
    one_per_case = {}
    for r in originals(corpus_rows):
        if r["harness"] == harness:
            one_per_case.setdefault(r["case_id"], r["text"])
    assert len(one_per_case) >= 12
    # different facts, not one file relabelled: no two case files are near-duplicates
    assert near_duplicates(list(one_per_case.values())) == 0


def test_case_files_define_boundary_and_identity_field(sources):
    for hid, meta in sources.harness_meta.items():
        assert len(meta["boundary"]) == 2, hid
        for case in meta["cases"]:
            field = case.get("identity_field", meta["identity_field"])
            assert sum(f[0] == field for f in case["file"]) == 1
            assert case.get("ambiguity"), f"{hid} {case['id']}: say why the case is decision-ambiguous"


def test_cue_mix_covers_names_and_attire(stats):
    for t in COMPLETION:
        s = stats[t]
        assert s["cue_noun"] + s["cue_name"] + s["cue_attire"] == 200
        assert s["cue_name"] >= 10 and s["cue_attire"] >= 10, t
    for h in HARNESSES:
        assert stats[h]["cue_name"] >= 5, h


def test_names_are_matched_within_a_base_prompt(corpus_rows, sources):
    entries = {e["key"]: e for e in sources.lexicons["given_name"]}
    named = defaultdict(dict)
    for r in corpus_rows:
        if r["cue"] == "name":
            named[(r["base_id"], r["language"], r["paraphrase"])][r["identity"]] = r["swap_text"]
    assert named
    genders = Counter()
    for (bid, lang, _), by_identity in named.items():
        row = next(r for r in corpus_rows if r["base_id"] == bid and r["cue"] == "name")
        entry = entries[row["fills"]["given_name"]]
        values = entry["en"] if lang == "en" else entry["ar"]
        assert all(values[i] == name for i, name in by_identity.items())
        genders[entry["gender"]] += 1
    assert genders["f"] and genders["m"]


def test_every_identity_has_a_name_in_every_name_entry(sources):
    idents = set(sources.identity_forms)
    for e in sources.lexicons["given_name"] + sources.lexicons["attire"]:
        assert set(e["en"]) == idents, e["key"]


def test_paraphrase_rows_for_every_lite_base(corpus_rows):
    lite = {r["base_id"] for r in originals(corpus_rows) if r["lite"]}
    para = defaultdict(list)
    for r in corpus_rows:
        if r["paraphrase"]:
            para[r["base_id"]].append(r)
    assert set(para) == lite
    originals_by = {(r["base_id"], r["identity"]): r for r in corpus_rows if r["language"] == "en" and not r["paraphrase"]}
    controls = Counter()
    for bid, rows in para.items():
        assert sorted(r["focal"] for r in rows) == [False, True]
        for r in rows:
            orig = originals_by[(bid, r["identity"])]
            assert r["language"] == "en" and r["lite"] and r["split"] == orig["split"]
            assert r["text"] != orig["text"] and r["swap_text"].lower() == orig["swap_text"].lower()
            assert r["prompt_id"] != orig["prompt_id"] and r["frame_id"] == orig["frame_id"]
        controls[next(r["identity"] for r in rows if not r["focal"])] += 1
    assert len(controls) == 4  # the control rotates over all four


def test_arabic_feminine_and_plural_forms_present(corpus_rows, sources):
    forms = sources.identity_forms["muslim"]["ar"]
    for lang in ("ar-msa", "ar-egy", "ar-lev", "ar-mag"):
        used = {r["swap_text"] for r in corpus_rows if r["language"] == lang and r["identity"] == "muslim"}
        assert forms["adj_f"] in used, lang
        assert forms["pl_f"] in used, lang
        assert (forms["pl_nom"] if lang == "ar-msa" else forms["pl"]) in used, lang
    assert {"adj_f", "adj_f_def", "pl", "pl_nom", "pl_f", "dual"} <= set(forms)


def test_dialects_differ_from_msa_in_wording(corpus_rows):
    words = re.compile(r"\w+")
    texts = defaultdict(dict)
    for r in corpus_rows:
        if r["language"] != "en" and r["focal"]:
            texts[r["base_id"]][r["language"]] = set(words.findall(r["text"]))
    assert len(texts) == 400
    for lang in ("ar-egy", "ar-lev", "ar-mag"):
        differ = sum(len(t[lang] ^ t["ar-msa"]) >= 3 for t in texts.values())
        assert differ / len(texts) >= 0.9, lang


def test_stats_cli_prints_and_writes_the_table(tmp_path, corpus_rows):
    out = tmp_path / "prompts.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in corpus_rows), encoding="utf-8")
    result = CliRunner().invoke(corpus, ["--out", str(out), "--stats"])
    assert result.exit_code == 0, result.output
    assert "| T1 | 200 |" in result.output and "| H4 | 50 |" in result.output
    written = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    assert [g["group"] for g in written["groups"]] == [*COMPLETION, *HARNESSES]
    assert (tmp_path / "stats.csv").read_text(encoding="utf-8").startswith("group,template,bases,frames")


def test_stats_cli_without_a_corpus_says_so(tmp_path):
    result = CliRunner().invoke(corpus, ["--out", str(tmp_path / "none.jsonl"), "--stats"])
    assert result.exit_code == 1 and "run `mirage corpus` first" in result.output


def test_paraphrase_must_keep_the_slots(tmp_path, root):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(root / "data", data)
    t3 = data / "templates" / "T3.yaml"
    doc = yaml.safe_load(t3.read_text(encoding="utf-8"))
    doc["frames"][0]["paraphrase"] = "Write about a {id:adj} {profession}."
    t3.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    result = CliRunner().invoke(corpus, ["--data-dir", str(data), "--out", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 1
    assert "T3.yaml: frame 'short_biography' paraphrase must use the same fills" in result.output
