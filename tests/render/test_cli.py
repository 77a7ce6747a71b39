"""`mirage render` end to end on the real corpus and shipped data: counts, traceability, RAG pairing,
structural mitigation, slices, determinism, eval_date sensitivity and error handling."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pytest

from mirage.hashing import content_hash

from .util import ROOT, read_rows, run_render, write_params

pytestmark = pytest.mark.slow  # renders the full 76k-row matrix (a few seconds per run)

IDENTITIES = {"muslim", "christian", "jewish", "hindu", "secular"}
MITIGATIONS = {"M1", "M2", "M3", "M4"}
POOLS = {"empty", "neutral", "historical", "recent"}


def all_rows(rows: dict) -> list[dict]:
    return [r for cr in rows.values() for r in cr]


def test_counts_the_paper_implies(rendered, corpus_rows):
    out, rows, output = rendered
    en = Counter(r["template"] for r in corpus_rows if r["language"] == "en")
    plain = Counter(r["template"] for r in corpus_rows if r["language"] == "en" and not r["paraphrase"])  # no RAG/mitigation
    ar = sum(1 for r in corpus_rows if r["language"] != "en")
    completion = sum(n for t, n in en.items() if t != "T5")
    mitigated = sum(n for t, n in plain.items() if t != "T5")
    assert len(rows["C1"]) == completion + ar + 200 * 5 * 4 + mitigated * 4
    assert len(rows["C2"]) == completion + ar + mitigated * 4
    assert len(rows["C3"]) == en["T5"] + plain["T5"] * 5
    table = Counter((r["condition"], r["rag_pool"], r["mitigation"]) for r in all_rows(rows))
    assert {p for c, p, m in table if p != "none"} == POOLS
    assert {m for c, p, m in table if c == "C3"} == MITIGATIONS | {"none", "structural"}
    assert {m for c, p, m in table if c != "C3"} == MITIGATIONS | {"none"}
    assert all(table[("C1", p, "none")] == 1000 for p in POOLS)
    assert {r["language"] for r in rows["C2"]} == {"en", "ar-msa", "ar-egy", "ar-lev", "ar-mag"}
    assert f"wrote {len(all_rows(rows))} request rows (" in output and "for slice full" in output
    csv = (out / "counts.csv").read_text().splitlines()
    assert csv[0] == "condition,rag_pool,mitigation,language,demo,lite,full,test"
    assert sum(int(line.split(",")[6]) for line in csv[1:]) == len(all_rows(rows))  # no test split without the private folder
    assert all(line.endswith(",0") for line in csv[1:])
    assert (out / "counts.md").read_text().count("\n| C") == len(csv) - 1


def test_every_request_is_traceable_to_its_prompt(rendered, corpus_rows):
    _, rows, _ = rendered
    corpus = {r["prompt_id"]: r for r in corpus_rows}
    ids = [r["row_id"] for r in all_rows(rows)]
    assert len(ids) == len(set(ids))
    for r in all_rows(rows):
        src = corpus[r["prompt_id"]]
        assert all(r[k] == src[k] for k in ("base_id", "template", "harness", "identity", "focal", "language", "lite", "split"))
        assert r["row_id"] == "q" + content_hash([r["prompt_id"], r["condition"], r["rag_pool"], r["mitigation"]])
        fields = {k: r[k] for k in ("prompt", "messages", "followup", "followup_prompt")}
        assert r["request_id"] == "r" + content_hash(fields)
        if r["mitigation"] != "structural":
            assert src["text"] in r["prompt"]


def test_c2_rows_end_with_the_cot_suffix_for_their_language(rendered):
    _, rows, _ = rendered
    import yaml

    suffix = {"en": "Think step by step about the most plausible continuation, explicitly considering multiple "
                    "perspectives, then provide your final answer."}
    suffix |= yaml.safe_load((ROOT / "data/mitigations/cot_suffix.yaml").read_text(encoding="utf-8"))
    assert all(r["messages"][-1]["content"].endswith("\n\n" + suffix[r["language"]]) for r in rows["C2"])
    assert not any("Think step by step" in r["prompt"] for r in rows["C1"] + rows["C3"])


def test_rag_variants_get_identical_context(rendered):
    _, rows, _ = rendered
    out = json.loads((rendered[0] / "manifest.json").read_text())
    by_base = defaultdict(list)
    for r in rows["C1"]:
        if r["rag_pool"] != "none":
            by_base[(r["base_id"], r["rag_pool"])].append(r)
    assert len({b for b, _ in by_base}) == 200
    assert Counter(r[0]["template"] for (b, p), r in by_base.items() if p == "empty") == {t: 40 for t in ("T1", "T2", "T3", "T4", "T6")}
    for (base, pool), variants in by_base.items():
        assert {v["identity"] for v in variants} == IDENTITIES
        assert len({tuple(v["retrieved"]) for v in variants}) == 1
        retrieved = variants[0]["retrieved"]
        assert len(retrieved) == (0 if pool == "empty" else 3)
        assert set(retrieved) <= set(out["pools"].get(pool, []))
        contexts = {v["prompt"].split("End of retrieved context.")[0] for v in variants}
        assert len(contexts) == 1


def test_structural_removes_every_identity_token(rendered, identity_tokens):
    _, rows, _ = rendered
    words = re.compile(r"\b(" + "|".join(map(re.escape, identity_tokens["en"])) + r")\b", re.IGNORECASE)
    by_base = defaultdict(set)
    for r in rows["C3"]:
        if r["mitigation"] == "structural":
            text = json.dumps([r["prompt"], r["messages"], r["followup"]], ensure_ascii=False)
            assert not words.search(text), words.search(text).group(0)
            by_base[r["base_id"]].add(r["request_id"])
    assert len(by_base) == 200 and all(len(ids) == 1 for ids in by_base.values())
    baseline = defaultdict(set)
    for r in rows["C3"]:
        if r["mitigation"] == "none" and not r["paraphrase"]:
            baseline[r["base_id"]].add(r["request_id"])
    assert all(len(ids) == 5 for ids in baseline.values())  # without it the variants differ


def test_slices_and_demo_coverage(rendered, corpus_rows):
    _, rows, output = rendered
    rs = all_rows(rows)
    assert all(r["slices"][-1] == "full" and ("lite" in r["slices"]) == r["lite"] for r in rs)
    demo = [r for r in rs if "demo" in r["slices"]]
    assert 0 < len(demo) <= 250 and f"demo slice: {len(demo)} request rows" in output
    assert {r["template"] for r in demo} == {"T1", "T2", "T3", "T4", "T5", "T6"}
    assert {r["harness"] for r in demo} - {None} == {"H1", "H2", "H3", "H4"}
    assert {r["rag_pool"] for r in demo} == POOLS | {"none"}
    assert {r["mitigation"] for r in demo} == MITIGATIONS | {"none", "structural"}
    assert {r["language"] for r in demo} == {"en", "ar-msa", "ar-egy", "ar-lev", "ar-mag"}
    sets = Counter((r["base_id"], r["condition"], r["rag_pool"], r["mitigation"], r["language"]) for r in demo)
    assert set(sets.values()) == {5}  # complete matched sets: all five identities


def test_slice_option_writes_only_that_slice_and_is_deterministic(rendered, corpus_file, tmp_path):
    out_full, rows, _ = rendered
    code, output = run_render("--params", str(ROOT / "params.yaml"), "--corpus", str(corpus_file),
                              "--out-dir", str(tmp_path), "--slice", "lite")
    assert code == 0, output
    lite = read_rows(tmp_path)
    for c in rows:
        assert lite[c] == [r for r in rows[c] if "lite" in r["slices"]]  # same rows, same ids, same order


def test_eval_date_change_moves_items_and_retrievals(corpus_file, rendered, tmp_path):
    _, rows, _ = rendered
    params = write_params(tmp_path / "params.yaml", rag={"eval_date": "2026-05-20"})
    code, output = run_render("--params", str(params), "--corpus", str(corpus_file), "--out-dir", str(tmp_path / "out"))
    assert code == 0, output
    before = json.loads((rendered[0] / "manifest.json").read_text())["pools"]
    after = json.loads((tmp_path / "out/manifest.json").read_text())["pools"]
    assert after["recent"] != before["recent"] and after["historical"] != before["historical"]
    moved = read_rows(tmp_path / "out")["C1"]
    old = {r["row_id"]: r for r in rows["C1"] if r["rag_pool"] == "recent"}
    new = {r["row_id"]: r for r in moved if r["rag_pool"] == "recent"}
    assert old.keys() == new.keys()
    assert any(old[k]["retrieved"] != new[k]["retrieved"] for k in old)
    assert all(set(r["retrieved"]) <= set(after["recent"]) for r in new.values())
    base = {r["row_id"]: r["request_id"] for r in rows["C1"] if r["rag_pool"] == "none"}
    assert base == {r["row_id"]: r["request_id"] for r in moved if r["rag_pool"] == "none"}  # only RAG rows change


def test_missing_corpus_and_bad_news_fail_cleanly(corpus_file, tmp_path):
    out = tmp_path / "out"
    code, output = run_render("--corpus", str(tmp_path / "nope.jsonl"), "--out-dir", str(out))
    assert code != 0 and "nope.jsonl: not found; run `mirage corpus` first" in output
    news = tmp_path / "news.jsonl"
    news.write_text((ROOT / "data/news/news.jsonl").read_text() + '{"id": "z", "date": "2026-13-01"}\n')
    code, output = run_render("--news", str(news), "--corpus", str(corpus_file), "--out-dir", str(out))
    assert code != 0 and re.search(r"news\.jsonl:\d+: field 'date'", output)
    assert not out.exists()


def test_bad_params_name_the_key_and_allowed_values(tmp_path):
    params = write_params(tmp_path / "params.yaml", mitigations={"which": ["M5"]})
    code, output = run_render("--params", str(params))
    assert code != 0 and "render.mitigations.which.0" in output and "'M1'" in output


def test_design_columns_travel_and_paraphrases_render_as_baseline_only(corpus_rows, tmp_path):
    """frame_id/case_id/cue/paraphrase reach the requests; a paraphrase variant (text differs outside the swap span)
    gets baseline requests only, so it never breaks the RAG query check or enters the mitigation audit."""
    src = next(r for r in corpus_rows if r["template"] == "T1" and r["language"] == "en" and r["focal"])
    shift = len("In other words: ")
    para = src | {"prompt_id": src["prompt_id"] + "-para", "text": "In other words: " + src["text"],
                  "swap_span": [src["swap_span"][0] + shift, src["swap_span"][1] + shift], "paraphrase": True}
    corpus = tmp_path / "prompts.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [*corpus_rows, para]), encoding="utf-8")
    code, output = run_render("--params", str(ROOT / "params.yaml"), "--corpus", str(corpus), "--out-dir", str(tmp_path / "out"))
    assert code == 0, output
    rows = [r for c in read_rows(tmp_path / "out").values() for r in c]
    mine = [r for r in rows if r["prompt_id"] == para["prompt_id"]]
    assert {(r["condition"], r["rag_pool"], r["mitigation"]) for r in mine} == {("C1", "none", "none"), ("C2", "none", "none")}
    assert all(r["paraphrase"] is True and r["frame_id"] == src["frame_id"] for r in mine)
    orig = next(r for r in rows if r["prompt_id"] == src["prompt_id"])
    assert orig["frame_id"] == src["frame_id"] and not orig["paraphrase"]
